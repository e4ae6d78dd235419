/**
 * Durable background execution across real worker processes (issue 4 acceptance; quality bars
 * R1 and R2 at reactor level, graceful SIGTERM, a malformed job on BullMQ). Every worker is a
 * separate Node process (`bg-worker-process.ts`) running `createRedisRuntime(...).startWorker()`
 * against one throwaway redis-server; this process only starts executions (`engine.start`) and
 * observes Redis. Each scenario uses its own key prefix (store, coordinator, wait lists, queue).
 */
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, RedisWaitList, type RedisRuntime } from '../../src/bullmq.js';
import type { RunResult } from '../../src/index.js';
import { livenessKey } from '../../src/engine/model/keys.js';
import { toBullmqJobId } from '../../src/queue/job-id.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import {
  bgGuardKeys,
  buildReactors,
  HANG_LOCK_TTL_MS,
  type BgWorkerConfig,
  type CompensatedLine,
  type InStepLine,
  type ReadyLine,
  type StatsLine,
  type StepDoneLine,
  type StoppedLine,
} from './bg-protocol.js';

const WORKER = fileURLToPath(new URL('./bg-worker-process.ts', import.meta.url));
const QUEUE_NAME = 'ts-reactor'; // the runtime's default BullMQ queue name

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

type Child = JsonChild;

const children = new Set<ChildProcess>();

function spawnWorker(config: Omit<BgWorkerConfig, 'url'>): Child {
  return spawnJsonChild(WORKER, { ...config, url: server.url }, children);
}

async function ready(workers: readonly Child[]): Promise<void> {
  await Promise.all(workers.map((w) => w.line<ReadyLine>((v) => v.ready === true)));
}

/** SIGTERM, then the `stopped` line and the exit. */
async function terminate(
  worker: Child,
): Promise<{ stopped: StoppedLine; code: number | null; signal: NodeJS.Signals | null }> {
  worker.child.kill('SIGTERM');
  const stopped = await worker.line<StoppedLine>((v) => v.stopped === true);
  const { code, signal } = await worker.exited;
  return { stopped, code, signal };
}

async function stats(worker: Child): Promise<StatsLine> {
  const before = worker.lines((v) => v.stats === true).length;
  worker.child.stdin!.write('stats\n');
  for (;;) {
    const all = worker.lines<StatsLine>((v) => v.stats === true);
    if (all.length > before) return all[all.length - 1]!;
    await sleep(10);
  }
}

let server: RedisServerHandle;
let observer: Redis;
const closers: (() => Promise<unknown>)[] = [];
const noSection = {
  section: {
    enter: (): Promise<number> => Promise.reject(new Error('the test process runs no steps')),
    exit: (): Promise<void> => Promise.resolve(),
  },
  inside: (): Promise<void> => Promise.resolve(),
};
// The test process only starts executions: the step bodies never run here.
const reactors = buildReactors(noSection);

interface Scenario {
  readonly prefix: string;
  readonly guard: string;
  readonly runtime: RedisRuntime;
  readonly backend: RedisBackend;
  readonly waitList: RedisWaitList;
}

function scenario(prefix: string): Scenario {
  const runtime = createRedisRuntime({ url: server.url, prefix, reactors: Object.values(reactors) });
  const backend = createRedisBackend({ url: server.url, prefix });
  closers.push(
    () => runtime.close(),
    () => backend.close(),
  );
  return {
    prefix,
    guard: `${prefix}-guard`,
    runtime,
    backend,
    waitList: new RedisWaitList({ redis: observer, prefix }),
  };
}

