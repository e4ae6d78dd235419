/**
 * The queue reader of the worker's gauges over a throwaway redis-server: BullMQ's job counts by
 * state, and the oldest runnable job's wait (a job that was delayed counts from its due time).
 */
import { Queue } from 'bullmq';
import { describe, expect, test } from 'vitest';
import { createBullmqQueueStats, QUEUE_JOB_STATES } from '../../src/queue/bullmq-stats.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();

describe('createBullmqQueueStats', () => {
  test('counts jobs by state and measures the oldest runnable job from when it could run', async () => {
    const prefix = `qs-${Math.random().toString(36).slice(2, 8)}`;
    const queue = new Queue('q', { connection: { url: server.url }, prefix });
    let now = Date.now();
    const stats = createBullmqQueueStats({ url: server.url, prefix, name: 'q', now: () => now });
    try {
      expect(await stats.jobCounts()).toEqual(Object.fromEntries(QUEUE_JOB_STATES.map((s) => [s, 0])));
      expect(await stats.oldestWaitingMs()).toBeUndefined();
      const first = await queue.add('x', {}, { jobId: 'first' });
      await queue.add('x', {}, { jobId: 'second' });
      await queue.add('x', {}, { jobId: 'later', delay: 60_000 });
      await queue.add('x', {}, { jobId: 'urgent', priority: 1 });
      expect(await stats.jobCounts()).toMatchObject({ waiting: 2, delayed: 1, prioritized: 1, active: 0 });
      now = first.timestamp + 1_500;
      expect(await stats.oldestWaitingMs()).toBe(1_500);
      await queue.drain(); // waiting and prioritized gone; the delayed job stays
      expect(await stats.oldestWaitingMs()).toBeUndefined();
      const later = await queue.getJob('later');
      now = later!.timestamp + 1_000;
      await later!.promote(); // BullMQ sets a promoted job's delay to 0: it has waited since it was added
      expect(await stats.oldestWaitingMs()).toBe(1_000);
    } finally {
      await stats.close();
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  test('a queue name with a colon is a RangeError', () => {
    expect(() => createBullmqQueueStats({ url: server.url, name: 'a:b' })).toThrow(RangeError);
  });
});
