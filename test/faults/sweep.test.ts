/**
 * No stranded executions, with real processes and a throwaway `redis-server`:
 *
 * - an inline run (`engine.run` in a process of its own, holding its liveness lease) is killed
 *   with SIGKILL in the middle of a step; a worker with short lease and sweep settings resumes
 *   it to completed when it knows the reactor, or ends it `aborted` with the cause when it does
 *   not — in both cases within the lease plus the sweep interval (plus the time to run it);
 * - a pending execution whose BullMQ job was removed is re-enqueued by the sweep and completes;
 * - two workers sweep one at a time: their sweeps never overlap, and each stranded execution is
 *   recovered exactly once.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { createEngine, InlineRunAbandonedError, reactor, type Logger, type ReactorEvent } from '../../src/index.js';
import { livenessKey } from '../../src/engine/model/keys.js';
import type { SweepReport } from '../../src/engine/jobs/sweep.js';
import { toBullmqJobId } from '../../src/queue/job-id.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import { spawnJsonChild } from '../support/json-child.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { sweepReactor, type InStepLine } from './fixtures/sweep-reactors.js';

const CHILD = fileURLToPath(new URL('./fixtures/sweep-reactors.ts', import.meta.url));
const TTL = 1_000;
const SWEEP = 500;
/**
 * Time to start the worker, take the job and run one step once the sweep enqueued it: generous
 * for a loaded machine, and the bound stays far below the 30 s default lease.
 */
const RUN_SLACK = 8_000;

const server = useRedisServer();
const children = new Set<ChildProcess>();
const runtimes: RedisRuntime[] = [];
let seq = 0;

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(runtimes.map((r) => r.close()));
});

const worker = (
  prefix: string,
  options: {
    readonly known: boolean;
    readonly logger?: Logger;
    readonly livenessWaitMs?: number;
    readonly sweepIntervalMs?: number;
  },
): RedisRuntime => {
  const definition = sweepReactor(() => Promise.resolve());
  const runtime = createRedisRuntime({
    url: server.url,
    prefix,
    reactors: options.known ? [definition] : [],
    background: {
      livenessTtlMs: TTL,
      sweepIntervalMs: options.sweepIntervalMs ?? SWEEP,
      ...(options.livenessWaitMs === undefined ? {} : { livenessWaitMs: options.livenessWaitMs }),
    },
    ...(options.logger ? { logger: options.logger, logEvents: false } : {}),
  });
  runtimes.push(runtime);
  return runtime;
};

const events = (runtime: RedisRuntime): ReactorEvent[] => {
  const seen: ReactorEvent[] = [];
  runtime.engine.subscribe((e) => seen.push(e));
  return seen;
};

