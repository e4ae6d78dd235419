/**
 * `JobQueue.jobStates` — what the recovery sweep asks before it re-enqueues an execution — on
 * both adapters: queued (waiting or delayed), active, finished, missing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ExecutionJob, JobConsumer, JobQueue } from '../../src/ports/queue.js';
import { createBullmqConsumer, createBullmqQueue } from '../../src/queue/bullmq.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { useRedisServer } from '../support/use-redis-server.js';

const job = (executionId: string): ExecutionJob => ({ v: 1, executionId, reactor: 'orders' });
const server = useRedisServer();
const closers: (() => Promise<void>)[] = [];
let seq = 0;

afterAll(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function until(probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const adapters: readonly { readonly name: string; readonly make: () => { queue: JobQueue; consumer: JobConsumer } }[] =
  [
    { name: 'memory', make: () => createMemoryQueue() },
    {
      name: 'bullmq',
      make: () => {
        const names = { connection: { url: server.url }, name: `states-${++seq}` };
        const queue = createBullmqQueue(names);
        const consumer = createBullmqConsumer(names);
        closers.push(
          () => queue.close(),
          () => consumer.stop(),
        );
        return { queue, consumer };
      },
    },
  ];

describe.each(adapters)('jobStates ($name)', ({ make }) => {
  it('says queued, active, finished or missing, in the order asked', async () => {
    const { queue, consumer } = make();
    await queue.enqueue(job('e1'), { jobId: 'e1:1' });
    await queue.enqueue(job('e2'), { jobId: 'e2:1', delayMs: 60_000 });
    expect(await queue.jobStates?.(['e1:1', 'e2:1', 'e3:1'])).toEqual(['queued', 'queued', 'missing']);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered = false;
    consumer.start(
      async (_payload, delivery) => {
        if (delivery.jobId !== 'e1:1') return;
        entered = true;
        await held;
      },
      { concurrency: 2 },
    );
    await until(async () => entered);
    expect(await queue.jobStates?.(['e1:1'])).toEqual(['active']);
    release();
    await until(async () => (await queue.jobStates?.(['e1:1']))?.[0] === 'finished');
    expect(await queue.jobStates?.(['e2:1', 'e1:1'])).toEqual(['queued', 'finished']);
    await consumer.stop();
  });
});
