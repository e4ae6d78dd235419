/**
 * `MemoryJobQueue.settled(until?)`, what a test engine's in-process reader awaits before it lets
 * virtual time pass: nothing ready or running (delayed jobs wait for the clock), or the clock at
 * `until`. Manual clock, gates, no sleeps.
 */
import { describe, expect, test } from 'vitest';
import { JOB_FORMAT_VERSION, type ExecutionJob } from '../../src/ports/queue.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { ManualClock } from '../../src/testing/clock.js';

const job = (id: string): ExecutionJob => ({ v: JOB_FORMAT_VERSION, executionId: id, reactor: 'r' });
const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('settled()', () => {
  test('waits for running jobs; delayed jobs do not hold it; `until` on the clock releases it while a job still runs', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const memory = createMemoryQueue({ clock });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    memory.consumer.start(
      async (payload) => {
        if ((payload as ExecutionJob).executionId === 'slow') await gate;
      },
      { concurrency: 2 },
    );

    await memory.queue.enqueue(job('later'), { jobId: 'later', delayMs: 1_000 });
    await memory.queue.settled(); // only a delayed job: settled at once

    await memory.queue.enqueue(job('slow'), { jobId: 'slow' });
    let settled = false;
    const waiting = memory.queue.settled().then(() => (settled = true));
    let untilReached = false;
    const bounded = memory.queue.settled(clock.now() + 500).then(() => (untilReached = true));
    await flush();
    expect([settled, untilReached]).toEqual([false, false]);
    clock.advance(500); // the clock reaches `until`: that waiter goes, the other still waits for the job
    await bounded;
    await flush();
    expect([settled, untilReached]).toEqual([false, true]);
    open();
    await waiting;
    expect(memory.queue.counts()).toMatchObject({ ready: 0, running: 0, delayed: 1 });
    await memory.consumer.stop();
  });
});
