/**
 * P7: worker throughput. An uncontended 3-step reactor (no coordination) processed in worker
 * mode — `createRedisRuntime(...).startWorker({ concurrency: 16 })` — vs raw BullMQ: a plain
 * `Queue` + `Worker` with an empty processor, same concurrency, same server, same process, same
 * run (rounds alternate). Each round first enqueues its N executions / jobs with no worker
 * running, then starts a worker and times from the first delivery to the last completion
 * (`run.completed` / the Worker's `completed` event). Figure: executions/s ÷ jobs/s (median of
 * per-round ratios); target ≥ 0.35.
 *
 * Each side's Redis CPU per execution or job (`INFO cpu`, user + system, from the worker's start
 * to its last completion) is reported beside it, with the ratio the server alone allows: the
 * subject's executions per second if Redis were busy all the time and the worker process cost
 * nothing, over the raw jobs per second. So is this process's CPU per execution or job
 * (`process.cpuUsage`, user + system, over the same span: the worker runs here), with the ratio
 * that CPU alone allows (`worker_bound`: one fully busy core).
 *
 * A third contender, the protocol floor, is a plain BullMQ worker (same job options, same
 * concurrency) whose processor does only the two store calls every worker job of an execution
 * makes on Redis: take the liveness lease and read the record (`job-enter`), then write a final
 * record like the subject's (its trace included) and release the lease (`job-leave`) — no engine,
 * no step, no events. Its ratio to the raw jobs is reported as `floor_ratio`; it is not a target.
 *
 * The raw jobs get the same job options as ts-reactor's own (attempts, backoff, keep-completed
 * policy), so both sides pay the same BullMQ bookkeeping. This file imports `bullmq` for the
 * anchor only.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createRedisRuntime, type RedisRuntime } from '../src/bullmq.js';
import { cancelRequestKey, livenessKey } from '../src/engine/model/keys.js';
import type { ExecutionRecord } from '../src/ports/store.js';
import { createRedisBackend, type RedisBackend } from '../src/storage/redis/index.js';
import { reactor, type AnyReactorDefinition } from '../src/index.js';
import { INFRA_ATTEMPTS, INFRA_BACKOFF_MS } from '../src/queue/policy.js';
import { bullmqKeepJobs, DEFAULT_JOB_RETENTION } from '../src/queue/job-retention.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { emit, median, round, type Verdict } from './support/runner.js';

const CONCURRENCY = 16;
const SUBJECT_RUNS = 1_500;
const RAW_JOBS = 6_000;
const WARMUP_ROUNDS = 3;
const ROUNDS = 5;
const TARGET = 0.35;
const PREFIX = 'p7';
const RAW_QUEUE = 'p7-raw';
const FLOOR_QUEUE = 'p7-floor';
const ENQUEUE_BATCH = 100;
const ROUND_TIMEOUT_MS = 60_000;

function threeSteps(): AnyReactorDefinition {
  return reactor('p7-three-steps')
    .step('a', { run: () => 1 })
    .step('b', { args: ($) => ({ a: $.result('a') }), run: ({ a }) => a + 1 })
    .step('c', { args: ($) => ({ b: $.result('b') }), run: ({ b }) => b + 1 })
    .returns('c');
}

/** The Redis server's CPU time so far (`INFO cpu`: user + system), in µs. */
async function serverCpuUs(stats: Redis): Promise<number> {
  const info = await stats.info('cpu');
  const seconds = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
}

/** One round of one side: its rate, and the server's and this process's CPU per execution or job. */
interface RoundResult {
  readonly perSecond: number;
  readonly serverCpuUs: number;
  readonly processCpuUs: number;
}

/** This process's CPU time since `since` (`process.cpuUsage`: user + system), in µs. */
function processCpuUs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

function timeout(what: string): { promise: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`P7: ${what} did not finish within ${ROUND_TIMEOUT_MS} ms`)),
      ROUND_TIMEOUT_MS,
    );
  });
  return { promise, clear: () => clearTimeout(timer) };
}

