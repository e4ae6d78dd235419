/**
 * P8: memory of completed executions retained on Redis. 10,000 executions of a three-step
 * reactor run in-process over `createRedisBackend` (store and coordinator on one throwaway
 * server) with a short configured record TTL. Figures: Redis `used_memory` growth per retained
 * execution (bytes), keys per execution, and whether every byte of that state goes away on its
 * own once the TTL has passed — no sweeper, no flush.
 *
 * Then the same reactor, 20,000 executions run by a worker (`createRedisRuntime`, one worker in
 * this process, a record TTL of 10 minutes so that no record expires before its job runs, the
 * default BullMQ job retention) on a second server, counted by SCAN once they have finished:
 * BullMQ's completed-job hashes (kept by count, without a TTL) and per-queue keys with their
 * `MEMORY USAGE`, the executions' liveness-lock fence keys (kept a day past their lease), and
 * every other key of ts-reactor with its TTL.
 *
 * Verdict: `pass` when the database of the inline round is back to its starting key count within
 * the TTL plus a grace of {@link EXPIRY_GRACE_MS} after the last write (Redis expires keys lazily
 * and by sampling, so an expired key may linger briefly), and the worker round leaves no key of
 * ts-reactor without a TTL, none but the fence keys with a TTL longer than the records', and at
 * most the retention's count of completed-job hashes. The bytes per execution are reported, with
 * the size of one serialized record beside them as the anchor.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { createEngine, reactor } from '../src/index.js';
import { createRedisRuntime, DEFAULT_JOB_RETENTION } from '../src/bullmq.js';
import { DEFAULT_QUEUE_NAME } from '../src/queue/policy.js';
import { createRedisBackend } from '../src/storage/redis/index.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { emit, round, type Verdict } from './support/runner.js';

const EXECUTIONS = 10_000;
const IN_FLIGHT = 64;
const RECORD_TTL_MS = 15_000;
const EXPIRY_GRACE_MS = 5_000;
const POLL_MS = 100;
/** Executions of the worker round. */
const WORKER_EXECUTIONS = Number(process.env['P8_WORKER_EXECUTIONS'] ?? 20_000);
const WORKER_CONCURRENCY = 32;
const START_BATCH = 1_000;
const WORKER_PREFIX = 'p8w';
/** The worker round's record TTL: long enough that no record expires before its job runs on a busy machine. */
const WORKER_RECORD_TTL_MS = 10 * 60_000;

const order = reactor('p8-order')
  .input({ orderId: z.string() })
  .step('reserve', {
    args: ($) => ({ orderId: $.input('orderId') }),
    run: ({ orderId }) => ({ reservation: `r-${orderId}` }),
  })
  .step('charge', {
    args: ($) => ({ reservation: $.result('reserve', 'reservation') }),
    run: ({ reservation }) => ({ chargeId: `c-${reservation}`, amount: 42 }),
  })
  .step('notify', { args: ($) => ({ charge: $.result('charge') }), run: () => true })
  .build();

async function memory(redis: Redis): Promise<{ readonly usedBytes: number; readonly keys: number }> {
  const info = await redis.info('memory');
  const used = /^used_memory:(\d+)/m.exec(info);
  return { usedBytes: Number(used?.[1] ?? 0), keys: await redis.dbsize() };
}

