/**
 * The contention bound (docs/decisions/097) with a real worker process on a real redis-server:
 * behind a live holder (this process holds the key for longer than the test), an execution
 * parked with `contentionCap: 3` spends one contention attempt per refusal — the first, then each
 * fallback poll that finds the same holder — and then fails with a `ContentionError`, at the
 * reactor level (nothing ran), inside a `compose` (the composed child's reactor lock), and at a
 * step (the step fails, the run rolls back, the contended step is not compensated).
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import type { ReactorEvent, RunResult } from '../../src/index.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { buildContentionReactors, hooksKey, KEYS, type ContentionWorkerConfig } from './contention-protocol.js';

const WORKER = fileURLToPath(new URL('./contention-worker-process.ts', import.meta.url));
const CAP = 3;
const FALLBACK_MS = 300;
const HOLDER = { owner: 'live-holder', reactor: 'elsewhere' };
const children = new Set<ChildProcess>();
const reactors = buildContentionReactors(() => Promise.reject(new Error('the test process runs no hooks')));

let server: RedisServerHandle;
let runtime: RedisRuntime;
let backend: RedisBackend;
let worker: JsonChild;
const prefix = 'cb';

beforeAll(async () => {
  server = await startRedisServer();
  runtime = createRedisRuntime({ url: server.url, prefix, reactors: Object.values(reactors) });
  backend = createRedisBackend({ url: server.url, prefix });
  const config: ContentionWorkerConfig = {
    url: server.url,
    prefix,
    concurrency: 4,
    background: { contentionCap: CAP, parkFallbackMs: FALLBACK_MS },
  };
  worker = spawnJsonChild(WORKER, config, children);
  await worker.line((v) => v.ready === true);
}, 240_000);

afterAll(async () => {
  if (worker !== undefined) {
    worker.child.kill('SIGTERM');
    await Promise.race([worker.exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  }
  for (const child of children) child.kill('SIGKILL');
  await runtime?.close().catch(() => undefined);
  await backend?.close().catch(() => undefined);
  await server?.dispose();
});

/** The execution's result once it has finished (a generous deadline for a loaded machine, not a bound). */
async function finished(id: string): Promise<RunResult> {
  const done = await runtime.engine.wait(id, { timeoutMs: 60_000, pollMs: 25 });
  if (!done) throw new Error(`${id} did not finish`);
  return done;
}

async function hooks(): Promise<Record<string, number>> {
  const raw = await backend.redis.hgetall(hooksKey(prefix));
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Number(v)]));
}

function parksOf(trace: readonly ReactorEvent[]): Extract<ReactorEvent, { type: 'run.parked' }>[] {
  return trace.filter((e): e is Extract<ReactorEvent, { type: 'run.parked' }> => e.type === 'run.parked');
}

/** Holds `key` for the whole test: a live holder the waiter parks behind. */
async function holdLive(key: string): Promise<void> {
  expect((await backend.coordinator.lockAcquire({ key, holder: HOLDER, ttlMs: 600_000 })).acquired).toBe(true);
}

describe('over contentionCap behind a live holder, with a worker process on Redis', () => {
  test(
    'a reactor lock: failed with a ContentionError after cap attempts; nothing ran',
    { timeout: 90_000 },
    async () => {
      await holdLive(KEYS.reactor);
      const { executionId } = await runtime.engine.start(reactors.reactorLock, {});
      const done = await finished(executionId);
      expect(done.status).toBe('failed');
      if (done.status !== 'failed') return;
      expect(done.error).toMatchObject({
        name: 'ContentionError',
        code: 'contention',
        details: { primitive: 'lock', key: KEYS.reactor },
      });
      expect(done.error.message).toContain(`after ${CAP} contention attempts (cap ${CAP})`);
      expect(done.failedStep).toBeUndefined();
      expect((await backend.store.get(executionId))?.background?.contention).toBe(CAP);
      expect(parksOf(done.trace)).toEqual([expect.objectContaining({ attempt: CAP, repeats: CAP - 1 })]);
      expect((await hooks())['run:work']).toBeUndefined();
    },
  );

  test(
    'inside a compose: the composed child’s lock over the cap fails the execution; the earlier step is undone',
    { timeout: 90_000 },
    async () => {
      await backend.redis.del(hooksKey(prefix));
      await holdLive(KEYS.compose);
      const { executionId } = await runtime.engine.start(reactors.composed, {});
      const done = await finished(executionId);
      expect(done.status).toBe('failed');
      if (done.status !== 'failed') return;
      expect(done.error).toMatchObject({ name: 'ContentionError', code: 'contention', details: { key: KEYS.compose } });
      expect(done.failedStep).toBe('payment');
      expect((await backend.store.get(executionId))?.background?.contention).toBe(CAP);
      expect(parksOf(done.trace)).toEqual([expect.objectContaining({ key: KEYS.compose, attempt: CAP })]);
      const ran = await hooks();
      expect(ran['run:reserve']).toBe(1);
      expect(ran['undo:reserve']).toBe(1);
      expect(ran['run:pay']).toBeUndefined();
      expect(ran['compensate:pay']).toBeUndefined();
    },
  );

  test(
    'a contended step over the cap: the step fails, the run rolls back newest first, the contended step is not compensated',
    { timeout: 90_000 },
    async () => {
      await backend.redis.del(hooksKey(prefix));
      await holdLive(KEYS.step);
      const { executionId } = await runtime.engine.start(reactors.stepLock, {});
      const done = await finished(executionId);
      expect(done.status).toBe('failed');
      if (done.status !== 'failed') return;
      expect(done.failedStep).toBe('charge');
      expect(done.error).toMatchObject({
        name: 'ContentionError',
        code: 'contention',
        details: { primitive: 'lock', key: KEYS.step, step: 'charge' },
      });
      expect((await backend.store.get(executionId))?.background?.contention).toBe(CAP);
      expect(parksOf(done.trace)).toEqual([expect.objectContaining({ step: 'charge', attempt: CAP })]);
      expect(done.trace.filter((e) => e.type === 'step.undone').map((e) => e.step)).toEqual(['audit', 'reserve']);
      expect(done.trace.filter((e) => e.type === 'step.compensated')).toEqual([]);
      expect(await hooks()).toEqual({ 'run:reserve': 1, 'run:audit': 1, 'undo:audit': 1, 'undo:reserve': 1 });
    },
  );
});
