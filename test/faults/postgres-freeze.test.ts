/**
 * PostgreSQL frozen (SIGSTOP to the postmaster and every backend) past a lock's TTL while one
 * execution's step holds it and another execution waits for it. The holder stops at its lease's
 * local deadline (docs/decisions/063): its `ctx.signal` aborts while PostgreSQL is still frozen,
 * so when the server runs again and admits the waiter, the old holder's body has already returned.
 *
 * Causal: the server is thawed only once the holder's body has returned (waited for while the
 * server is frozen, with a bound far beyond the TTL), and the order of the two bodies is read
 * from one clock, this process's.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createEngine, reactor, type Engine, type ReactorEvent } from '../../src/index.js';
import { PostgresCoordinator, PostgresStore } from '../../src/storage/postgres/index.js';
import { usePostgresServer } from '../support/use-postgres-server.js';

const server = usePostgresServer();
const TTL = 2_000;
const RUNS = 3;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const store = new PostgresStore({ connection: server.url, migrate: true });
  await store.ready();
  await store.close();
});

afterEach(() => server.handle.thaw()); // never leave the server stopped (a no-op when it runs)

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

interface Marks {
  enter?: number;
  exit?: number;
  reason?: unknown;
}

/** An engine on a store and a coordinator of its own (its own pool and LISTEN connection), as another process would have. */
function engineOnItsOwnPool(): Engine {
  const store = new PostgresStore({ connection: server.url });
  const coordinator = new PostgresCoordinator({ connection: store.pool });
  closers.push(
    () => store.close(),
    () => coordinator.close(),
  );
  return createEngine({ store, coordinator });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** One step under the lock `key`; the body records when it started and stopped (and why). */
function lockedStep(key: string, marks: Marks, holdsUntilAborted: boolean) {
  return reactor('frozen-postgres')
    .step('work', {
      lock: { key: () => key, ttl: TTL, wait: '2m' },
      run: async (_args, ctx) => {
        marks.enter = performance.now();
        if (holdsUntilAborted)
          await new Promise<void>((resolve) => {
            const cap = setTimeout(resolve, 120_000);
            ctx.signal.addEventListener('abort', () => (clearTimeout(cap), resolve()), { once: true });
          });
        marks.reason = ctx.signal.reason;
        marks.exit = performance.now();
        if (ctx.signal.aborted) throw ctx.signal.reason;
        return 'done';
      },
    })
    .build();
}

describe("PostgreSQL frozen past a held lock's TTL", () => {
  test(`the holder's signal aborts while the server is frozen; the next holder starts after it stopped (${RUNS} runs)`, async () => {
    const holderEngine = engineOnItsOwnPool();
    const waiterEngine = engineOnItsOwnPool();
    for (let run = 1; run <= RUNS; run++) {
      const key = `pg-freeze:${run}`;
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

      server.handle.freeze();
      // While the server is frozen, the holder's lease runs out on its local clock and its body is told.
      await until(() => a.exit !== undefined, "the holder's body to stop while PostgreSQL is frozen", 120_000);
      expect(b.enter, `run ${run}: nobody entered while the server was frozen`).toBeUndefined();
      server.handle.thaw();

      const [resultA, resultB] = await Promise.all([runA, runB]);
      expect(a.reason, `run ${run}: the holder's signal was aborted for the lost hold`).toMatchObject({
        code: 'hold_lost',
      });
      expect(resultA.status, `run ${run}: the holder did not complete`).not.toBe('completed');
      expect(resultB.status, `run ${run}: the waiter completed`).toBe('completed');
      // No overlap: the old holder's body returned before the new holder's body started.
      expect(b.enter!, `run ${run}: the waiter entered after the holder stopped`).toBeGreaterThan(a.exit!);
    }
  }, 600_000);
});
