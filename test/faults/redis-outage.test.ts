/**
 * Fault: a Redis outage shorter than the outage tolerance is ridden out. A real `redis-server`
 * (AOF, `appendfsync always`) is SIGKILLed while calls are in flight and restarted on the same
 * port a few seconds later: store and coordinator calls in flight resolve once it is back — a
 * re-entrant lock acquire or a release whose reply was lost is counted once, not twice — and
 * worker-mode executions all complete, none failed. An outage longer than the tolerance fails a
 * call with the error of its backend, naming the operation.
 *
 * No assertion depends on how fast the machine is: only outcomes, counts and lower bounds.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime } from '../../src/bullmq.js';
import { reactor } from '../../src/dsl/reactor.js';
import { CoordinationUnavailableError, StoreUnavailableError } from '../../src/errors.js';
import { RECORD_VERSION, type ExecutionRecord } from '../../src/ports/store.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const DOWN_MS = 2_500;
const TOLERANCE_MS = 10_000;

let server: RedisServerHandle;
beforeAll(async () => {
  server = await startRedisServer({ persistence: 'aof' });
});
afterAll(async () => {
  await server.dispose();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** SIGKILLs the server and starts it again on the same port `DOWN_MS` later; resolves once it runs again. */
async function outage(): Promise<{ readonly killedAt: number; readonly restartedAt: number }> {
  // Frozen first, so calls are surely in flight (unanswered) when the server is killed: every call
  // sent while it is frozen waits. `killedAt` is the kill itself: a call sent before it (during the
  // freeze, or answered by nobody before it) and answered after the restart spanned the crash.
  server.pause();
  await sleep(200);
  const killedAt = Date.now();
  await server.kill();
  await sleep(DOWN_MS);
  await server.restart();
  return { killedAt, restartedAt: Date.now() };
}

function record(id: string, n: number): ExecutionRecord {
  return {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor: 'outage',
    status: 'running',
    input: { n },
    steps: {},
    rollbackFailures: [],
    createdAt: 1,
    updatedAt: n,
  };
}

