/**
 * Fault: Redis frozen (SIGSTOP) past a lock's TTL while one execution's step holds it and
 * another execution waits for it. The holder stops at its lease's local deadline
 * (docs/decisions/063) — its `ctx.signal` is aborted while Redis is still frozen — so when Redis
 * runs again and admits the waiter, the old holder's body has already returned: no overlap.
 *
 * The two executions run on two engines with a backend (connection, coordinator) each, as two
 * processes would: the waiter's process queues for the key in Redis, the holder never hands it
 * over in memory. Timestamps are this process's monotonic clock, which both bodies share.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, test } from 'vitest';
import { createEngine, reactor, type Engine, type ReactorEvent } from '../../src/index.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { Redis } from 'ioredis';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const backends: RedisBackend[] = [];

afterEach(async () => {
  server.handle.resume(); // never leave the server stopped for the next test (a no-op when it runs)
  await Promise.all(backends.splice(0).map((b) => b.close()));
});

const RUNS = 5;
const TTL = 2_000;
const FREEZE_MS = 5_000;

interface Marks {
  enter?: number;
  exit?: number;
  reason?: unknown;
}

function engineOnItsOwnBackend(): Engine {
  const backend = createRedisBackend({ url: server.url, prefix: 'freeze' });
  backends.push(backend);
  return createEngine({ store: backend.store, coordinator: backend.coordinator });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** A reactor whose one step takes the lock `key`; the body records when it started and when it stopped. */
function lockedStep(key: string, marks: Marks, holdsUntilAborted: boolean) {
  return reactor('frozen-redis')
    .step('work', {
      lock: { key: () => key, ttl: TTL, wait: '30s' },
      run: async (_args, ctx) => {
        marks.enter = performance.now();
        if (holdsUntilAborted) {
          // Works until told to stop (an aborted I/O call), at most 20 s.
          await new Promise<void>((resolve) => {
            const cap = setTimeout(resolve, 20_000);
            ctx.signal.addEventListener('abort', () => (clearTimeout(cap), resolve()), { once: true });
          });
        }
        marks.reason = ctx.signal.reason;
        marks.exit = performance.now();
        if (ctx.signal.aborted) throw ctx.signal.reason;
        return 'done';
      },
    })
    .build();
}

/** How Redis is made to stop answering for `FREEZE_MS`: SIGSTOP of the server, or `CLIENT PAUSE` (every client waits). */
type Freeze = (ms: number) => Promise<void>;

const sigstop: Freeze = async (ms) => {
  server.handle.pause();
  await sleep(ms);
  server.handle.resume();
};

const clientPause: Freeze = async (ms) => {
  const admin = new Redis(server.url);
  try {
    await admin.call('CLIENT', 'PAUSE', String(ms), 'ALL');
    await sleep(ms);
  } finally {
    admin.disconnect();
  }
};

describe("Redis frozen past a held lock's TTL", () => {
  test(
    `SIGSTOP: the old holder's body has stopped before the next holder's body starts (${RUNS} runs)`,
    { timeout: 120_000 },
    () => frozenRuns(RUNS, sigstop),
  );
  test(
    "CLIENT PAUSE: the old holder's body has stopped before the next holder's body starts (2 runs)",
    { timeout: 60_000 },
    () => frozenRuns(2, clientPause),
  );
});

async function frozenRuns(runs: number, freeze: Freeze): Promise<void> {
  {
    const holderEngine = engineOnItsOwnBackend();
    const waiterEngine = engineOnItsOwnBackend();
    const summary: { run: number; holderStoppedAfterFreezeMs: number; gapMs: number }[] = [];
    for (let run = 1; run <= runs; run++) {
      const key = `acct:${freeze === sigstop ? 'stop' : 'pause'}:${run}`;
      const a: Marks = {};
      const b: Marks = {};
      const waiting: ReactorEvent[] = [];
      const unsubscribe = waiterEngine.subscribe((e) => {
        if (e.type === 'coordination.waiting') waiting.push(e);
      });
      const runA = holderEngine.run(lockedStep(key, a, true), {});
      await until(() => a.enter !== undefined, 'the holder to enter');
      const runB = waiterEngine.run(lockedStep(key, b, false), {});
      await until(() => waiting.length > 0, 'the waiter to wait');
      unsubscribe();

      const frozenAt = performance.now();
      await freeze(FREEZE_MS);
      const thawedAt = performance.now();

      const [resultA, resultB] = await Promise.all([runA, runB]);
      expect(b.enter, `run ${run}: the waiter entered`).toBeDefined();
      expect(a.exit, `run ${run}: the holder stopped`).toBeDefined();
      // The holder was told while Redis was still frozen (without a local deadline it learns at the thaw, from Redis).
      expect(a.exit!, `run ${run}: the holder stopped before Redis ran again`).toBeLessThan(thawedAt);
      expect(a.reason, `run ${run}: the holder's signal was aborted for the lost hold`).toMatchObject({
        code: 'hold_lost',
      });
      // No overlap: the old holder's body returned before the new holder's body started.
      expect(a.exit!, `run ${run}: no overlap`).toBeLessThan(b.enter!);
      expect(resultA.status, `run ${run}: the holder's run`).toBe('failed');
      expect(resultB.status, `run ${run}: the waiter's run`).toBe('completed');
      summary.push({
        run,
        holderStoppedAfterFreezeMs: Math.round(a.exit! - frozenAt),
        gapMs: Math.round((b.enter! - a.exit!) * 10) / 10,
      });
    }
    console.log(`redis-freeze: ${JSON.stringify(summary)}`);
    expect(summary).toHaveLength(runs);
  }
}
