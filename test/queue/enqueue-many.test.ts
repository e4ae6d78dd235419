/**
 * `JobQueue.enqueueMany` on both queues: every entry enqueued as `enqueue` would (ids
 * deduplicated, within the call and against earlier jobs; delays kept), and on BullMQ in chunks
 * of `addBulk`. The memory queue runs on a manual clock; BullMQ on a throwaway redis-server.
 */
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnqueueEntry, ExecutionJob, JobDelivery } from '../../src/ports/queue.js';
import { createBullmqConsumer, createBullmqQueue } from '../../src/queue/bullmq.js';
import { toBullmqJobId } from '../../src/queue/job-id.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { ManualClock } from '../../src/testing/clock.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const job = (executionId: string): ExecutionJob => ({ v: 1, executionId, reactor: 'orders' });
const entry = (id: string, delayMs?: number): EnqueueEntry => ({
  job: job(id),
  options: { jobId: `${id}:1`, ...(delayMs === undefined ? {} : { delayMs }) },
});
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('memory queue: enqueueMany', () => {
  it('enqueues every entry once (ids deduplicated), delayed ones when due', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const memory = createMemoryQueue({ clock });
    const seen: JobDelivery[] = [];
    await memory.queue.enqueue(job('e0'), { jobId: 'e0:1' });
    await memory.queue.enqueueMany!([entry('e0'), entry('e1'), entry('e2'), entry('e1'), entry('e3', 1_000)]);
    memory.consumer.start(async (_payload, delivery) => void seen.push(delivery), { concurrency: 4 });
    await settle();
    expect(seen.map((d) => d.jobId).sort()).toEqual(['e0:1', 'e1:1', 'e2:1']);
    expect(memory.queue.counts()).toEqual({ ready: 0, delayed: 1, running: 0 });
    clock.advance(1_000);
    await settle();
    expect(seen.map((d) => d.jobId).sort()).toEqual(['e0:1', 'e1:1', 'e2:1', 'e3:1']);
    await memory.consumer.stop();
    await memory.queue.close();
  });

  it('refuses a bad entry before enqueuing any', async () => {
    const memory = createMemoryQueue({ clock: new ManualClock({ autoAdvance: false }) });
    await expect(memory.queue.enqueueMany!([entry('ok'), entry('bad', -1)])).rejects.toThrow(RangeError);
    expect(memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
    await memory.queue.close();
  });
});

describe('BullMQ queue: enqueueMany', () => {
  let server: RedisServerHandle;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server.dispose();
  });

  it('2,500 entries in chunks of addBulk: each job added once, with its id and delay', async () => {
    const name = 'bulk';
    const queue = createBullmqQueue({ connection: { url: server.url }, name });
    const raw = new Queue(name, { connection: { url: server.url }, prefix: 'rx' });
    const consumer = createBullmqConsumer({ connection: { url: server.url }, name });
    try {
      await queue.enqueue(job('b7'), { jobId: 'b7:1' });
      const entries = Array.from({ length: 2_500 }, (_, i) => entry(`b${i}`));
      await queue.enqueueMany!([...entries, entry('b7'), entry('late', 60_000)]);
      expect(await raw.getJobCounts('wait', 'delayed')).toEqual({ wait: 2_500, delayed: 1 });
      const late = await raw.getJob(toBullmqJobId('late:1'));
      expect(late?.opts.delay).toBe(60_000);
      const seen = new Set<string>();
      let deliveries = 0;
      consumer.start(
        async (_payload, delivery) => {
          deliveries += 1;
          seen.add(delivery.jobId);
        },
        { concurrency: 50 },
      );
      await expect.poll(() => seen.size, { timeout: 20_000, interval: 50 }).toBe(2_500);
      expect(deliveries).toBe(2_500);
      expect(seen.has('late:1')).toBe(false);
    } finally {
      await consumer.stop();
      await raw.close();
      await queue.close();
    }
  }, 60_000);
});
