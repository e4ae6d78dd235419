/**
 * Sleep steps across real worker processes on one throwaway redis-server (docs/time.md#sleeps,
 * docs/decisions/077): 200 executions sleeping 2 s hold no worker slot while they sleep — the
 * workers complete other executions meanwhile — and each completes 2–3 s after its sleep
 * started; a worker killed with SIGKILL during the sleeps loses none. Every worker is a separate
 * Node process (`sleep-worker-process.ts`); this process only starts executions and reads results.
 */
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import type { RunResult } from '../../src/index.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { SLEEP_WAKE_LEAD_MS } from '../../src/engine/graph/sleep.js';
import { buildSleepReactors, LONG_NAP_MS, NAP_MS, sleepKeys, type SleepWorkerConfig } from './sleep-protocol.js';

const WORKER = fileURLToPath(new URL('./sleep-worker-process.ts', import.meta.url));
const SLEEPERS = 200;
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const children = new Set<ChildProcess>();
const reactors = buildSleepReactors({
  after: () => Promise.reject(new Error('the test process runs no steps')),
  busy: () => Promise.reject(new Error('the test process runs no steps')),
});

let server: RedisServerHandle;
let observer: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  observer = new Redis(server.url);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await observer?.quit();
  await server?.dispose();
});

async function spawnWorkers(count: number, config: Omit<SleepWorkerConfig, 'url'>): Promise<JsonChild[]> {
  const workers = Array.from({ length: count }, () => spawnJsonChild(WORKER, { ...config, url: server.url }, children));
  await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
  return workers;
}

/** The results of `ids` once every one is terminal (or the time is up). */
async function settled(runtime: RedisRuntime, ids: readonly string[], timeoutMs: number): Promise<RunResult[]> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const results = await Promise.all(ids.map((id) => runtime.engine.result(id)));
    const done = results.filter((r) => r && ['completed', 'failed', 'halted', 'cancelled'].includes(r.status));
    if (done.length === ids.length || performance.now() > deadline) return results.filter((r) => r !== undefined);
    await pause(100);
  }
}

/** Waits until every one of `ids` is parked on its sleep; resolves with the earliest wake time. */
async function allParked(runtime: RedisRuntime, ids: readonly string[]): Promise<number> {
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    const records = await Promise.all(ids.map((id) => runtime.engine.store.get(id)));
    if (records.every((r) => r?.status === 'parked' && r.background?.waitingFor?.primitive === 'sleep'))
      return Math.min(...records.map((r) => r?.background?.waitingFor?.dueAt ?? Number.NEGATIVE_INFINITY));
    await pause(25);
  }
  throw new Error('the sleepers never all parked');
}

/** Resolves once every one of `ids` has started its sleep (on a loaded machine the first may have woken already). */
async function allStartedSleeping(runtime: RedisRuntime, ids: readonly string[]): Promise<void> {
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline) {
    const records = await Promise.all(ids.map((id) => runtime.engine.store.get(id)));
    const nap = (r: (typeof records)[number]) => r?.steps['nap'];
    if (records.every((r) => nap(r)?.wakeAt !== undefined || nap(r)?.status === 'completed')) return;
    await pause(25);
  }
  throw new Error('the sleepers never all started sleeping');
}

/** Per execution: ms from its sleep's start (`step.sleeping`) to its completion (`run.completed`). */
function sleptMs(result: RunResult): number {
  const sleeping = result.trace.find((e) => e.type === 'step.sleeping');
  const completed = result.trace.find((e) => e.type === 'run.completed');
  return (completed?.at ?? Number.NaN) - (sleeping?.at ?? Number.NaN);
}

/**
 * Every one of `results` completed, none before its wake time, the last within `budgetMs` of
 * its sleep's end: 1 s on a quiet machine, more when the workers run slower (the woken sleepers
 * all queue for the same 8 slots at once).
 */
function expectCompletedOnTime(results: readonly RunResult[], napMs: number, budgetMs: number): void {
  expect(results.filter((r) => r.status !== 'completed').map((r) => r.status)).toEqual([]);
  const slept = results.map(sleptMs).sort((a, b) => a - b);
  console.info(
    `[sleep] ${results.length} completed; sleep start → completion: min ${slept[0]} ms, max ${slept.at(-1)} ms (bound ${napMs} + ${Math.round(budgetMs)} ms)`,
  );
  // Never before its wake time (the `wakeAt` fixed when the sleep started: `step.sleeping` is
  // stamped a little later, after `step.started` went through the middleware).
  const early = results.filter((r) => !(completedAt(r) >= wakeAtOf(r))).map((r) => r.executionId);
  expect(early).toEqual([]);
  expect(slept.at(-1)).toBeLessThanOrEqual(napMs + budgetMs);
}

/**
 * How long the workers need to run `count` executions at the pace they ran `batch` (started
 * together at `since`): at least 1 s, twice the measured pace for headroom.
 */
function drainBudget(batch: readonly RunResult[], since: number, count: number): number {
  const took = Math.max(...batch.map(completedAt)) - since;
  return Math.max(1_000, 2 * (took / batch.length) * count);
}