/** Starts an inline run in its own process, waits until it is inside step `b`, and kills it there. */
async function killedInline(prefix: string): Promise<{ executionId: string; killedAt: number }> {
  const child = spawnJsonChild(CHILD, { url: server.url, prefix, livenessTtlMs: TTL }, children);
  const line = await child.line<InStepLine>((v) => v.inStep === 'b');
  child.child.kill('SIGKILL');
  await child.exited;
  return { executionId: line.executionId, killedAt: Date.now() };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('an inline run whose process was killed mid-step', () => {
  test('is resumed by a worker that knows its reactor, and completes within lease + sweep interval', async () => {
    const prefix = `sweep-a1-${++seq}`;
    const rescuer = worker(prefix, { known: true });
    const seen = events(rescuer);
    const { executionId, killedAt } = await killedInline(prefix);
    const before = await rescuer.engine.store.get(executionId);
    expect(before).toMatchObject({
      status: 'running',
      inline: { lease: expect.stringMatching(/^inline:/) as unknown },
    });
    expect(before?.steps['a']?.status).toBe('completed');
    rescuer.startWorker({ concurrency: 2 });
    const done = await until('completed', async () => {
      const r = await rescuer.engine.result(executionId);
      return r?.status === 'completed' ? r : undefined;
    });
    const tookMs = Date.now() - killedAt;
    expect(done).toMatchObject({ status: 'completed', value: { a: 'A', b: 'B' } });
    expect(tookMs).toBeLessThan(TTL + SWEEP + RUN_SLACK);
    expect(seen.filter((e) => e.type === 'run.recovered')).toMatchObject([
      { executionId, reason: 'inline_lost', action: 'requeued', status: 'running' },
    ]);
    // `a` completed in the killed process: it did not run again.
    expect(
      seen
        .filter((e) => e.type === 'step.started' && e.executionId === executionId)
        .map((e) => (e as { step: string }).step),
    ).toEqual(['b']);
    console.info(`[sweep] inline run resumed ${tookMs} ms after SIGKILL (lease ${TTL} ms, sweep every ${SWEEP} ms)`);
  }, 90_000);

  test('is aborted with the cause by a worker that does not know its reactor, within lease + sweep interval', async () => {
    const prefix = `sweep-a2-${++seq}`;
    const sweeper = worker(prefix, { known: false });
    const { executionId, killedAt } = await killedInline(prefix);
    sweeper.startWorker({ concurrency: 1 });
    const record = await until('aborted', async () => {
      const r = await sweeper.engine.store.get(executionId);
      return r?.status === 'aborted' ? r : undefined;
    });
    const tookMs = Date.now() - killedAt;
    expect(tookMs).toBeLessThan(TTL + SWEEP + RUN_SLACK);
    // The step that was running is not in the record (a step's start is not checkpointed): only `a` completed.
    expect(record).toMatchObject({
      error: { code: 'inline_run_abandoned', details: { reactor: 'fault-sweep', rollingBack: false } },
    });
    expect(record?.steps['a']?.status).toBe('completed');
    const result = await sweeper.engine.wait(executionId, { timeoutMs: 100 });
    expect(result.status === 'failed' && result.error).toBeInstanceOf(InlineRunAbandonedError);
    const backend = createRedisBackend({ url: server.url, prefix });
    try {
      expect(await backend.coordinator.lockState(livenessKey(executionId))).toBeUndefined(); // the abort's write released the sweep's lease
    } finally {
      await backend.close();
    }
    console.info(`[sweep] inline run aborted ${tookMs} ms after SIGKILL`);
  }, 90_000);
});

test('an inline run on Redis holds its lease while it runs and leaves nothing that outlives its record', async () => {
  const prefix = `sweep-lease-${++seq}`;
  const backend = createRedisBackend({ url: server.url, prefix, recordTtlMs: 5_000 });
  try {
    let seen: { owner: string | undefined; inline: unknown } | undefined;
    const probe = sweepReactor(async (executionId) => {
      seen = {
        owner: (await backend.coordinator.lockState(livenessKey(executionId)))?.holder.owner,
        inline: (await backend.store.get(executionId))?.inline,
      };
    });
    const engine = createEngine({
      store: backend.store,
      coordinator: backend.coordinator,
      jobLeases: backend.jobLeases,
      checkpointIntervalMs: 0,
    });
    const result = await engine.run(probe, {});
    expect(result.status).toBe('completed');
    expect(seen?.owner).toMatch(/^inline:/);
    expect(seen?.inline).toEqual({ lease: seen?.owner });
    expect(await backend.coordinator.lockState(livenessKey(result.executionId))).toBeUndefined();
    // The lease is unfenced (nobody reads its token): no fence key outlives the record.
    const keys = new RedisKeys(prefix);
    expect(await backend.redis.pttl(keys.execution(result.executionId))).toBeGreaterThan(0);
    expect(await backend.redis.exists(keys.lockFence(livenessKey(result.executionId)))).toBe(0);
  } finally {
    await backend.close();
  }
});

test('an inline run on Redis that hands off to a worker lets go of its lease at the hand-off', async () => {
  const prefix = `sweep-handoff-${++seq}`;
  // A job that found the inline lease still held would wait up to livenessWaitMs for its release.
  const runtime = worker(prefix, { known: true, livenessWaitMs: 60_000 });
  const handOff = reactor('fault-sweep-handoff')
    .step('a', { run: () => 'A' })
    .step('b', { waitFor: ['a'], run: () => 'B' })
    .background({ after: 'a' })
    .build();
  runtime.engine.register(handOff);
  runtime.startWorker({ concurrency: 2 });
  const started = Date.now();
  const queued = await runtime.engine.run(handOff, {});
  expect(queued.status).toBe('queued');
  const done = await runtime.engine.wait(queued.executionId, { timeoutMs: 30_000 });
  expect(done).toMatchObject({ status: 'completed', value: { a: 'A', b: 'B' } });
  expect(Date.now() - started).toBeLessThan(15_000); // the hand-off's pending write released the lease before its job was enqueued
  expect((await runtime.engine.store.get(queued.executionId))?.inline).toBeUndefined();
});

test('a pending execution whose job was removed from BullMQ is re-enqueued by the sweep and completes', async () => {
  const prefix = `sweep-b-${++seq}`;
  const producer = worker(prefix, { known: true }); // no worker started: its job stays in the queue
  const definition = sweepReactor(() => Promise.resolve());
  const queued = await producer.engine.start(definition, {});
  const queue = new Queue('ts-reactor', { connection: { url: server.url }, prefix });
  try {
    const bullId = toBullmqJobId(`${queued.executionId}:1`);
    expect(await queue.getJobState(bullId)).toBe('waiting');
    await (await queue.getJob(bullId))?.remove();
    expect(await queue.getJobState(bullId)).toBe('unknown');
  } finally {
    await queue.close();
  }
  const rescuer = worker(prefix, { known: true });
  const seen = events(rescuer);
  rescuer.startWorker({ concurrency: 2 });
  const done = await until('completed', async () => {
    const r = await rescuer.engine.result(queued.executionId);
    return r?.status === 'completed' ? r : undefined;
  });
  expect(done.status).toBe('completed');
  expect(seen.filter((e) => e.type === 'run.recovered')).toMatchObject([
    {
      executionId: queued.executionId,
      reason: 'no_job',
      action: 'requeued',
      status: 'queued',
      jobId: `${queued.executionId}:sweep:1`,
    },
  ]);
  expect(await rescuer.engine.store.get(queued.executionId).then((r) => r?.background?.recovered?.count)).toBe(1);
});

test('two workers sweep one at a time, and recover each stranded execution once', async () => {
  const prefix = `sweep-c-${++seq}`;
  const producer = worker(prefix, { known: true });
  const definition = sweepReactor(() => Promise.resolve());
  const ids: string[] = [];
  const queue = new Queue('ts-reactor', { connection: { url: server.url }, prefix });
  try {
    for (let i = 0; i < 12; i++) {
      const queued = await producer.engine.start(definition, {});
      ids.push(queued.executionId);
      await (await queue.getJob(toBullmqJobId(`${queued.executionId}:1`)))?.remove();
    }
  } finally {
    await queue.close();
  }
  const sweeps: { readonly worker: number; readonly report: SweepReport }[] = [];
  const logger = (n: number): Logger => {
    const capture = (fields: unknown): void => {
      const sweep = (fields as { sweep?: SweepReport } | undefined)?.sweep;
      if (sweep) sweeps.push({ worker: n, report: sweep });
    };
    return { debug: capture, info: capture, warn: () => undefined, error: () => undefined };
  };
  // Sweeps every 2 s: the sweep lock (1.6 s, renewed every 533 ms) outlasts a loaded machine's pauses.
  const workers = [
    worker(prefix, { known: true, logger: logger(1), sweepIntervalMs: 2_000 }),
    worker(prefix, { known: true, logger: logger(2), sweepIntervalMs: 2_000 }),
  ];
  const recovered = workers.map(events);
  // Both at once, by hand: one takes the sweep lock, the other finds it held.
  const both = await Promise.all(workers.map((w) => w.engine.sweep()));
  expect(both.filter((r) => r.ran)).toHaveLength(1);
  both.forEach((report, i) => report.ran && sweeps.push({ worker: i + 1, report }));
  for (const w of workers) w.startWorker({ concurrency: 2 });
  for (const id of ids) {
    await until(`${id} completed`, async () =>
      (await workers[0]!.engine.result(id))?.status === 'completed' ? true : undefined,
    );
  }
  // A few more sweeps with nothing left to do.
  await until('four sweeps', () => Promise.resolve(sweeps.length >= 4 ? true : undefined), 40_000);
  const all = recovered.flat().filter((e) => e.type === 'run.recovered');
  expect(all.map((e) => e.executionId).sort()).toEqual([...ids].sort());
  const ordered = [...sweeps].sort((x, y) => x.report.startedAt - y.report.startedAt);
  for (let i = 1; i < ordered.length; i++)
    expect(ordered[i]!.report.startedAt).toBeGreaterThanOrEqual(ordered[i - 1]!.report.finishedAt);
  expect(ordered.reduce((sum, s) => sum + s.report.requeued, 0)).toBe(ids.length);
  console.info(
    `[sweep] ${sweeps.length} sweeps by two workers (${sweeps.filter((s) => s.worker === 1).length} / ${sweeps.filter((s) => s.worker === 2).length}), none overlapping`,
  );
}, 90_000);