/** Polls the records of `ids` until each is terminal or `timeoutMs` passes; returns the last results. */
async function settle(
  s: Scenario,
  ids: readonly string[],
  timeoutMs: number,
): Promise<{ results: Map<string, RunResult | undefined>; lastDoneAt: number }> {
  const results = new Map<string, RunResult | undefined>();
  const pending = new Set(ids);
  const deadline = performance.now() + timeoutMs;
  let lastDoneAt = performance.now();
  while (pending.size > 0 && performance.now() < deadline) {
    const batch = [...pending];
    for (let i = 0; i < batch.length; i += 200) {
      const chunk = batch.slice(i, i + 200);
      const found = await Promise.all(chunk.map((id) => s.runtime.engine.result(id)));
      chunk.forEach((id, j) => {
        const r = found[j];
        results.set(id, r);
        if (r && ['completed', 'failed', 'halted'].includes(r.status)) {
          pending.delete(id);
          lastDoneAt = performance.now();
        }
      });
    }
    if (pending.size > 0) await sleep(250);
  }
  return { results, lastDoneAt };
}

function statusCounts(results: Map<string, RunResult | undefined>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results.values()) counts[r?.status ?? 'missing'] = (counts[r?.status ?? 'missing'] ?? 0) + 1;
  return counts;
}

function failureSamples(results: Map<string, RunResult | undefined>): string[] {
  return [...results.values()]
    .flatMap((r) => (r?.status === 'failed' ? [`${r.executionId}: ${r.error.message}`] : []))
    .slice(0, 3);
}

beforeAll(async () => {
  server = await startRedisServer();
  observer = new Redis(server.url);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await observer?.quit();
  await server?.dispose();
});

describe('R1 at reactor level: 4 worker processes × concurrency 8, 2,000 executions over 10 lock keys', () => {
  const PROCESSES = 4;
  const CONCURRENCY = 8;
  const EXECUTIONS = 2_000;
  const KEYS = 10;

  test('0 overlaps per key, 0 lost, all completed, no key left locked or waited on', { timeout: 180_000 }, async () => {
    const s = scenario('bg1');
    const keys = bgGuardKeys(s.guard);
    const workers = Array.from({ length: PROCESSES }, () =>
      spawnWorker({
        prefix: s.prefix,
        guard: s.guard,
        concurrency: CONCURRENCY,
        background: { parkFallbackMs: 2_000 },
        waitForGo: true,
      }),
    );
    await ready(workers);

    // The whole backlog is queued first, then every worker starts at once: 32 slots over 10 keys,
    // so most deliveries meet a held key and park (wake-on-release does the rest).
    const enqueueBegan = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < EXECUTIONS; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, EXECUTIONS - i) }, (_, j) =>
          s.runtime.engine.start(reactors.r1, { account: String((i + j) % KEYS) }),
        ),
      );
      for (const r of batch) {
        expect(r.status).toBe('queued');
        ids.push(r.executionId);
      }
    }
    const enqueuedMs = performance.now() - enqueueBegan;
    const began = performance.now();
    for (const w of workers) w.child.stdin!.write('go\n');

    const { results, lastDoneAt } = await settle(s, ids, 150_000);
    const wallMs = lastDoneAt - began;
    const counts = statusCounts(results);
    const workerStats = await Promise.all(workers.map(stats));
    const parks = workerStats.reduce((n, w) => n + w.parks, 0);
    const persistedParks = [...results.values()].reduce(
      (n, r) => n + (r?.trace.filter((e) => e.type === 'run.parked').length ?? 0),
      0,
    );
    const maxByKey = await observer.hgetall(keys.max);
    const total = Number(await observer.get(keys.total));
    const allMax = Number(await observer.get(keys.allMax));
    const runs = await observer.hgetall(keys.runs);
    const twice = Object.entries(runs).filter(([, n]) => Number(n) !== 1);
    console.info(
      `[background] R1: ${EXECUTIONS} executions, ${PROCESSES} processes × ${CONCURRENCY}: enqueued in ${Math.round(enqueuedMs)} ms, then ` +
        `all settled in ${Math.round(wallMs)} ms (${Math.round((EXECUTIONS / wallMs) * 1000)} executions/s); statuses ${JSON.stringify(counts)}; ` +
        `parks ${parks} (persisted traces: ${persistedParks}); per process ${JSON.stringify(workerStats.map((w) => ({ sections: w.sections, parks: w.parks, resumed: w.resumed })))}; ` +
        `max inside per key ${JSON.stringify(maxByKey)}; sections entered ${total}, at most ${allMax} at once across keys`,
    );

    expect(counts, failureSamples(results).join('\n')).toEqual({ completed: EXECUTIONS });
    // 0 overlaps: never two executions inside one key's section.
    expect(Object.keys(maxByKey).sort()).toEqual(Array.from({ length: KEYS }, (_, k) => `acct:${k}`).sort());
    expect(Object.values(maxByKey).map(Number)).toEqual(Array.from({ length: KEYS }, () => 1));
    // 0 lost, none run twice: every execution entered its section exactly once.
    expect(Object.keys(runs).sort()).toEqual([...ids].sort());
    expect(twice).toEqual([]);
    expect(total).toBe(EXECUTIONS);
    expect(allMax).toBeLessThanOrEqual(KEYS);
    // The work spread over every process.
    expect(workerStats.every((w) => w.sections > 0)).toBe(true);
    // Nothing left behind: counters at 0, locks free, wait lists empty.
    for (let k = 0; k < KEYS; k++) {
      expect(Number(await observer.get(keys.cur(`acct:${k}`)))).toBe(0);
      expect(await s.backend.coordinator.lockState(`acct:${k}`)).toBeUndefined();
      expect(await s.waitList.list(`lock:acct:${k}`)).toEqual([]);
    }

    const stops = await Promise.all(workers.map(terminate));
    expect(stops.map((x) => x.code)).toEqual(workers.map(() => 0));
  });
});

