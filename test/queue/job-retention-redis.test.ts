/**
 * Retention on Redis, against a throwaway redis-server with a real BullMQ worker in this process:
 * executions run by the worker leave at most `jobRetention.completed.count` completed job hashes
 * (BullMQ's, without a TTL) and every other key of theirs with a TTL; a record written with
 * `recordTtlMs: 60_000` has a TTL of at most 60 s; the default retention is what the jobs carry;
 * an option the factory cannot honour is refused before anything opens (docs/decisions/117).
 * Keys are counted with SCAN, never by timing.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createRedisRuntime,
  DEFAULT_JOB_RETENTION,
  scheduleQueueName,
  type JobRetentionOptions,
  type RedisRuntimeOptions,
} from '../../src/bullmq.js';
import { errorFromJSON, reactor, ReactorError, RuntimeOptionError } from '../../src/index.js';
import { DEFAULT_QUEUE_NAME } from '../../src/queue/policy.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const order = reactor('retention-order')
  .input({ n: z.number() })
  .step('reserve', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => `r-${n}` })
  .step('ship', { args: ($) => ({ r: $.result('reserve') }), run: ({ r }) => `shipped ${r}` })
  .returns('ship');

/** BullMQ's keys of a queue that exist whatever the number of jobs (`<prefix>:<queue>:<name>`): of the executions' queue and the schedules' tick queue. */
const QUEUE_KEYS = new Set([
  'meta',
  'id',
  'events',
  'completed',
  'failed',
  'wait',
  'active',
  'delayed',
  'prioritized',
  'paused',
  'marker',
  'pc',
  'stalled',
  'stalled-check',
  'limiter',
  'repeat',
]);

interface KeyCensus {
  /** BullMQ's hashes of single jobs (`<prefix>:<queue>:<job id>`). */
  readonly jobHashes: string[];
  /** Every other key without a TTL, BullMQ's per-queue keys (of both queues) left out. */
  readonly lasting: string[];
  /** Each other key with its PTTL. */
  readonly expiring: Map<string, number>;
}

/** Every key under `prefix`, by SCAN. */
async function census(redis: Redis, prefix: string): Promise<KeyCensus> {
  const queue = `${prefix}:${DEFAULT_QUEUE_NAME}:`;
  const ticks = `${prefix}:${scheduleQueueName()}:`;
  const census: KeyCensus = { jobHashes: [], lasting: [], expiring: new Map() };
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const inQueue = key.startsWith(queue) ? key.slice(queue.length) : undefined;
      if (inQueue !== undefined && QUEUE_KEYS.has(inQueue)) continue;
      if (key.startsWith(ticks) && QUEUE_KEYS.has(key.slice(ticks.length))) continue;
      if (inQueue !== undefined && !inQueue.includes(':') && (await redis.type(key)) === 'hash') {
        census.jobHashes.push(key);
        continue;
      }
      const pttl = await redis.pttl(key);
      if (pttl < 0) census.lasting.push(key);
      else census.expiring.set(key, pttl);
    }
  } while (cursor !== '0');
  return census;
}

/** A runtime on the suite's server with a worker, closed after the file. */
function withWorker(prefix: string, options: Partial<RedisRuntimeOptions>) {
  const runtime = createRedisRuntime({ url: server.url, prefix, reactors: [order], ...options });
  closers.push(() => runtime.close());
  runtime.startWorker({ concurrency: 8 });
  return runtime;
}

/** Starts `count` executions and waits until each has completed. */
async function runMany(runtime: ReturnType<typeof withWorker>, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++)
    ids.push((await runtime.engine.start(order, { n }, { idempotencyKey: `k-${n}` })).executionId);
  for (const id of ids)
    expect((await runtime.engine.wait(id, { timeoutMs: 60_000, pollMs: 20 }))?.status).toBe('completed');
  return ids;
}

function probe(): Redis {
  const redis = new Redis(server.url);
  closers.push(async () => redis.disconnect());
  return redis;
}