async function runAll(run: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < EXECUTIONS) await run(next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

/** Runs P8 and returns its verdict (figures are emitted on the way). */
export async function runP8(): Promise<Verdict> {
  const inline = await inlineRound();
  const worker = await workerRound();
  return {
    ...inline,
    anchor: { ...inline.anchor, worker },
    target: `${inline.target}; a worker's ${WORKER_EXECUTIONS} executions leave no key of ts-reactor without a TTL, none but the fence keys longer than the records' TTL, and at most ${DEFAULT_JOB_RETENTION.completed.count} completed-job hashes`,
    pass: inline.pass && worker.pass,
  };
}

/**
 * What a key of the worker round is: BullMQ's (a per-queue key, or a finished job's hash), a
 * lock's fence — an execution's liveness lock's, the recovery sweep's — (kept a day past the
 * lease, docs/decisions/052), or any other key of ts-reactor's.
 */
function kindOf(key: string, type: string): 'queue' | 'job' | 'fence' | 'reactor' {
  const queue = `${WORKER_PREFIX}:${DEFAULT_QUEUE_NAME}`;
  if (key.startsWith(`${WORKER_PREFIX}:{lock:`) && key.endsWith('}:fence')) return 'fence';
  if (!key.startsWith(`${queue}:`) && !key.startsWith(`${queue}-schedules:`)) return 'reactor';
  const rest = key.slice(key.indexOf(':', WORKER_PREFIX.length + 1) + 1);
  return type === 'hash' && rest !== 'meta' && !rest.includes(':') ? 'job' : 'queue';
}

interface Census {
  readonly keys: number;
  readonly jobHashes: number;
  readonly jobHashBytes: number;
  readonly queueKeys: number;
  readonly queueKeyBytes: number;
  readonly fenceKeys: number;
  readonly fenceKeyBytes: number;
  /** ts-reactor's other keys (records, claims, indexes …). */
  readonly reactorKeys: number;
  /** Keys of ts-reactor (fences included) without a TTL. */
  readonly lastingReactorKeys: number;
  /** The longest PTTL of ts-reactor's keys other than fences (ms). */
  readonly longestOtherTtlMs: number;
  readonly usedBytes: number;
}

/** Every key of the worker round by kind (SCAN, each page's TYPE, PTTL and `MEMORY USAGE` in one pipeline). */
async function census(redis: Redis): Promise<Census> {
  const counts = { keys: 0, jobHashes: 0, jobHashBytes: 0, queueKeys: 0, queueKeyBytes: 0 };
  const more = { fenceKeys: 0, fenceKeyBytes: 0, reactorKeys: 0, lastingReactorKeys: 0, longestOtherTtlMs: 0 };
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of batch) pipeline.type(key).pttl(key).memory('USAGE', key);
    const replies = (await pipeline.exec()) ?? [];
    batch.forEach((key, i) => {
      const [type, pttl, bytes] = [0, 1, 2].map((j) => replies[i * 3 + j]?.[1]);
      if (type === 'none') return; // expired meanwhile
      counts.keys++;
      const size = Number(bytes ?? 0);
      const kind = kindOf(key, String(type));
      if (kind === 'job') {
        counts.jobHashes++;
        counts.jobHashBytes += size;
      } else if (kind === 'queue') {
        counts.queueKeys++;
        counts.queueKeyBytes += size;
      } else {
        if (kind === 'fence') {
          more.fenceKeys++;
          more.fenceKeyBytes += size;
        } else {
          more.reactorKeys++;
          more.longestOtherTtlMs = Math.max(more.longestOtherTtlMs, Number(pttl));
        }
        if (Number(pttl) < 0) more.lastingReactorKeys++;
      }
    });
  } while (cursor !== '0');
  const { usedBytes } = await memory(redis);
  return { ...counts, ...more, usedBytes };
}