describe('R2: kill -9 of a worker whose execution is inside its locked step', () => {
  // TTLs of 4 s renewed every 1.3–2 s: the hanging victim keeps its holds on a loaded machine.
  const STALL = { lockDurationMs: 4_000, stalledIntervalMs: 2_000 };
  const BACKGROUND = { livenessTtlMs: 4_000, parkFallbackMs: 1_000 };
  const BOUND_MS = 15_000;

  test(
    `another worker finishes the execution within ${BOUND_MS} ms, never while the first still runs it, and the key is free afterwards`,
    { timeout: 60_000 },
    async () => {
      const s = scenario('bg2');
      const keys = bgGuardKeys(s.guard);
      const lockKey = 'hang:a';
      const victim = spawnWorker({
        prefix: s.prefix,
        guard: s.guard,
        concurrency: 2,
        stall: STALL,
        background: BACKGROUND,
        hang: true,
      });
      await ready([victim]);
      const started = await s.runtime.engine.start(reactors.hang, { account: 'a' });
      expect(started.status).toBe('queued');
      const id = started.executionId;
      const entered = await victim.line<InStepLine>((v) => v.inStep === 'hang' && v.executionId === id);
      expect(entered.inside).toBe(1);

      // A second worker is up while the victim hangs alive: for longer than every TTL involved
      // (BullMQ job lock, liveness lock, step lock), the keep-alives keep the execution with the victim.
      const rescuer = spawnWorker({
        prefix: s.prefix,
        guard: s.guard,
        concurrency: 2,
        stall: STALL,
        background: BACKGROUND,
      });
      await ready([rescuer]);
      await sleep(STALL.lockDurationMs + STALL.stalledIntervalMs + 1_500);
      expect((await s.runtime.engine.result(id))?.status).toBe('running');
      expect(rescuer.lines((v) => v.inStep !== undefined)).toEqual([]);
      expect((await s.backend.coordinator.lockState(lockKey))?.holder.executionId).toBe(id);
      expect(Number(await observer.hget(keys.max, lockKey))).toBe(1);

      const killedAt = performance.now();
      victim.child.kill('SIGKILL');
      expect((await victim.exited).signal).toBe('SIGKILL');
      // The victim died inside its section: leave it on its behalf (only now, once it is surely gone,
      // so an entry by the rescuer before the death would have shown as 2).
      await observer.decr(keys.cur(lockKey));

      const outcome = await s.runtime.engine.wait(id, { timeoutMs: BOUND_MS + 2_000, pollMs: 20 });
      const recoveredMs = performance.now() - killedAt;
      // A worker run holds keys as root + run, so the rescuer never re-enters the dead run's lock: it
      // waits the lease out, takes the key anew and frees it when the execution ends.
      expect(await s.backend.coordinator.lockState(lockKey)).toBeUndefined();
      let freeMs: number | undefined;
      while (performance.now() - killedAt < recoveredMs + HANG_LOCK_TTL_MS + 1_000) {
        if ((await s.backend.coordinator.lockState(lockKey)) === undefined) {
          freeMs = performance.now() - killedAt;
          break;
        }
        await sleep(20);
      }
      const rescued = await rescuer
        .line<InStepLine>((v) => v.inStep === 'hang' && v.executionId === id, 1_000)
        .catch(() => undefined);
      console.info(
        `[background] R2: kill -9 → execution ${outcome?.status ?? 'unknown'} after ${Math.round(recoveredMs)} ms, key free after ${freeMs === undefined ? 'never' : Math.round(freeMs)} ms ` +
          `(lock TTL ${HANG_LOCK_TTL_MS} ms, liveness TTL ${BACKGROUND.livenessTtlMs} ms, BullMQ lock ${STALL.lockDurationMs} ms + stall check ${STALL.stalledIntervalMs} ms)`,
      );

      expect(outcome?.status, outcome?.status === 'failed' ? outcome.error.message : '').toBe('completed');
      expect(recoveredMs).toBeLessThanOrEqual(BOUND_MS);
      expect(rescued?.pid).toBe(rescuer.pid);
      expect(rescued?.inside).toBe(1);
      expect(Number(await observer.hget(keys.max, lockKey))).toBe(1);
      expect(Number(await observer.hget(keys.runs, id))).toBe(2); // the victim's unfinished attempt, then the rescuer's
      expect(Number(await observer.get(keys.cur(lockKey)))).toBe(0);
      expect(freeMs, 'the step lock was never freed').toBeDefined();
      expect(await s.backend.coordinator.lockState(`execution:${id}`)).toBeUndefined();
      expect(await s.waitList.list(`lock:${lockKey}`)).toEqual([]);

      expect((await terminate(rescuer)).code).toBe(0);
    },
  );
});