describe('retention on Redis with a worker', () => {
  test('200 executions keep at most jobRetention.completed.count job hashes; every other key has a TTL, records, claims and indexes at most recordTtlMs', async () => {
    const prefix = `ret-${crypto.randomUUID().slice(0, 8)}`;
    // A TTL no execution outlives while it waits for the worker on a loaded machine.
    const ttl = 10 * 60_000;
    const runtime = withWorker(prefix, { recordTtlMs: ttl, jobRetention: { completed: { count: 25 } } });
    const ids = await runMany(runtime, 200);
    const redis = probe();
    const found = await census(redis, prefix);
    expect(found.jobHashes.length).toBeGreaterThan(0);
    expect(found.jobHashes.length).toBeLessThanOrEqual(25);
    expect(await redis.zcard(`${prefix}:${DEFAULT_QUEUE_NAME}:completed`)).toBeLessThanOrEqual(25);
    expect(found.lasting).toEqual([]);
    const recordKeys = [...found.expiring.keys()].filter(
      (key) => key.startsWith(`${prefix}:exec:`) || key.startsWith(`${prefix}:idem:`) || key.includes(':{idx}:'),
    );
    expect(recordKeys.length).toBeGreaterThanOrEqual(ids.length * 2);
    for (const key of recordKeys) {
      expect(found.expiring.get(key), key).toBeGreaterThan(0);
      expect(found.expiring.get(key), key).toBeLessThanOrEqual(ttl);
    }
  });

  test('a record written by a worker with recordTtlMs: 60_000 has a TTL of at most 60 s, and so have its claim and index entries', async () => {
    const prefix = `ret60-${crypto.randomUUID().slice(0, 8)}`;
    const runtime = withWorker(prefix, { recordTtlMs: 60_000 });
    const [id] = await runMany(runtime, 1);
    const redis = probe();
    for (const key of [`${prefix}:exec:{${id!}}`, `${prefix}:idem:{retention-order}:k-0`, `${prefix}:{idx}:exec`]) {
      const pttl = await redis.pttl(key);
      expect(pttl, key).toBeGreaterThan(0);
      expect(pttl, key).toBeLessThanOrEqual(60_000);
    }
  });

  test('completed count 0: no job hash is left, and nothing of the executions without a TTL', async () => {
    const prefix = `ret0-${crypto.randomUUID().slice(0, 8)}`;
    const runtime = withWorker(prefix, { recordTtlMs: 60_000, jobRetention: { completed: { count: 0 } } });
    await runMany(runtime, 50);
    const found = await census(probe(), prefix);
    expect(found.jobHashes).toEqual([]);
    expect(found.lasting).toEqual([]);
  });

  test('by default every job carries the default retention: completed 1 h / 1,000, failed 7 days / 1,000', async () => {
    const prefix = `retd-${crypto.randomUUID().slice(0, 8)}`;
    const runtime = withWorker(prefix, {});
    const [id] = await runMany(runtime, 1);
    const queue = new Queue(DEFAULT_QUEUE_NAME, { connection: { url: server.url }, prefix });
    closers.push(() => queue.close());
    const job = await queue.getJob(`${id!}%3A1`);
    expect(job?.opts.removeOnComplete).toEqual({ age: 3_600, count: 1_000 });
    expect(job?.opts.removeOnFail).toEqual({ age: 7 * 24 * 3_600, count: 1_000 });
    expect(DEFAULT_JOB_RETENTION).toEqual({
      completed: { ageMs: 3_600_000, count: 1_000 },
      failed: { ageMs: 7 * 24 * 3_600_000, count: 1_000 },
    });
  });
});

describe('options a Redis factory cannot honour are refused before anything opens', () => {
  const refused = (make: () => unknown, option: string): RuntimeOptionError => {
    let thrown: unknown;
    try {
      make();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RuntimeOptionError);
    const error = thrown as RuntimeOptionError;
    expect(error.code).toBe('runtime_option_invalid');
    expect(error.details.option).toBe(option);
    const revived = errorFromJSON(JSON.parse(JSON.stringify(error)) as Parameters<typeof errorFromJSON>[0]);
    expect(revived).toBeInstanceOf(RuntimeOptionError);
    expect(ReactorError.is(revived, 'runtime_option_invalid') && revived.details).toEqual(error.details);
    return error;
  };

  test.each([0, -1, 1.5, Number.NaN, -Infinity, '60s', null])('createRedisRuntime({ recordTtlMs: %s })', (value) => {
    const error = refused(
      () => createRedisRuntime({ url: server.url, recordTtlMs: value as number, reactors: [order] }),
      'recordTtlMs',
    );
    expect(error.details.factory).toBe('createRedisRuntime');
    expect(error.message).toMatch(/positive integer of milliseconds, or Infinity/);
  });

  test('createRedisBackend({ recordTtlMs: 0 })', () => {
    expect(refused(() => createRedisBackend({ url: server.url, recordTtlMs: 0 }), 'recordTtlMs').details.factory).toBe(
      'createRedisBackend',
    );
  });

  test.each([
    [{ completed: { count: -1 } }, 'jobRetention.completed.count'],
    [{ completed: { count: 2.5 } }, 'jobRetention.completed.count'],
    [{ failed: { ageMs: 0 } }, 'jobRetention.failed.ageMs'],
    [{ failed: 'forever' }, 'jobRetention.failed'],
    [7, 'jobRetention'],
  ])('createRedisRuntime({ jobRetention: %j })', (jobRetention, option) => {
    refused(
      () =>
        createRedisRuntime({
          url: server.url,
          jobRetention: jobRetention as JobRetentionOptions,
          reactors: [order],
        }),
      option,
    );
  });
});