async function subjectRound(
  runtime: RedisRuntime,
  definition: AnyReactorDefinition,
  stats: Redis,
): Promise<RoundResult & { readonly lastId: string }> {
  let lastId = '';
  for (let i = 0; i < SUBJECT_RUNS; i += ENQUEUE_BATCH) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(ENQUEUE_BATCH, SUBJECT_RUNS - i) }, () => runtime.engine.start(definition, {})),
    );
    if (batch.some((r) => r.status !== 'queued')) throw new Error('P7: a start was not queued');
    lastId = batch[batch.length - 1]?.executionId ?? lastId;
  }
  let first = 0;
  let last = 0;
  let done = 0;
  const limit = timeout('the reactor round');
  const finished = new Promise<void>((resolve) => {
    const unsubscribe = runtime.engine.subscribe((event) => {
      if (event.type === 'run.resumed' && first === 0) first = performance.now();
      if (event.type === 'run.failed') process.stderr.write(`P7: an execution failed: ${event.error.message}\n`);
      if (event.type !== 'run.completed' && event.type !== 'run.failed') return;
      last = performance.now();
      if (++done === SUBJECT_RUNS) {
        unsubscribe();
        resolve();
      }
    });
  });
  const cpuBefore = await serverCpuUs(stats);
  const processBefore = process.cpuUsage();
  const worker = runtime.startWorker({ concurrency: CONCURRENCY });
  let cpuAfter: number;
  let processUsed: number;
  try {
    await Promise.race([finished, limit.promise]);
    processUsed = processCpuUs(processBefore);
    cpuAfter = await serverCpuUs(stats);
  } finally {
    limit.clear();
    await worker.stop();
  }
  return {
    perSecond: (SUBJECT_RUNS * 1000) / (last - first),
    serverCpuUs: (cpuAfter - cpuBefore) / SUBJECT_RUNS,
    processCpuUs: processUsed / SUBJECT_RUNS,
    lastId,
  };
}

/** The job options ts-reactor gives its own jobs, for the raw and the floor jobs. */
const JOB_OPTIONS = {
  attempts: INFRA_ATTEMPTS,
  backoff: { type: 'exponential', delay: INFRA_BACKOFF_MS },
  removeOnComplete: bullmqKeepJobs(DEFAULT_JOB_RETENTION.completed),
};

/** A BullMQ side: its queue, how many jobs a round runs, and what its processor does with one. */
interface PlainSide {
  readonly queue: Queue;
  readonly jobs: number;
  /** Enqueues one round's jobs (not timed). */
  enqueue(): Promise<void>;
  process(data: { readonly executionId?: string }): Promise<void>;
}

function rawSide(queue: Queue): PlainSide {
  return {
    queue,
    jobs: RAW_JOBS,
    async enqueue() {
      for (let i = 0; i < RAW_JOBS; i += ENQUEUE_BATCH) {
        await queue.addBulk(
          Array.from({ length: Math.min(ENQUEUE_BATCH, RAW_JOBS - i) }, () => ({
            name: 'empty',
            data: {},
            opts: JOB_OPTIONS,
          })),
        );
      }
    },
    process: async () => undefined,
  };
}

/** The protocol floor: job-enter, then job-leave with a copy of a finished execution's record. */
function floorSide(queue: Queue, backend: RedisBackend, final: ExecutionRecord): PlainSide {
  let seq = 0;
  const pending: ExecutionRecord = { ...final, status: 'pending', steps: {}, trace: (final.trace ?? []).slice(0, 1) };
  delete (pending as { value?: unknown }).value;
  return {
    queue,
    jobs: SUBJECT_RUNS,
    async enqueue() {
      for (let i = 0; i < SUBJECT_RUNS; i += ENQUEUE_BATCH) {
        const ids = Array.from({ length: Math.min(ENQUEUE_BATCH, SUBJECT_RUNS - i) }, () => `p7-floor-${++seq}`);
        await Promise.all(ids.map((id) => backend.store.save({ ...pending, id, rootId: id })));
        await queue.addBulk(ids.map((executionId) => ({ name: 'floor', data: { executionId }, opts: JOB_OPTIONS })));
      }
    },
    async process({ executionId = '' }) {
      const key = livenessKey(executionId);
      const owner = `p7-floor:${executionId}`;
      const live = await backend.jobLeases.enterJob({
        lease: { key, holder: { owner, executionId }, ttlMs: 30_000 },
        executionId,
        cancel: { key: cancelRequestKey(executionId), bucket: 'requested' },
      });
      if (!live.acquired || live.record === undefined) throw new Error('P7: the floor job found no record or no lease');
      await backend.jobLeases.saveAndRelease(
        { ...final, id: executionId, rootId: executionId, updatedAt: Date.now() },
        key,
        owner,
      );
    },
  };
}