/** 20,000 executions run by a worker; what they leave on Redis once they have finished. */
async function workerRound(): Promise<{
  readonly executions: number;
  readonly jobHashes: number;
  readonly jobHashBytes: number;
  readonly fenceKeys: number;
  readonly pass: boolean;
}> {
  const server = await startRedisServer();
  const probe = new Redis(server.url);
  const runtime = createRedisRuntime({
    url: server.url,
    prefix: WORKER_PREFIX,
    reactors: [order],
    recordTtlMs: WORKER_RECORD_TTL_MS,
  });
  try {
    const before = await memory(probe);
    let done = 0;
    let failed = 0;
    const finished = new Promise<void>((resolve) => {
      const unsubscribe = runtime.engine.subscribe((event) => {
        if (event.type === 'run.failed') failed++;
        if (event.type !== 'run.completed' && event.type !== 'run.failed') return;
        if (++done === WORKER_EXECUTIONS) {
          unsubscribe();
          resolve();
        }
      });
    });
    const started = performance.now();
    runtime.startWorker({ concurrency: WORKER_CONCURRENCY });
    for (let from = 0; from < WORKER_EXECUTIONS; from += START_BATCH) {
      const size = Math.min(START_BATCH, WORKER_EXECUTIONS - from);
      await runtime.engine.startMany(
        Array.from({ length: size }, (_, i) => ({ reactor: order, input: { orderId: `w-${from + i}` } })),
      );
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      finished,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`P8: ${done} of ${WORKER_EXECUTIONS} finished in 600 s`)), 600_000);
      }),
    ]).finally(() => clearTimeout(timer));
    const lastWrite = performance.now();
    await runtime.close(); // nothing more is written; the counts below are what stays
    const after = await census(probe);
    emit({
      bench: 'P8',
      phase: 'worker',
      executions: WORKER_EXECUTIONS,
      failed,
      seconds: round((lastWrite - started) / 1000, 2),
      bytesPerExecution: Math.round((after.usedBytes - before.usedBytes) / WORKER_EXECUTIONS),
      keysPerExecution: round((after.keys - before.keys) / WORKER_EXECUTIONS, 3),
      completedJobHashes: after.jobHashes,
      jobHashBytes: after.jobHashBytes,
      bytesPerJobHash: after.jobHashes === 0 ? 0 : Math.round(after.jobHashBytes / after.jobHashes),
      queueKeys: after.queueKeys,
      queueKeyBytes: after.queueKeyBytes,
      fenceKeys: after.fenceKeys,
      fenceKeyBytes: after.fenceKeyBytes,
      otherReactorKeys: after.reactorKeys,
      otherReactorKeysLongestTtlMs: after.longestOtherTtlMs,
      reactorKeysWithoutTtl: after.lastingReactorKeys,
      retention: DEFAULT_JOB_RETENTION,
    });
    const pass =
      failed === 0 &&
      after.lastingReactorKeys === 0 &&
      after.longestOtherTtlMs <= WORKER_RECORD_TTL_MS &&
      after.jobHashes <= DEFAULT_JOB_RETENTION.completed.count;
    return {
      executions: WORKER_EXECUTIONS,
      jobHashes: after.jobHashes,
      jobHashBytes: after.jobHashBytes,
      fenceKeys: after.fenceKeys,
      pass,
    };
  } finally {
    await runtime.close();
    probe.disconnect();
    await server.dispose();
  }
}

/** 10,000 executions run inline over `createRedisBackend`: their memory, and that all of it expires. */
async function inlineRound(): Promise<Verdict> {
  const server = await startRedisServer();
  const probe = new Redis(server.url);
  const backend = createRedisBackend({ url: server.url, recordTtlMs: RECORD_TTL_MS });
  try {
    const engine = createEngine({ store: backend.store, coordinator: backend.coordinator });
    engine.register(order);
    const before = await memory(probe);
    let lastId = '';
    const started = performance.now();
    await runAll(async (i) => {
      const result = await engine.run(order, { orderId: `o-${i}` });
      if (result.status !== 'completed') throw new Error(`execution ${i} ended ${result.status}`);
      lastId = result.executionId;
    });
    const lastWrite = performance.now();
    const after = await memory(probe);
    const recordBytes = Buffer.byteLength(JSON.stringify(await backend.store.get(lastId)));
    const bytesPerExecution = (after.usedBytes - before.usedBytes) / EXECUTIONS;
    emit({
      bench: 'P8',
      phase: 'retained',
      executions: EXECUTIONS,
      seconds: round((lastWrite - started) / 1000, 2),
      bytesPerExecution: Math.round(bytesPerExecution),
      keysPerExecution: round((after.keys - before.keys) / EXECUTIONS, 3),
      recordBytes,
      recordTtlMs: RECORD_TTL_MS,
    });

    let keys = after.keys;
    while (keys > before.keys && performance.now() - lastWrite < RECORD_TTL_MS + EXPIRY_GRACE_MS) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      keys = await probe.dbsize();
    }
    const expiredAfterMs = performance.now() - lastWrite;
    const left = await memory(probe);
    const expired = left.keys <= before.keys;
    emit({
      bench: 'P8',
      phase: 'expired',
      keysLeft: left.keys - before.keys,
      bytesLeftPerExecution: Math.round((left.usedBytes - before.usedBytes) / EXECUTIONS),
      expiredAfterMs: Math.round(expiredAfterMs),
    });
    return {
      bench: 'P8',
      metric: 'bytes_per_retained_execution',
      value: Math.round(bytesPerExecution),
      target: `reported; all state expired within recordTtlMs (${RECORD_TTL_MS} ms) + ${EXPIRY_GRACE_MS} ms`,
      anchor: {
        serializedRecordBytes: recordBytes,
        keysPerExecution: round((after.keys - before.keys) / EXECUTIONS, 3),
        expiredAfterMs: Math.round(expiredAfterMs),
      },
      pass: expired,
    };
  } finally {
    await backend.close();
    probe.disconnect();
    await server.dispose();
  }
}