describe('cancel of an execution a worker process is running (decision 053)', () => {
  test(
    'the announcement reaches the worker at once: the run stops at its next step boundary and ends cancelled, long before a liveness tick',
    { timeout: 60_000 },
    async () => {
      const s = scenario('bg-cancel');
      // Liveness TTL 30 s: the worker's own check of the cancel marker would come 10 s after the job started.
      const worker = spawnWorker({ prefix: s.prefix, guard: s.guard, concurrency: 2 });
      await ready([worker]);
      const started = await s.runtime.engine.start(reactors.cancellable, { n: 1 });
      const id = started.executionId;
      await worker.line<InStepLine>((v) => v.inStep === 'slow' && v.executionId === id);
      expect((await s.runtime.engine.cancel(id, { reason: 'operator' })).status).toBe('running'); // a request: the worker holds it
      const outcome = await s.runtime.engine.wait(id, { timeoutMs: 8_000, pollMs: 10 });
      expect(outcome?.status).toBe('cancelled');
      expect(worker.lines((v) => v.inStep === 'second' && v.executionId === id)).toEqual([]);
      expect(outcome?.trace.some((e) => e.type === 'step.started' && e.step === 'second')).toBe(false);
      expect((await terminate(worker)).code).toBe(0);
    },
  );
});

