/**
 * Retention on a Redis Cluster (a throwaway local cluster, a real BullMQ worker in this process):
 * `createRedisRuntime({ cluster, recordTtlMs, jobRetention })` writes the records of its worker's
 * executions with that TTL, and BullMQ keeps at most the retention's count of completed jobs under
 * the hash-tagged prefix (docs/decisions/117). Keys are read, never timed.
 */
import { Cluster } from 'ioredis';
import { afterAll, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime } from '../../src/bullmq.js';
import { reactor } from '../../src/index.js';
import { DEFAULT_QUEUE_NAME } from '../../src/queue/policy.js';
import type { RedisStore } from '../../src/storage/redis/index.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { useRedisCluster } from '../support/use-redis-cluster.js';

const cluster = useRedisCluster();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const order = reactor('retention-cluster-order')
  .input({ n: z.number() })
  .step('reserve', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => `r-${n}` })
  .returns('reserve');

test(
  'a worker on a cluster writes records with recordTtlMs and keeps at most jobRetention.completed.count jobs',
  { timeout: 120_000 },
  async () => {
    const prefix = 'retc';
    const nodes = cluster.handle.nodes;
    const runtime = createRedisRuntime({
      cluster: { nodes },
      prefix,
      reactors: [order],
      recordTtlMs: 60_000,
      jobRetention: { completed: { count: 5 } },
    });
    closers.push(() => runtime.close());
    const backend = createRedisBackend({ cluster: { nodes }, prefix });
    closers.push(() => backend.close());
    const probe = new Cluster([...nodes]);
    closers.push(async () => probe.disconnect());
    runtime.startWorker({ concurrency: 4 });
    const ids: string[] = [];
    for (let n = 0; n < 30; n++) ids.push((await runtime.engine.start(order, { n })).executionId);
    for (const id of ids)
      expect((await runtime.engine.wait(id, { timeoutMs: 60_000, pollMs: 20 }))?.status).toBe('completed');
    const keys = (backend.store as RedisStore).keys;
    for (const id of ids) {
      const pttl = await probe.pttl(keys.execution(id));
      expect(pttl, id).toBeGreaterThan(0);
      expect(pttl, id).toBeLessThanOrEqual(60_000);
    }
    expect(await probe.zcard(`{${prefix}}:${DEFAULT_QUEUE_NAME}:completed`)).toBeLessThanOrEqual(5);
    const kept = await probe.zrange(`{${prefix}}:${DEFAULT_QUEUE_NAME}:completed`, 0, -1);
    const hashes = await Promise.all(ids.map((id) => probe.exists(`{${prefix}}:${DEFAULT_QUEUE_NAME}:${id}%3A1`)));
    expect(hashes.filter((present) => present === 1).length).toBe(kept.length);
  },
);
