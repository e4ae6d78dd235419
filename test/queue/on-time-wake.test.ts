/**
 * A delayed job is promoted at its due time by the process that added it (a BullMQ worker alone
 * would only notice it at Redis's next `hz` tick). Shown without any worker: BullMQ itself never
 * moves a delayed job while no worker asks for one, so a job that leaves `delayed` was promoted.
 */
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createBullmqQueue } from '../../src/queue/bullmq.js';
import { toBullmqJobId } from '../../src/queue/job-id.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

let server: RedisServerHandle;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.dispose();
});

describe('on-time wakes of delayed jobs', () => {
  test('a delayed job leaves "delayed" at its due time; a closed queue promotes nothing more', async () => {
    const names = { prefix: 'otw', name: 'on-time' };
    const jobs = createBullmqQueue({ connection: { url: server.url }, ...names });
    const reader = new Queue(names.name, { connection: { url: server.url }, prefix: names.prefix });
    try {
      const job = { v: 1, executionId: 'e-1', reactor: 'r' } as const;
      await jobs.enqueue(job, { jobId: 'e-1:1', delayMs: 300 });
      await jobs.enqueue({ ...job, executionId: 'e-2' }, { jobId: 'e-2:1', delayMs: 20 * 60_000 }); // beyond the watched range
      expect(await reader.getJobState(toBullmqJobId('e-1:1'))).toBe('delayed');
      await expect.poll(() => reader.getJobState(toBullmqJobId('e-1:1')), { timeout: 10_000 }).toBe('waiting');
      expect(await reader.getJobState(toBullmqJobId('e-2:1'))).toBe('delayed');

      await jobs.enqueue({ ...job, executionId: 'e-3' }, { jobId: 'e-3:1', delayMs: 300 });
      await jobs.close();
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(await reader.getJobState(toBullmqJobId('e-3:1'))).toBe('delayed');
    } finally {
      await jobs.close();
      await reader.close();
    }
  });

  test('a job whose enqueuer accepts it early (earlyMs) is promoted that much before its due time', async () => {
    const names = { prefix: 'otw', name: 'early' };
    const jobs = createBullmqQueue({ connection: { url: server.url }, ...names });
    const reader = new Queue(names.name, { connection: { url: server.url }, prefix: names.prefix });
    try {
      const added = Date.now();
      const delayMs = 10_000;
      await jobs.enqueue({ v: 1, executionId: 'e-1', reactor: 'r' }, { jobId: 'e-1:1', delayMs, earlyMs: 6_000 });
      await expect
        .poll(() => reader.getJobState(toBullmqJobId('e-1:1')), { timeout: 20_000, interval: 20 })
        .toBe('waiting');
      // Promoted about 6 s before its due time (a timer of this process; BullMQ alone never moves a job early).
      expect(Date.now()).toBeLessThan(added + delayMs);
    } finally {
      await jobs.close();
      await reader.close();
    }
  });
});
