/**
 * What ts-reactor reads of BullMQ's objects beyond its API (src/queue/bullmq-internals.ts) is
 * there in the BullMQ installed (CI runs this on BullMQ 5 and 6): a queue's and a worker's
 * command client (write coalescing, decision 041) and a worker's blocking connection (its close
 * during an outage, decision 094). Were one of them gone, those would silently stop working.
 */
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { blockingConnectionOf, commandClientOf, onBackend } from '../../src/queue/bullmq-internals.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

let server: RedisServerHandle;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.dispose();
});

const major = Number((await import('bullmq/package.json', { with: { type: 'json' } })).default.version.split('.')[0]);

test(`on BullMQ ${major}: the command clients of a queue and a worker, and the worker's blocking connection, are found`, async () => {
  const queue = new Queue('internals', { connection: { url: server.url }, prefix: 'bi' });
  const worker = new Worker('internals', async () => undefined, {
    connection: { url: server.url, maxRetriesPerRequest: null },
    prefix: 'bi',
    autorun: false,
  });
  try {
    expect(onBackend(queue)).toBe(major >= 6);
    expect(onBackend(worker)).toBe(major >= 6);
    for (const owner of [queue, worker]) {
      const client = (await commandClientOf(owner)) as Redis | undefined;
      expect(typeof client?.ping).toBe('function');
      expect(await client!.ping()).toBe('PONG');
    }
    const blocking = blockingConnectionOf(worker);
    expect(typeof blocking?.status).toBe('string');
    expect(typeof (blocking?._client as Redis | undefined)?.disconnect).toBe('function');
  } finally {
    await worker.close();
    await queue.close();
  }
});