describe('cancel of a queued execution whose dead worker ran its first step (decision 161)', () => {
  // Short TTLs so that the dead worker's BullMQ lock and liveness lease lapse soon.
  const STALL = { lockDurationMs: 2_000, stalledIntervalMs: 1_000 };
  const BACKGROUND = { livenessTtlMs: 2_000 };
  const WAIT_MS = 30_000;

  test(
    'BullMQ moved the job back to waiting: the cancel is a request, and the worker that takes the job compensates the step',
    { timeout: 90_000 },
    async () => {
      const s = scenario('bg-returned');
      const victim = spawnWorker({
        prefix: s.prefix,
        guard: s.guard,
        concurrency: 1,
        stall: STALL,
        background: BACKGROUND,
        hang: true,
      });
      await ready([victim]);
      const { executionId: id } = await s.runtime.engine.start(reactors.unrecorded, { n: 1 });
      await victim.line<InStepLine>((v) => v.inStep === 'unrecorded' && v.executionId === id);
      // The default checkpoint interval: nothing on the record says the step began.
      expect((await s.backend.store.get(id))?.status).toBe('pending');
      victim.child.kill('SIGKILL');
      expect((await victim.exited).signal).toBe('SIGKILL');

      // BullMQ's own stall check takes the dead worker's job back to waiting; this worker takes no job.
      const connection = new Redis(server.url, { maxRetriesPerRequest: null });
      closers.push(async () => void connection.disconnect());
      const checker = new Worker(QUEUE_NAME, async () => undefined, {
        connection,
        prefix: s.prefix,
        autorun: false,
        ...{ lockDuration: STALL.lockDurationMs, stalledInterval: STALL.stalledIntervalMs },
      });
      checker.on('error', () => undefined);
      closers.push(() => checker.close());
      const queue = new Queue(QUEUE_NAME, { connection: { url: server.url }, prefix: s.prefix });
      closers.push(() => queue.close());
      void checker.startStalledCheckTimer();
      await expect.poll(() => queue.getJobState(toBullmqJobId(`${id}:1`)), { timeout: WAIT_MS }).toBe('waiting');
      await checker.close();
      await expect.poll(() => s.backend.coordinator.lockState(livenessKey(id)), { timeout: WAIT_MS }).toBeUndefined();
      expect((await queue.getJob(toBullmqJobId(`${id}:1`)))?.attemptsStarted).toBe(1);

      // Before: the cancel read `pending` with no steps and rolled it back at once, uncompensated.
      const answer = await s.runtime.engine.cancel(id, { reason: 'operator' });
      expect(answer.status).toBe('running');
      expect((await s.backend.store.get(id))?.status).toBe('pending');

      const rescuer = spawnWorker({ prefix: s.prefix, guard: s.guard, concurrency: 1, background: BACKGROUND });
      await ready([rescuer]);
      const outcome = await s.runtime.engine.wait(id, { timeoutMs: WAIT_MS, pollMs: 20 });
      expect(outcome?.status).toBe('cancelled');
      const compensated = await rescuer.line<CompensatedLine>((v) => v.compensated === 'first' && v.executionId === id);
      expect(compensated.pid).toBe(rescuer.pid);
      expect(rescuer.lines((v) => v.inStep !== undefined)).toEqual([]); // the step did not run again
      const first = (await s.backend.store.get(id))?.steps.first;
      expect(first?.runs?.map((r) => r.outcome)).toEqual(['may_have_run']);
      expect((await terminate(rescuer)).code).toBe(0);
    },
  );
});