async function plainRound(url: string, side: PlainSide, stats: Redis): Promise<RoundResult> {
  await side.enqueue();
  let first = 0;
  let last = 0;
  let done = 0;
  const limit = timeout(`the ${side.queue.name} round`);
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  let worker: Worker | undefined;
  const cpuBefore = await serverCpuUs(stats);
  const processBefore = process.cpuUsage();
  let cpuAfter: number;
  let processUsed: number;
  try {
    const finished = new Promise<void>((resolve) => {
      worker = new Worker(
        side.queue.name,
        async (job: { readonly data: { readonly executionId?: string } }) => {
          if (first === 0) first = performance.now();
          await side.process(job.data);
        },
        { connection, prefix: PREFIX, concurrency: CONCURRENCY },
      );
      worker.on('error', () => undefined);
      worker.on('failed', (_job, error) =>
        process.stderr.write(`P7: a ${side.queue.name} job failed: ${error.message}\n`),
      );
      worker.on('completed', () => {
        last = performance.now();
        if (++done === side.jobs) resolve();
      });
    });
    await Promise.race([finished, limit.promise]);
    processUsed = processCpuUs(processBefore);
    cpuAfter = await serverCpuUs(stats);
  } finally {
    limit.clear();
    await worker?.close();
    connection.disconnect();
  }
  return {
    perSecond: (side.jobs * 1000) / (last - first),
    serverCpuUs: (cpuAfter - cpuBefore) / side.jobs,
    processCpuUs: processUsed / side.jobs,
  };
}

