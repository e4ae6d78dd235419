/**
 * Nothing of an execution stays on Redis for ever: after executions ran in a worker (reactor-
 * level lock, step-level semaphore, liveness lease per execution), every key ts-reactor wrote
 * carries a TTL. BullMQ's own keys (`<prefix>:<queue>:…`) follow BullMQ's retention policy and
 * are left out. A real redis-server, a real worker.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { Redis } from 'ioredis';
import { createRedisRuntime, scheduleQueueName } from '../../src/bullmq.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { reactor } from '../../src/index.js';
import { DEFAULT_QUEUE_NAME } from '../../src/queue/policy.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

let server: RedisServerHandle;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.dispose();
});

async function keysWithoutTtl(redis: Redis, prefix: string): Promise<string[]> {
  const lasting: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    for (const key of keys) {
      if (key.startsWith(`${prefix}:${DEFAULT_QUEUE_NAME}:`)) continue; // BullMQ's own keys
      if (key.startsWith(`${prefix}:${scheduleQueueName()}:`)) continue; // BullMQ's keys of the schedules' tick queue
      if ((await redis.pttl(key)) < 0) lasting.push(key);
    }
  } while (cursor !== '0');
  return lasting;
}

describe('Redis keys of worker executions', () => {
  test('every key ts-reactor leaves behind has a TTL (records, indexes, idempotency, lock fences, liveness fences)', async () => {
    const prefix = `exp-${crypto.randomUUID().slice(0, 8)}`;
    const order = reactor('expiry-order')
      .input({ id: z.string() })
      .withLock({ key: ({ id }) => `order:${id}` })
      .step('reserve', {
        args: ($) => ({ id: $.input('id') }),
        semaphore: { key: () => 'stock', limit: 2 },
        run: ({ id }) => `r-${id}`,
      })
      .step('ship', { args: ($) => ({ r: $.result('reserve') }), run: ({ r }) => `shipped ${r}` })
      .returns('ship');
    const runtime = createRedisRuntime({ url: server.url, prefix, reactors: [order] });
    const redis = new Redis(server.url);
    try {
      runtime.startWorker({ concurrency: 4 });
      const started = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          runtime.engine.start(order, { id: String(i % 4) }, { idempotencyKey: `k-${i}` }),
        ),
      );
      for (const s of started)
        expect((await runtime.engine.wait(s.executionId, { timeoutMs: 15_000, pollMs: 10 }))?.status).toBe('completed');
      expect(await keysWithoutTtl(redis, prefix)).toEqual([]);
    } finally {
      redis.disconnect();
      await runtime.close();
    }
  });
});

describe('fence keys that expire', () => {
  test('a lock granted after its fence key expired still gets a greater token (the time floor)', async () => {
    const backend = createRedisBackend({ url: server.url, prefix: `fence-${crypto.randomUUID().slice(0, 8)}` });
    const redis = new Redis(server.url);
    try {
      const c = backend.coordinator;
      const first = await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 5_000 });
      expect(first.acquired).toBe(true);
      const fence = (await redis.keys('fence-*:{lock:k}:fence'))[0]!;
      expect(await redis.pttl(fence)).toBeGreaterThan(86_400_000);
      await c.lockRelease('k', 'a');
      await redis.del(fence); // as its TTL would
      const second = await c.lockAcquire({ key: 'k', holder: { owner: 'b' }, ttlMs: 5_000 });
      expect(first.acquired && second.acquired && BigInt(second.token) > BigInt(first.token)).toBe(true);
    } finally {
      redis.disconnect();
      await backend.close();
    }
  });
});
