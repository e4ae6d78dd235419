/**
 * Cancel cascades on Redis + BullMQ with two real worker processes
 * (`fixtures/cascade-worker-process.ts`) and a throwaway redis-server (docs/decisions/087): an
 * operator's cancel of a parent with 3 running children ends all four `cancelled`, every child's
 * undo before the parent's (one Redis list is the sequence across the processes); a parent queued
 * between its jobs is rolled back by the operator's process, which cancels the children running in
 * the workers first; the parent's `deadline` cascades the same way. Each cancel's reason reaches
 * the process that runs the execution (decision 106): the parent ends with the operator's reason,
 * each child with "its parent <id> was cancelled".
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { CHILD_LINE_TIMEOUT_MS, spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { until } from '../background/helpers.js';
import { CASCADE_DEADLINE_MS, cascadeReactors } from './fixtures/cascade-reactors.js';

/** How long a step of the scenario is waited for: a deadline for a loaded machine, not a bound. */
const WAIT_MS = CHILD_LINE_TIMEOUT_MS;
/** A test's own deadline: the workers' start, the run to its holding point, the deadline, the ends. */
const TEST_TIMEOUT_MS = 4 * WAIT_MS + CASCADE_DEADLINE_MS;

const WORKER = fileURLToPath(new URL('./fixtures/cascade-worker-process.ts', import.meta.url));
const server = useRedisServer();
const children = new Set<ChildProcess>();
const closers: (() => Promise<unknown>)[] = [];
let redis: Redis;
let seq = 0;

beforeAll(() => {
  redis = new Redis(server.url);
  closers.push(async () => redis.disconnect());
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

interface Scenario {
  readonly runtime: RedisRuntime;
  /** The reactors the operator's runtime knows (their steps log to the list too). */
  readonly reactors: ReturnType<typeof cascadeReactors>;
  readonly workers: JsonChild[];
  readonly log: string;
}

/** Two worker processes and an operator's runtime (no worker) on a fresh prefix and log list. */
async function scenario(name: string): Promise<Scenario> {
  const prefix = `${name}${++seq}`;
  const log = `${prefix}:test-log`;
  // The operator's process logs too: a queued parent's rollback runs here.
  const reactors = cascadeReactors(async (entry) => {
    await redis.rpush(log, `${process.pid} ${Date.now()} ${entry}`);
  });
  const { parent, deadlined, retrying } = reactors;
  const runtime = createRedisRuntime({ url: server.url, prefix, reactors: [parent, deadlined, retrying] });
  closers.push(() => runtime.close());
  const workers = [0, 1].map(() => spawnJsonChild(WORKER, { url: server.url, prefix, log }, children));
  await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
  return { runtime, reactors, workers, log };
}

/** The logged entries, in their order across the processes. */
async function entries(log: string): Promise<string[]> {
  return (await redis.lrange(log, 0, -1)).map((line) => line.split(' ').slice(2).join(' '));
}

/** Every child's undo is logged before the parent's. */
function expectChildrenFirst(logged: readonly string[]): void {
  const parentUndo = logged.indexOf('parent.undo');
  expect(parentUndo, logged.join(', ')).toBeGreaterThan(-1);
  for (const n of [1, 2, 3]) {
    const undo = logged.indexOf(`child${n}.undo`);
    expect(undo, `child${n} undone: ${logged.join(', ')}`).toBeGreaterThan(-1);
    expect(undo, `child${n} undone before the parent: ${logged.join(', ')}`).toBeLessThan(parentUndo);
  }
}

const holding = async (log: string): Promise<boolean> =>
  (await entries(log)).filter((e) => e.endsWith('.holding')).length === 4;

describe('cancel cascades on Redis, two worker processes', () => {
  test(
    'cancel of a parent with 3 running children: all end cancelled, the children rolled back first',
    async () => {
      const s = await scenario('cc');
      const { parent } = s.reactors;
      const started = await s.runtime.engine.start(parent, {});
      await until(() => holding(s.log), WAIT_MS, 'parent and 3 children holding');
      const ids = ['c1', 'c2', 'c3'].map((c) => `${started.executionId}~${c}`);
      for (const id of ids) expect((await s.runtime.engine.result(id))?.status).not.toBe('cancelled');
      await s.runtime.engine.cancel(started.executionId, { reason: 'the customer withdrew the order' });
      // Each reason travels with its cancel to the worker process that runs the execution (decision 106).
      expect(await s.runtime.engine.wait(started.executionId, { timeoutMs: WAIT_MS, pollMs: 20 })).toMatchObject({
        status: 'cancelled',
        reason: 'the customer withdrew the order',
      });
      for (const id of ids)
        expect(await s.runtime.engine.wait(id, { timeoutMs: WAIT_MS, pollMs: 20 })).toMatchObject({
          status: 'cancelled',
          reason: `its parent ${started.executionId} was cancelled`,
        });
      expectChildrenFirst(await entries(s.log));
      const trace = (await s.runtime.engine.result(started.executionId))?.trace ?? [];
      const cascaded = trace.filter((e) => e.type === 'async.child_cancelled');
      expect(cascaded.map((e) => (e.type === 'async.child_cancelled' ? e.status : '')).sort()).toEqual([
        'cancelled',
        'cancelled',
        'cancelled',
      ]);
      // Every step ran in the worker processes.
      const pids = new Set((await redis.lrange(s.log, 0, -1)).map((line) => line.split(' ')[0]));
      expect([...pids].every((pid) => s.workers.some((w) => String(w.pid) === pid))).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'a parent queued between its jobs is cancelled by the operator: its children in the workers first',
    async () => {
      const s = await scenario('cq');
      const { retrying } = s.reactors;
      const started = await s.runtime.engine.start(retrying, {});
      await until(
        async () =>
          (await entries(s.log)).filter((e) => e === 'child.holding').length === 3 &&
          (await s.runtime.engine.result(started.executionId))?.status === 'queued',
        WAIT_MS,
        '3 children holding, the parent waiting for its retry',
      );
      const cancelled = await s.runtime.engine.cancel(started.executionId); // rolled back in this process
      expect(cancelled.status).toBe('cancelled');
      for (const c of ['c1', 'c2', 'c3'])
        expect(await s.runtime.engine.result(`${started.executionId}~${c}`)).toMatchObject({
          status: 'cancelled',
          reason: `its parent ${started.executionId} was cancelled`,
        });
      expectChildrenFirst(await entries(s.log));
    },
    TEST_TIMEOUT_MS,
  );

  test(
    "the parent's deadline cascades the same way",
    async () => {
      const s = await scenario('cd');
      const { deadlined } = s.reactors;
      const started = await s.runtime.engine.start(deadlined, {});
      await until(() => holding(s.log), WAIT_MS, 'parent and 3 children holding');
      const done = await s.runtime.engine.wait(started.executionId, { timeoutMs: WAIT_MS, pollMs: 20 });
      expect(done).toMatchObject({ status: 'cancelled', cause: { code: 'deadline_exceeded' } });
      for (const c of ['c1', 'c2', 'c3'])
        expect(
          await s.runtime.engine.wait(`${started.executionId}~${c}`, { timeoutMs: WAIT_MS, pollMs: 20 }),
        ).toMatchObject({ status: 'cancelled' });
      expectChildrenFirst(await entries(s.log));
    },
    TEST_TIMEOUT_MS,
  );
});
