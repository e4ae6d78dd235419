/**
 * The BullMQ queue as the Queue page reads it (`runtime.queueInspector`), over a throwaway
 * redis-server with an in-test worker: counts by state, an active job with its start, a delayed
 * job with its due time, a prioritized waiting job once no worker takes jobs, and the workers
 * online with the concurrency their names carry; a BullMQ client name of another program is read
 * without a concurrency.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { reactor } from '../../src/index.js';
import { workerName, workerView } from '../../src/queue/bullmq-inspect.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { gate, until } from './fixtures.js';

const held = gate();
const slow = reactor('slow')
  .input({ n: z.number() })
  .step('work', { run: async () => (await held.promise, 'done') })
  .build();

let redis: RedisServerHandle;
let runtime: RedisRuntime;

beforeAll(async () => {
  redis = await startRedisServer();
  runtime = createRedisRuntime({ url: redis.url, prefix: 'queue-view', reactors: [slow] });
});

afterAll(async () => {
  held.open();
  await runtime?.close();
  await redis?.dispose();
});

test('counts, an active and a delayed job, and the worker with its concurrency', async () => {
  const worker = runtime.startWorker({ concurrency: 3 });
  const active = await runtime.engine.start(slow, { n: 1 });
  const snapshotWith = (probe: (s: Awaited<ReturnType<typeof runtime.queueInspector.inspectQueue>>) => boolean) =>
    until(
      async () => {
        const s = await runtime.queueInspector.inspectQueue();
        return probe(s) ? s : undefined;
      },
      'the queue to show it',
      15_000,
    );
  const before = Date.now();
  const later = await runtime.engine.start(slow, { n: 2 }, { delay: '1h' });
  const s = await snapshotWith((x) => x.active.length === 1 && x.delayed.length === 1 && x.workers.length === 1);
  expect(s.name).toBe('ts-reactor');
  expect(s.counts).toMatchObject({ active: 1, delayed: 1, waiting: 0 });
  expect(s.active[0]).toMatchObject({ executionId: active.executionId, reactor: 'slow', deliveries: 1 });
  expect(s.active[0]!.startedAt).toBeGreaterThanOrEqual(before - 1_000);
  expect(s.delayed[0]!.executionId).toBe(later.executionId);
  expect(s.delayed[0]!.dueAt! - s.delayed[0]!.addedAt!).toBe(3_600_000);
  expect(s.workers[0]).toMatchObject({ name: workerName(3).replace(/-c3$/, ''), concurrency: 3 });
  expect(s.workers[0]!.name).toContain(`-${process.pid}`);

  held.open();
  await worker.close();
  await runtime.engine.start(slow, { n: 3 }, { priority: 5 });
  const idle = await snapshotWith((x) => x.workers.length === 0 && x.waiting.length === 1);
  expect(idle.counts['prioritized']).toBe(1);
  expect(idle.waiting[0]).toMatchObject({ reactor: 'slow', priority: 5 });
  expect(idle.oldestWaitingAt).toBe(idle.waiting[0]!.addedAt);
});

test('a BullMQ client name of another program is read without a concurrency', () => {
  expect(workerView({ rawname: 'bull:dHMtcmVhY3Rvcg==:w:reports', addr: '10.0.0.7:51234', age: '12' })).toEqual({
    name: 'reports',
    address: '10.0.0.7:51234',
    ageMs: 12_000,
  });
  expect(workerView({ rawname: 'bull:dHMtcmVhY3Rvcg==' })).toEqual({ name: '(unnamed worker)' });
});