describe('SIGTERM of a worker with in-flight executions', () => {
  const EXECUTIONS = 24;

  test(
    'the worker finishes its in-flight steps and exits 0; every execution ends completed, each step ran once',
    { timeout: 60_000 },
    async () => {
      const s = scenario('bg3');
      const keys = bgGuardKeys(s.guard);
      const first = spawnWorker({ prefix: s.prefix, guard: s.guard, concurrency: 8 });
      await ready([first]);
      const ids: string[] = [];
      for (let n = 0; n < EXECUTIONS; n++) {
        const r = await s.runtime.engine.start(reactors.slow, { n });
        expect(r.status).toBe('queued');
        ids.push(r.executionId);
      }
      // Wait until the first worker is busy with a full set of steps.
      await expect
        .poll(() => first.lines((v) => v.inStep === 'slow').length, { timeout: 10_000, interval: 5 })
        .toBeGreaterThanOrEqual(8);
      const entered = first.lines<InStepLine>((v) => v.inStep === 'slow').map((l) => l.executionId);
      const doneBefore = new Set(first.lines<StepDoneLine>((v) => v.stepDone === 'slow').map((l) => l.executionId));
      const inFlight = entered.filter((e) => !doneBefore.has(e));
      expect(inFlight.length).toBeGreaterThan(0);

      const { stopped, code } = await terminate(first);
      expect(code, first.stderr()).toBe(0);
      const doneByFirst = new Set(first.lines<StepDoneLine>((v) => v.stepDone === 'slow').map((l) => l.executionId));
      // Every step that was running at SIGTERM was finished by this worker before it exited …
      expect(inFlight.filter((e) => !doneByFirst.has(e))).toEqual([]);
      // … and recorded as completed (not left running for another worker to redo).
      for (const e of inFlight) expect((await s.runtime.engine.result(e))?.status).toBe('completed');

      // The rest waits in the queue for the next worker.
      const second = spawnWorker({ prefix: s.prefix, guard: s.guard, concurrency: 8 });
      await ready([second]);
      const { results } = await settle(s, ids, 30_000);
      console.info(
        `[background] SIGTERM: ${inFlight.length} in flight at SIGTERM, close took ${stopped.closeMs} ms; ` +
          `first worker completed ${stopped.completed}, second ${(await stats(second)).completed}; statuses ${JSON.stringify(statusCounts(results))}`,
      );
      expect(statusCounts(results), failureSamples(results).join('\n')).toEqual({ completed: EXECUTIONS });
      const runs = await observer.hgetall(keys.runs);
      expect(Object.keys(runs).sort()).toEqual([...ids].sort());
      expect(Object.values(runs).filter((n) => n !== '1')).toEqual([]);
      expect((await terminate(second)).code).toBe(0);
    },
  );
});

describe('a malformed job on BullMQ', () => {
  test('the worker fails it without retry and goes on processing other jobs', { timeout: 60_000 }, async () => {
    const s = scenario('bg4');
    const worker = spawnWorker({ prefix: s.prefix, guard: s.guard, concurrency: 2 });
    await ready([worker]);
    // A producer of another format version (raw BullMQ, as an older or newer release would write).
    const foreign = new Queue(QUEUE_NAME, { connection: { url: server.url }, prefix: s.prefix });
    closers.push(() => foreign.close());
    const bad = [
      { id: 'foreign-v2', data: { v: 2, executionId: 'x-1', reactor: 'bg-r1' }, reason: /another version/ },
      { id: 'foreign-noversion', data: { executionId: 'x-2', reactor: 'bg-r1' }, reason: /missing format version/ },
      { id: 'foreign-noid', data: { v: 1, reactor: 'bg-r1' }, reason: /executionId/ },
      { id: 'foreign-string', data: 'garbage', reason: /expected an object/ },
      { id: 'foreign-null', data: null, reason: /expected an object/ },
    ];
    for (const b of bad) await foreign.add('execution', b.data, { jobId: b.id, attempts: 3, backoff: 10 });
    const good = await Promise.all(
      Array.from({ length: 5 }, (_, i) => s.runtime.engine.start(reactors.r1, { account: `m${i}` })),
    );

    for (const b of bad) {
      await expect.poll(async () => (await foreign.getJob(b.id))?.getState(), { timeout: 10_000 }).toBe('failed');
      const job = await foreign.getJob(b.id);
      expect(job?.failedReason).toMatch(b.reason);
      expect(job?.attemptsMade, b.id).toBe(1);
    }
    const outcomes = await Promise.all(good.map((g) => s.runtime.engine.wait(g.executionId, { timeoutMs: 10_000 })));
    expect(outcomes.map((o) => o?.status)).toEqual(good.map(() => 'completed'));
    // Still no retry after a while, and the worker is alive.
    await sleep(500);
    for (const b of bad) expect((await foreign.getJob(b.id))?.attemptsMade).toBe(1);
    expect(worker.child.exitCode).toBeNull();
    expect((await terminate(worker)).code).toBe(0);
  });
});
