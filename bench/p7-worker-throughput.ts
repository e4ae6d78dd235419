/**
 * P7: worker throughput. An uncontended 3-step reactor (no coordination) processed in worker
 * mode — `createRedisRuntime(...).startWorker({ concurrency: 16 })` — vs raw BullMQ: a plain
 * `Queue` + `Worker` with an empty processor, same concurrency, same server, same process, same
 * run (rounds alternate). Each round first enqueues its N executions / jobs with no worker
 * running, then starts a worker and times from the first delivery to the last completion
 * (`run.completed` / the Worker's `completed` event). Figure: executions/s ÷ jobs/s (median of
 * per-round ratios); target ≥ 0.35.
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
const ENQUEUE_BATCH = 100;
const ROUND_TIMEOUT_MS = 60_000;

function threeSteps(): AnyReactorDefinition {
  return reactor('p7-three-steps')
    .step('a', { run: () => 1 })
    .step('b', { args: ($) => ({ a: $.result('a') }), run: ({ a }) => a + 1 })
    .step('c', { args: ($) => ({ b: $.result('b') }), run: ({ b }) => b + 1 })
    .returns('c');
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

async function subjectRound(runtime: RedisRuntime, definition: AnyReactorDefinition): Promise<number> {
  for (let i = 0; i < SUBJECT_RUNS; i += ENQUEUE_BATCH) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(ENQUEUE_BATCH, SUBJECT_RUNS - i) }, () => runtime.engine.start(definition, {})),
    );
    if (batch.some((r) => r.status !== 'queued')) throw new Error('P7: a start was not queued');
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
  const worker = runtime.startWorker({ concurrency: CONCURRENCY });
  try {
    await Promise.race([finished, limit.promise]);
  } finally {
    limit.clear();
    await worker.stop();
  }
  return (SUBJECT_RUNS * 1000) / (last - first);
}

async function rawRound(url: string, queue: Queue): Promise<number> {
  const jobOptions = {
    attempts: INFRA_ATTEMPTS,
    backoff: { type: 'exponential', delay: INFRA_BACKOFF_MS },
    removeOnComplete: bullmqKeepJobs(DEFAULT_JOB_RETENTION.completed),
  };
  for (let i = 0; i < RAW_JOBS; i += ENQUEUE_BATCH) {
    await queue.addBulk(
      Array.from({ length: Math.min(ENQUEUE_BATCH, RAW_JOBS - i) }, () => ({
        name: 'empty',
        data: {},
        opts: jobOptions,
      })),
    );
  }
  let first = 0;
  let last = 0;
  let done = 0;
  const limit = timeout('the raw BullMQ round');
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  let worker: Worker | undefined;
  try {
    const finished = new Promise<void>((resolve) => {
      worker = new Worker(
        RAW_QUEUE,
        async () => {
          if (first === 0) first = performance.now();
        },
        { connection, prefix: PREFIX, concurrency: CONCURRENCY },
      );
      worker.on('error', () => undefined);
      worker.on('completed', () => {
        last = performance.now();
        if (++done === RAW_JOBS) resolve();
      });
    });
    await Promise.race([finished, limit.promise]);
  } finally {
    limit.clear();
    await worker?.close();
    connection.disconnect();
  }
  return (RAW_JOBS * 1000) / (last - first);
}

/** Runs P7 and returns its verdict. */
export async function runP7(): Promise<Verdict> {
  const server = await startRedisServer();
  let runtime: RedisRuntime | undefined;
  let queue: Queue | undefined;
  try {
    const definition = threeSteps();
    runtime = createRedisRuntime({ url: server.url, prefix: PREFIX, reactors: [definition] });
    queue = new Queue(RAW_QUEUE, { connection: { url: server.url }, prefix: PREFIX });
    queue.on('error', () => undefined);
    const subject: number[] = [];
    const raw: number[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      const s = await subjectRound(runtime, definition);
      const q = await rawRound(server.url, queue);
      if (r < WARMUP_ROUNDS) continue;
      subject.push(s);
      raw.push(q);
      ratios.push(s / q);
      emit({
        bench: 'P7',
        figure: 'round',
        round: r - WARMUP_ROUNDS + 1,
        executions_per_s: round(s, 0),
        raw_jobs_per_s: round(q, 0),
        ratio: round(s / q, 3),
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
    return {
      bench: 'P7',
      metric: 'worker_throughput_vs_raw_bullmq',
      value: round(ratio, 3),
      target: `>= ${TARGET}`,
      anchor: {
        raw_bullmq_jobs_per_s: round(median(raw), 0),
        executions_per_s: round(median(subject), 0),
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
    await queue?.close().catch(() => undefined);
    await server.dispose();
  }
}
