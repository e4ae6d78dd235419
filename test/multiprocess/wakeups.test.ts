/**
 * Release wake-ups across real worker processes (docs/decisions/112): each round starts three
 * fresh worker processes (`step-worker-process.ts`) on one throwaway redis-server and runs
 * executions whose `charge` step locks its account. A worker waits 20 ms in process for a busy
 * key (on the key's release notification, or a grant from another process's release), then
 * parks the execution with a 60 s fallback. Every park must end with `run.woken` (a release
 * promoted its job), never with its fallback: the rounds finish long before any fallback is due,
 * and the workers count one `run.woken` per park — also when the promoted job found the lease
 * still held by the job that parked (a slow machine) and came back as a `busy` job.
 * The one designed exception: a park made while its process's wake-ups were degraded gets a
 * fallback of at most 1 s (its `run.queued` says so), which may come due before the release; only
 * such parks may end without `run.woken`.
 *
 * The first contention of a fresh worker opens its subscriber connection, and its first
 * subscriptions are made while that connection comes up: the moment a subscription used to be
 * lost without a trace, leaving that process's grants and wake-ups to the fallback.
 *
 * A second test keeps one key busy with waiters in memory (docs/decisions/120): a parked
 * execution is woken by a release that hands the key over or grants it too, not only by one that
 * frees it, so its park ends by a wake while the key goes on from waiter to waiter.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Redis } from 'ioredis';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import { spawnJsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { buildStepReactors } from './step-protocol.js';

const WORKER = fileURLToPath(new URL('./step-worker-process.ts', import.meta.url));
const ROUNDS = 3;
const PROCESSES = 3;
const EXECUTIONS = 300;
const ACCOUNTS = 10;
const FALLBACK_MS = 60_000;
const children = new Set<ChildProcess>();
const reactors = buildStepReactors(() => Promise.reject(new Error('the test process runs no steps')));

let server: RedisServerHandle;
let runtime: RedisRuntime;

beforeAll(async () => {
  server = await startRedisServer();
  runtime = createRedisRuntime({ url: server.url, prefix: 'wk', reactors: Object.values(reactors) });
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await runtime?.close();
  await server?.dispose();
});

describe('release wake-ups across worker processes', () => {
  test(
    `${ROUNDS} rounds of ${EXECUTIONS} executions on ${PROCESSES} fresh workers: every park is woken by a release, none by its fallback`,
    { timeout: 600_000 },
    async () => {
      for (let round = 1; round <= ROUNDS; round++) {
        const workers = Array.from({ length: PROCESSES }, () =>
          spawnJsonChild(
            WORKER,
            {
              url: server.url,
              prefix: 'wk',
              guard: `wk-guard-${round}`,
              concurrency: 8,
              background: { workerWaitMs: 20, parkFallbackMs: FALLBACK_MS },
              waitForGo: true,
            },
            children,
          ),
        );
        await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
        const ids = [];
        for (let i = 0; i < EXECUTIONS; i += 100) {
          const batch = await Promise.all(
            Array.from({ length: Math.min(100, EXECUTIONS - i) }, (_, j) =>
              runtime.engine.start(reactors.payment, { account: `${round}-${(i + j) % ACCOUNTS}` }),
            ),
          );
          ids.push(...batch.map((s) => s.executionId));
        }
        for (const w of workers) w.child.stdin!.write('go\n');
        // Well before any fallback is due: a park left to its fallback would still be parked here.
        const results = await Promise.all(
          ids.map((id) => runtime.engine.wait(id, { timeoutMs: FALLBACK_MS / 2, pollMs: 200 })),
        );
        const statuses = results.map((r) => r?.status ?? 'missing');
        for (const w of workers) w.child.kill('SIGTERM');
        const counts = await Promise.all(
          workers.map((w) =>
            w.line<{ parks: number; woken: number; degradedParks: number }>((v) => v.stopped === true),
          ),
        );
        await Promise.all(workers.map((w) => w.exited));
        const parks = counts.reduce((n, c) => n + c.parks, 0);
        const woken = counts.reduce((n, c) => n + c.woken, 0);
        const degraded = counts.reduce((n, c) => n + c.degradedParks, 0);
        console.info(`[wakeups] round ${round}: ${parks} parks, ${woken} run.woken, ${degraded} parked while degraded`);
        expect(statuses.filter((s) => s !== 'completed')).toEqual([]);
        // Every park woken by a release, but those made while the wake-ups were degraded (their short fallback may win).
        expect(woken).toBeLessThanOrEqual(parks);
        expect(woken).toBeGreaterThanOrEqual(parks - degraded);
      }
    },
  );

  test(
    'one key kept busy by waiters in every worker: a parked execution is woken while the key is handed from waiter to waiter, not only once it falls free',
    { timeout: 600_000 },
    async () => {
      // Two workers wait in memory for as long as it takes; the third parks after 20 ms.
      const waits = [FALLBACK_MS, FALLBACK_MS, 20];
      const workers = waits.map((workerWaitMs) =>
        spawnJsonChild(
          WORKER,
          {
            url: server.url,
            prefix: 'wk',
            guard: 'wk-guard-busy',
            concurrency: 8,
            background: { workerWaitMs, parkFallbackMs: FALLBACK_MS },
          },
          children,
        ),
      );
      await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
      type Counts = { parks: number; woken: number; completed: number; failed: number; degradedParks: number };
      let query = 0;
      const counts = async (): Promise<Counts> => {
        const n = ++query;
        for (const w of workers) w.child.stdin!.write(`counts ${n}\n`);
        const each = await Promise.all(workers.map((w) => w.line<Counts>((v) => v.counts === n)));
        return each.reduce(
          (sum, c) => ({
            parks: sum.parks + c.parks,
            woken: sum.woken + c.woken,
            completed: sum.completed + c.completed,
            failed: sum.failed + c.failed,
            degradedParks: sum.degradedParks + c.degradedParks,
          }),
          { parks: 0, woken: 0, completed: 0, failed: 0, degradedParks: 0 },
        );
      };
      const ids: string[] = [];
      const feed = async (): Promise<void> => {
        const batch = await Promise.all(
          Array.from({ length: 40 }, () => runtime.engine.start(reactors.payment, { account: 'busy' })),
        );
        ids.push(...batch.map((s) => s.executionId));
      };
      // Keep more executions outstanding than the workers' 24 slots: the key has waiters in memory
      // in the first two workers, so nearly every release hands it over or grants it. The parks
      // counted once 10 have happened must all be woken while that goes on, and more parks must be
      // woken than there were releases that freed the key (counted on its channel).
      const channel = new Redis(server.url);
      const messages = { freed: 0, granted: 0 };
      channel.on('message', (_channel: string, message: string) =>
        message === 'released' ? messages.freed++ : messages.granted++,
      );
      await channel.subscribe(new RedisKeys('wk').lockChannel('st:acct:busy'));
      const deadline = Date.now() + FALLBACK_MS / 2;
      let parkedBefore: number | undefined;
      let now: Counts = await counts();
      let busyThroughout = true;
      while (Date.now() < deadline) {
        while (ids.length - now.completed - now.failed < 60) await feed();
        await new Promise((resolve) => setTimeout(resolve, 100));
        now = await counts();
        if (parkedBefore === undefined && now.parks >= 10) parkedBefore = now.parks;
        // Without wake-ups on hand-overs, a park would be woken only by a release that frees the key.
        if (parkedBefore !== undefined && now.woken >= parkedBefore && now.woken > messages.freed) {
          busyThroughout = ids.length - now.completed - now.failed > 24;
          break;
        }
      }
      console.info(
        `[wakeups] busy key: ${ids.length} started, ${now.parks} parks, ${now.woken} run.woken, ${JSON.stringify(messages)}`,
      );
      await channel.quit();
      expect(parkedBefore).toBeDefined();
      expect(now.woken).toBeGreaterThanOrEqual(parkedBefore!);
      expect(now.woken).toBeGreaterThan(messages.freed);
      expect(busyThroughout).toBe(true);
      // Then the feed stops: every execution completes, and every park ended with its wake.
      const results = await Promise.all(
        ids.map((id) => runtime.engine.wait(id, { timeoutMs: FALLBACK_MS / 2, pollMs: 200 })),
      );
      expect(results.map((r) => r?.status ?? 'missing').filter((s) => s !== 'completed')).toEqual([]);
      const last = await counts();
      expect(last.woken).toBeLessThanOrEqual(last.parks);
      expect(last.woken).toBeGreaterThanOrEqual(last.parks - last.degradedParks);
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));
    },
  );
});