/** Runs P7 and returns its verdict. */
export async function runP7(): Promise<Verdict> {
  const server = await startRedisServer();
  let runtime: RedisRuntime | undefined;
  const queues: Queue[] = [];
  const stats = new Redis(server.url, { lazyConnect: true });
  const backend = createRedisBackend({ url: server.url, prefix: PREFIX });
  try {
    await stats.connect();
    const definition = threeSteps();
    runtime = createRedisRuntime({ url: server.url, prefix: PREFIX, reactors: [definition] });
    const queueOf = (name: string): Queue => {
      const queue = new Queue(name, { connection: { url: server.url }, prefix: PREFIX });
      queue.on('error', () => undefined);
      queues.push(queue);
      return queue;
    };
    const rawJobs = rawSide(queueOf(RAW_QUEUE));
    let floor: PlainSide | undefined;
    const subject: number[] = [];
    const raw: number[] = [];
    const ratios: number[] = [];
    const floorRatios: number[] = [];
    const subjectCpu: number[] = [];
    const rawCpu: number[] = [];
    const floorCpu: number[] = [];
    const subjectProcessCpu: number[] = [];
    const rawProcessCpu: number[] = [];
    const floorProcessCpu: number[] = [];
    const serverBounds: number[] = [];
    const workerBounds: number[] = [];
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      const sr = await subjectRound(runtime, definition, stats);
      const qr = await plainRound(server.url, rawJobs, stats);
      if (floor === undefined) {
        const final = await backend.store.get(sr.lastId);
        if (final?.status !== 'completed') throw new Error('P7: no completed record to copy for the floor');
        floor = floorSide(queueOf(FLOOR_QUEUE), backend, final);
      }
      const fr = await plainRound(server.url, floor, stats);
      if (r < WARMUP_ROUNDS) continue;
      floorRatios.push(fr.perSecond / qr.perSecond);
      floorCpu.push(fr.serverCpuUs);
      floorProcessCpu.push(fr.processCpuUs);
      subjectProcessCpu.push(sr.processCpuUs);
      rawProcessCpu.push(qr.processCpuUs);
      const s = sr.perSecond;
      const q = qr.perSecond;
      subject.push(s);
      raw.push(q);
      ratios.push(s / q);
      subjectCpu.push(sr.serverCpuUs);
      rawCpu.push(qr.serverCpuUs);
      const bound = 1e6 / sr.serverCpuUs / q;
      serverBounds.push(bound);
      const workerBound = 1e6 / sr.processCpuUs / q;
      workerBounds.push(workerBound);
      emit({
        bench: 'P7',
        figure: 'round',
        round: r - WARMUP_ROUNDS + 1,
        executions_per_s: round(s, 0),
        raw_jobs_per_s: round(q, 0),
        ratio: round(s / q, 3),
        server_cpu_us_per_execution: round(sr.serverCpuUs, 1),
        server_cpu_us_per_raw_job: round(qr.serverCpuUs, 1),
        server_bound: round(bound, 3),
        floor_jobs_per_s: round(fr.perSecond, 0),
        floor_ratio: round(fr.perSecond / q, 3),
        server_cpu_us_per_floor_job: round(fr.serverCpuUs, 1),
        worker_cpu_us_per_execution: round(sr.processCpuUs, 1),
        worker_bound: round(workerBound, 3),
        worker_cpu_us_per_raw_job: round(qr.processCpuUs, 1),
        worker_cpu_us_per_floor_job: round(fr.processCpuUs, 1),
      });
    }
    const ratio = median(ratios);
    emit({
      bench: 'P7',
      figure: 'executions_per_s',
      value: round(median(subject), 0),
      rounds: subject.map((v) => round(v, 0)),
    });
    emit({ bench: 'P7', figure: 'raw_jobs_per_s', value: round(median(raw), 0), rounds: raw.map((v) => round(v, 0)) });
    emit({
      bench: 'P7',
      figure: 'server_cpu',
      us_per_execution: round(median(subjectCpu), 1),
      us_per_raw_job: round(median(rawCpu), 1),
      server_bound: round(median(serverBounds), 3),
      us_per_floor_job: round(median(floorCpu), 1),
    });
    emit({
      bench: 'P7',
      figure: 'worker_cpu',
      us_per_execution: round(median(subjectProcessCpu), 1),
      us_per_raw_job: round(median(rawProcessCpu), 1),
      worker_bound: round(median(workerBounds), 3),
      us_per_floor_job: round(median(floorProcessCpu), 1),
    });
    emit({ bench: 'P7', figure: 'floor_ratio', value: round(median(floorRatios), 3) });
    return {
      bench: 'P7',
      metric: 'worker_throughput_vs_raw_bullmq',
      value: round(ratio, 3),
      target: `>= ${TARGET}`,
      anchor: {
        raw_bullmq_jobs_per_s: round(median(raw), 0),
        executions_per_s: round(median(subject), 0),
        server_cpu_us_per_execution: round(median(subjectCpu), 1),
        server_cpu_us_per_raw_job: round(median(rawCpu), 1),
        server_bound: round(median(serverBounds), 3),
        worker_cpu_us_per_execution: round(median(subjectProcessCpu), 1),
        worker_cpu_us_per_raw_job: round(median(rawProcessCpu), 1),
        worker_bound: round(median(workerBounds), 3),
        floor_ratio: round(median(floorRatios), 3),
        concurrency: CONCURRENCY,
        executions_per_round: SUBJECT_RUNS,
        raw_jobs_per_round: RAW_JOBS,
        rounds: ROUNDS,
        steps: 3,
      },
      pass: ratio >= TARGET,
    };
  } finally {
    await runtime?.close().catch(() => undefined);
    await Promise.all(queues.map((queue) => queue.close().catch(() => undefined)));
    await backend.close().catch(() => undefined);
    stats.disconnect();
    await server.dispose();
  }
}