function completedAt(result: RunResult): number {
  return result.trace.find((e) => e.type === 'run.completed')?.at ?? Number.NaN;
}

/** How many of `sleepers` were asleep at `at`: their sleep had started and its wake time not come. */
function asleepAt(sleepers: readonly RunResult[], at: number): number {
  return sleepers.filter((r) => {
    const sleeping = r.trace.find((e) => e.type === 'step.sleeping');
    return sleeping !== undefined && sleeping.at <= at && at < wakeAtOf(r);
  }).length;
}

function wakeAtOf(result: RunResult): number {
  const sleeping = result.trace.find((e) => e.type === 'step.sleeping');
  return sleeping?.type === 'step.sleeping' ? sleeping.wakeAt : Number.NaN;
}

test(
  '200 executions sleeping 2 s over 2 worker processes hold no slot: the workers complete other executions meanwhile, and every sleeper completes after 2 s, within 1 s more (or what 200 executions take at the pace the workers ran the others)',
  { timeout: 300_000 },
  async () => {
    const prefix = 'sleep-slots';
    const workers = await spawnWorkers(2, { prefix, concurrency: 4 });
    const runtime = createRedisRuntime({ url: server.url, prefix, reactors: Object.values(reactors) });
    try {
      const sleepers = await Promise.all(
        Array.from({ length: SLEEPERS }, () => runtime.engine.start(reactors.napper, {})),
      );
      const ids = sleepers.map((s) => s.executionId);
      await allStartedSleeping(runtime, ids);
      // 200 sleepers and 8 slots: other work runs only if the sleepers hold none.
      const busySince = Date.now();
      const busy = await Promise.all(Array.from({ length: 40 }, () => runtime.engine.start(reactors.busy, {})));
      const busyResults = await settled(
        runtime,
        busy.map((b) => b.executionId),
        20_000,
      );
      const sleeperResults = await settled(runtime, ids, 20_000);
      const busyDone = Number(await observer.get(sleepKeys(prefix).busyDone));
      // How many sleepers were asleep (between their sleep's start and its wake time) when each
      // other execution completed: more than the 8 slots at once cannot hold a slot each.
      const asleep = busyResults.map((r) => asleepAt(sleeperResults, completedAt(r)));
      console.info(
        `[sleep] other executions completed while ${SLEEPERS} slept: ${busyDone}; most sleepers asleep at one of their completions: ${Math.max(...asleep)}`,
      );
      expect(busyDone).toBe(40);
      expect(busyResults.every((r) => r.status === 'completed')).toBe(true);
      expect(Math.max(...asleep)).toBeGreaterThan(8);
      expect(await observer.scard(sleepKeys(prefix).busyPids)).toBe(2);

      expectCompletedOnTime(sleeperResults, NAP_MS, drainBudget(busyResults, busySince, SLEEPERS));
    } finally {
      await runtime.close();
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));
    }
  },
);

test(
  'a worker process killed with SIGKILL during the sleeps loses none: all 200 complete after their 12 s sleep, within 10 s more, before stall detection (30 s after the kill) could recover one',
  { timeout: 300_000 },
  async () => {
    const prefix = 'sleep-kill';
    const workers = await spawnWorkers(3, { prefix, concurrency: 4 });
    const runtime = createRedisRuntime({ url: server.url, prefix, reactors: Object.values(reactors) });
    try {
      const sleepers = await Promise.all(
        Array.from({ length: SLEEPERS }, () => runtime.engine.start(reactors.longNapper, {})),
      );
      const ids = sleepers.map((s) => s.executionId);
      const firstWake = await allParked(runtime, ids);
      // A record reads parked a moment before its worker hands the job back to the queue: kill
      // only once no job is active, so the victim holds no sleeper (else stall detection, 30 s
      // later, would be what recovers it).
      await expect
        .poll(async () => (await runtime.queueInspector.inspectQueue({ limit: 1 })).counts['active'] ?? 0)
        .toBe(0);
      const victim = workers[0]!;
      victim.child.kill('SIGKILL');
      const exit = await victim.exited;
      expect(exit.signal).toBe('SIGKILL');
      // The victim died holding no sleeper: the first wake job is delivered SLEEP_WAKE_LEAD_MS
      // before its wake time, and only after this point.
      const killedBeforeFirstDelivery = firstWake - SLEEP_WAKE_LEAD_MS - Date.now();
      console.info(`[sleep] victim killed ${killedBeforeFirstDelivery} ms before the first wake job's delivery`);
      expect(killedBeforeFirstDelivery).toBeGreaterThan(0);
      const results = await settled(runtime, ids, 40_000);
      expect(results).toHaveLength(SLEEPERS);
      // A sleeper the victim held would be recovered only by stall detection, 30 s later.
      expectCompletedOnTime(results, LONG_NAP_MS, 10_000);
      const wokeOn = await observer.smembers(sleepKeys(prefix).afterPids);
      expect(wokeOn).not.toContain(String(victim.pid));
    } finally {
      await runtime.close();
      for (const w of workers.slice(1)) w.child.kill('SIGTERM');
      await Promise.all(workers.slice(1).map((w) => w.exited));
    }
  },
);