describe('an outage shorter than the tolerance', () => {
  test('store and coordinator calls in flight at the crash resolve once Redis is back; counted calls count once', async () => {
    const backend = createRedisBackend({ url: server.url, prefix: 'outage-calls', outageToleranceMs: TOLERANCE_MS });
    const { store, coordinator: c } = backend;
    let killedAt = Number.POSITIVE_INFINITY;
    let restartedAt = Number.POSITIVE_INFINITY;
    let stop = false;
    const calls: { readonly sent: number; readonly done: number }[] = []; // counted once the outage's times are known
    let afterRestart = 0; // rounds completed wholly after the restart
    const timed = async <T>(call: () => Promise<T>): Promise<T> => {
      const sent = Date.now();
      const value = await call();
      calls.push({ sent, done: Date.now() });
      return value;
    };
    // Each loop owns its keys: every answer is known in advance, so a call counted twice (a
    // re-entry or a release sent again after its reply was lost) shows as a wrong nesting.
    const loop = async (i: number): Promise<number> => {
      let rounds = 0;
      for (let n = 1; !stop; n++) {
        const startedAt = Date.now();
        const id = `e${i}`;
        await timed(() => store.save(record(id, n)));
        expect((await timed(() => store.get(id)))?.updatedAt).toBe(n);
        const key = `k${i}`;
        const owner = `o${i}`;
        expect(await timed(() => c.lockAcquire({ key, holder: { owner }, ttlMs: 60_000 }))).toMatchObject({
          acquired: true,
          nesting: 1,
        });
        expect(await timed(() => c.lockAcquire({ key, holder: { owner }, ttlMs: 60_000 }))).toMatchObject({
          acquired: true,
          nesting: 2,
        });
        expect(await timed(() => c.lockRelease(key, owner))).toMatchObject({ released: true, nesting: 1 });
        expect(await timed(() => c.lockRelease(key, owner))).toMatchObject({ released: true, nesting: 0 });
        expect(
          await timed(() => c.semaphoreAcquire({ key, holder: { owner }, limit: 1, ttlMs: 60_000 })),
        ).toMatchObject({ acquired: true, nesting: 1 });
        expect(await timed(() => c.semaphoreRelease(key, owner))).toMatchObject({ released: true, nesting: 0 });
        rounds++;
        if (startedAt > restartedAt) afterRestart++;
      }
      return rounds;
    };
    try {
      let failure: unknown;
      const loops = Array.from({ length: 12 }, (_, i) => loop(i).catch((error: unknown) => ((failure ??= error), 0)));
      await sleep(300);
      ({ killedAt, restartedAt } = await outage());
      // Let the loops finish a few rounds on the restarted server (or stop at the first wrong answer).
      while (afterRestart < 24 && failure === undefined) await sleep(20);
      stop = true;
      const rounds = await Promise.all(loops);
      if (failure !== undefined) throw failure;
      expect(rounds.every((r) => r > 0)).toBe(true);
      const spanning = calls.filter((call) => call.sent < killedAt && call.done >= killedAt + DOWN_MS).length; // sent before the kill, answered once the server was back
      expect(spanning).toBeGreaterThan(0);
      for (let i = 0; i < 12; i++) {
        expect(await c.lockState(`k${i}`)).toBeUndefined();
        expect((await c.semaphoreState(`k${i}`, 1)).holders).toEqual([]);
      }
    } finally {
      stop = true;
      await backend.close();
    }
  }, 60_000);

  test('executions in worker mode (3 steps, a step lock) all complete across the crash: none failed', async () => {
    const finishedAt = new Map<string, number>();
    const r = reactor('outage-run')
      .input({ account: z.string() })
      .step('a', { run: () => 1 })
      .step('b', {
        waitFor: ['a'],
        lock: { key: ({ account }) => `outage:${account}` },
        args: ($) => ({ account: $.input('account') }),
        run: async () => {
          await sleep(100);
          return 2;
        },
      })
      .step('c', {
        waitFor: ['b'],
        run: (_args, ctx) => {
          finishedAt.set(ctx.executionId, Date.now());
          return 3;
        },
      })
      .background('all')
      .returns('c');
    const runtime = createRedisRuntime({
      url: server.url,
      prefix: 'outage-run',
      reactors: [r],
      outageToleranceMs: TOLERANCE_MS,
    });
    try {
      runtime.startWorker({ concurrency: 8 });
      // 40 executions over 5 accounts: the lock serializes b, so they take > 0.8 s however fast the machine.
      const started = await Promise.all(
        Array.from({ length: 40 }, (_, i) => runtime.engine.start(r, { account: `acct-${i % 5}` })),
      );
      await sleep(300);
      const { restartedAt } = await outage();
      const results = await Promise.all(started.map((s) => runtime.engine.wait(s.executionId, { timeoutMs: 60_000 })));
      const statuses = results.map((result) => result.status);
      expect(statuses.filter((s) => s === 'failed')).toEqual([]);
      expect(statuses.every((s) => s === 'completed')).toBe(true);
      // The crash came while work was left: some executions finished after the restart.
      expect([...finishedAt.values()].some((at) => at >= restartedAt)).toBe(true);
      for (const s of started) expect((await runtime.engine.result(s.executionId))?.status).toBe('completed');
    } finally {
      await runtime.close();
    }
  }, 120_000);
});

describe('an outage longer than the tolerance', () => {
  test('fails a plain store call with StoreUnavailableError, a coordinator call with CoordinationUnavailableError, each naming its operation', async () => {
    const backend = createRedisBackend({ url: server.url, prefix: 'outage-long', outageToleranceMs: 1_000 });
    try {
      await backend.store.save(record('x', 1));
      await server.kill();
      const saving = await backend.store.save(record('x', 2)).catch((error: unknown) => error);
      expect(saving).toBeInstanceOf(StoreUnavailableError);
      expect(saving).toMatchObject({ code: 'store_unavailable', details: { operation: 'store-save' } });
      expect((saving as Error).message).toMatch(
        /^execution store unavailable during store save \(Redis did not answer for \d+\.\d s\): /,
      );
      expect((saving as StoreUnavailableError).details.waitedMs).toBeGreaterThanOrEqual(1_000);

      const reading = await backend.store.get('x').catch((error: unknown) => error);
      expect(reading).toMatchObject({
        name: 'StoreUnavailableError',
        code: 'store_unavailable',
        details: { operation: 'store-get' },
      });

      const locking = await backend.coordinator
        .lockAcquire({ key: 'k', holder: { owner: 'o' }, ttlMs: 10_000 })
        .catch((error: unknown) => error);
      expect(locking).toBeInstanceOf(CoordinationUnavailableError);
      expect(locking).toMatchObject({ code: 'coordination_unavailable', details: { operation: 'lock-acquire' } });
      expect((locking as Error).message).toContain('during lock acquire');
    } finally {
      await server.restart();
    }
    // Back: the same backend works again, and the write acknowledged before the crash survived (AOF always).
    expect((await backend.store.get('x'))?.updatedAt).toBe(1);
    expect(await backend.coordinator.lockAcquire({ key: 'k', holder: { owner: 'o' }, ttlMs: 10_000 })).toMatchObject({
      acquired: true,
    });
    await backend.close();
  }, 60_000);
});
