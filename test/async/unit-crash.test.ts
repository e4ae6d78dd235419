/**
 * Decision 011 on Redis + BullMQ with a real worker process (issue 5 gap 4): a worker killed with
 * SIGKILL while it runs a unit's compensate. BullMQ redelivers the stalled unit job to another
 * worker, which finds the unit record `rolling_back` and ends it `failed` with
 * `async_unit_interrupted` — without running the compensate a second time.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import { CHILD_LINE_TIMEOUT_MS, spawnJsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { eventsOf, until } from '../background/helpers.js';
import { CRASH_RUNTIME, crashReactor } from './fixtures/compensate-crash.js';

const VICTIM = fileURLToPath(new URL('./fixtures/compensate-crash-worker.ts', import.meta.url));

let server: RedisServerHandle;
const children = new Set<ChildProcess>();
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await server?.dispose();
});

describe('a worker dies mid-compensate of a unit', () => {
  test(
    'SIGKILL during the compensate: the redelivered unit ends failed (async_unit_interrupted) and the compensate is not repeated',
    { timeout: 3 * CHILD_LINE_TIMEOUT_MS },
    async () => {
      const prefix = `crash${Date.now()}`;
      const rescued: string[] = [];
      const runtime = createRedisRuntime({
        url: server.url,
        prefix,
        reactors: [crashReactor(async (unitId) => void rescued.push(unitId))],
        ...CRASH_RUNTIME,
      });
      closers.push(() => runtime.close());
      const victim = spawnJsonChild(VICTIM, { url: server.url, prefix }, children);
      await victim.line((v) => v.ready === true);

      // The dispatcher runs here (nobody reads the unit, so it completes at once); the victim takes the unit's job.
      const parent = await runtime.engine.run(
        crashReactor(async () => undefined),
        {},
      );
      expect(parent.status).toBe('completed');
      const unitId = `${parent.executionId}~charge`;
      await victim.line((v) => v.compensating === unitId);
      expect((await runtime.engine.store.get(unitId))?.status).toBe('rolling_back');

      victim.child.kill('SIGKILL');
      expect((await victim.exited).signal).toBe('SIGKILL');
      runtime.startWorker({ concurrency: 2 }); // the rescuer: BullMQ hands it the stalled unit job

      const record = await until(
        async () => {
          const r = await runtime.engine.store.get(unitId);
          return r?.status === 'failed' ? r : undefined;
        },
        CHILD_LINE_TIMEOUT_MS,
        'the redelivered unit to end',
      );
      expect(record.error).toMatchObject({ code: 'async_unit_interrupted', details: { unitId } });
      expect(record.error?.message).toContain('the compensate is not repeated');
      expect(rescued).toEqual([]); // at most once: the rescuer never ran it again
      expect(victim.lines((v) => v.compensating !== undefined)).toHaveLength(1);
      const result = await runtime.engine.result(unitId);
      expect(result).toMatchObject({ status: 'failed', error: { code: 'async_unit_interrupted' } });
      expect(eventsOf(result?.trace ?? [], 'run.failed')).toHaveLength(1);
    },
  );
});
