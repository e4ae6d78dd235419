/**
 * The embedded queue on a manual clock: delays and backoffs move only when the test advances
 * time, so nothing here sleeps.
 */
import { describe, expect, it } from 'vitest';
import { MalformedJobError } from '../../src/errors.js';
import type { ExecutionJob, JobDelivery } from '../../src/ports/queue.js';
import { createMemoryQueue, type JobFailure } from '../../src/queue/memory.js';
import { INFRA_BACKOFF_MS } from '../../src/queue/policy.js';
import { ManualClock } from '../../src/testing/clock.js';

const job = (executionId: string): ExecutionJob => ({ v: 1, executionId, reactor: 'orders' });

/** Lets queued microtasks and promise chains run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function setup() {
  const clock = new ManualClock({ autoAdvance: false });
  const failures: JobFailure[] = [];
  const memory = createMemoryQueue({ clock, onFailed: (failure) => failures.push(failure) });
  const calls: { payload: unknown; delivery: JobDelivery }[] = [];
  return {
    clock,
    memory,
    failures,
    calls,
    record: async (payload: unknown, delivery: JobDelivery) => void calls.push({ payload, delivery }),
  };
}

describe('memory queue', () => {
  it('runs an enqueued job with its payload, id and first delivery', async () => {
    const { memory, calls, record } = setup();
    memory.consumer.start(record, { concurrency: 1 });
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1' });
    await memory.drain();
    expect(calls).toEqual([{ payload: job('e1'), delivery: { jobId: 'e1:1', delivery: 1 } }]);
  });

  it('runs a delayed job only once the clock reaches its time', async () => {
    const { clock, memory, calls, record } = setup();
    memory.consumer.start(record, { concurrency: 1 });
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs: 1_000 });
    await settle();
    expect(memory.queue.counts()).toEqual({ ready: 0, delayed: 1, running: 0 });
    clock.advance(999);
    await settle();
    expect(calls).toHaveLength(0);
    clock.advance(1);
    await memory.drain();
    expect(calls.map((c) => c.delivery.jobId)).toEqual(['e1:1']);
  });

  it('discard removes a delayed or ready job, which never runs and is not added again; not a running one', async () => {
    const { clock, memory, calls, record } = setup();
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs: 1_000 });
    await memory.queue.enqueue(job('e2'), { jobId: 'e2:1' });
    expect(await memory.queue.discard('e1:1')).toBe(true);
    expect(await memory.queue.discard('e2:1')).toBe(true);
    expect(await memory.queue.discard('e2:1')).toBe(false);
    expect(await memory.queue.discard('unknown:1')).toBe(false);
    expect(memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1' }); // a known id: a no-op
    const gate = deferred();
    memory.consumer.start(async (payload, delivery) => (await record(payload, delivery), await gate.promise), {
      concurrency: 1,
    });
    await memory.queue.enqueue(job('e3'), { jobId: 'e3:1' });
    await settle();
    expect(await memory.queue.discard('e3:1')).toBe(false); // running
    gate.resolve();
    clock.advance(1_000);
    await memory.drain();
    expect(calls.map((c) => c.delivery.jobId)).toEqual(['e3:1']);
  });

  it('promote runs a delayed job at once, and only a delayed one', async () => {
    const { clock, memory, calls, record } = setup();
    memory.consumer.start(record, { concurrency: 1 });
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs: 60_000 });
    expect(await memory.queue.promote('e1:1')).toBe(true);
    await memory.drain();
    expect(calls).toHaveLength(1);
    expect(await memory.queue.promote('e1:1')).toBe(false);
    expect(await memory.queue.promote('unknown')).toBe(false);
    clock.advance(60_000);
    await settle();
    expect(calls).toHaveLength(1);
    expect(clock.pending).toBe(0);
  });

  it('runs a job id once, also when enqueued again after it ran', async () => {
    const { memory, calls, record } = setup();
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1' });
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs: 5 });
    memory.consumer.start(record, { concurrency: 4 });
    await memory.drain();
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1' });
    await memory.drain();
    expect(calls).toHaveLength(1);
  });

  it('never runs more jobs at once than the concurrency', async () => {
    const { memory } = setup();
    const gates = new Map<string, ReturnType<typeof deferred>>();
    let inside = 0;
    let maxInside = 0;
    memory.consumer.start(
      async (_payload, { jobId }) => {
        inside += 1;
        maxInside = Math.max(maxInside, inside);
        const gate = deferred();
        gates.set(jobId, gate);
        await gate.promise;
        inside -= 1;
      },
      { concurrency: 2 },
    );
    for (let i = 0; i < 5; i += 1) await memory.queue.enqueue(job(`e${i}`), { jobId: `e${i}:1` });
    await settle();
    expect([...gates.keys()]).toEqual(['e0:1', 'e1:1']);
    expect(memory.queue.counts()).toEqual({ ready: 3, delayed: 0, running: 2 });
    const drained = memory.drain();
    for (let round = 0; round < 5; round += 1) {
      for (const gate of gates.values()) gate.resolve();
      await settle();
    }
    await drained;
    expect(gates.size).toBe(5);
    expect(maxInside).toBe(2);
  });

  it('drain also waits for jobs that running jobs enqueue', async () => {
    const { memory } = setup();
    const seen: string[] = [];
    memory.consumer.start(
      async (_payload, { jobId }) => {
        seen.push(jobId);
        const n = Number(jobId.split(':')[1]);
        if (n < 3) await memory.queue.enqueue(job('e1'), { jobId: `e1:${n + 1}` });
      },
      { concurrency: 1 },
    );
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1' });
    await memory.drain();
    expect(seen).toEqual(['e1:1', 'e1:2', 'e1:3']);
  });

  it('stop waits for in-flight jobs and takes no new ones', async () => {
    const { memory, calls, record } = setup();
    const gate = deferred();
    let finished = false;
    memory.consumer.start(
      async () => {
        await gate.promise;
        finished = true;
      },
      { concurrency: 1 },
    );
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1' });
    await settle();
    let stopped = false;
    const stopping = memory.consumer.stop().then(() => (stopped = true));
    await memory.queue.enqueue(job('e2'), { jobId: 'e2:1' });
    await settle();
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(finished).toBe(true);
    expect(memory.queue.counts()).toEqual({ ready: 1, delayed: 0, running: 0 });
    // A later start picks up what was left.
    memory.consumer.start(record, { concurrency: 1 });
    await memory.drain();
    expect(calls.map((c) => c.delivery.jobId)).toEqual(['e2:1']);
  });

  it('fails a malformed job at once, without another delivery', async () => {
    const { clock, memory, failures } = setup();
    let deliveries = 0;
    memory.consumer.start(
      async (payload) => {
        deliveries += 1;
        throw new MalformedJobError('of another version', payload);
      },
      { concurrency: 1 },
    );
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1' });
    await memory.drain();
    clock.advance(60_000);
    await settle();
    expect(deliveries).toBe(1);
    expect(failures).toMatchObject([{ jobId: 'e1:1', final: true }]);
  });

  it('delivers a job again after an infrastructure failure, with a backoff, a bounded number of times', async () => {
    const { clock, memory, failures } = setup();
    const deliveries: number[] = [];
    memory.consumer.start(
      async (_payload, { delivery }) => {
        deliveries.push(delivery);
        throw new Error('store unreachable');
      },
      { concurrency: 1 },
    );
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1' });
    await settle();
    expect(deliveries).toEqual([1]);
    clock.advance(INFRA_BACKOFF_MS - 1);
    await settle();
    expect(deliveries).toEqual([1]);
    clock.advance(1);
    await settle();
    expect(deliveries).toEqual([1, 2]);
    clock.advance(2 * INFRA_BACKOFF_MS);
    await memory.drain();
    expect(deliveries).toEqual([1, 2, 3]);
    expect(failures.map((f) => f.final)).toEqual([false, false, true]);
  });

  it('close drops delayed jobs and refuses new ones', async () => {
    const { clock, memory, calls, record } = setup();
    memory.consumer.start(record, { concurrency: 1 });
    await memory.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs: 1_000 });
    await memory.queue.close();
    await memory.drain();
    expect(clock.pending).toBe(0);
    await expect(memory.queue.enqueue(job('e2'), { jobId: 'e2:1' })).rejects.toThrow(/closed/);
    expect(calls).toHaveLength(0);
  });

  it('refuses a malformed job and bad options at enqueue', async () => {
    const { memory } = setup();
    await expect(
      memory.queue.enqueue({ v: 2, executionId: 'e', reactor: 'r' } as unknown as ExecutionJob, { jobId: 'x' }),
    ).rejects.toBeInstanceOf(MalformedJobError);
    await expect(memory.queue.enqueue(job('e1'), { jobId: '' })).rejects.toThrow(RangeError);
    await expect(memory.queue.enqueue(job('e1'), { jobId: 'e1:1', delayMs: -1 })).rejects.toThrow(RangeError);
    expect(() => memory.consumer.start(async () => undefined, { concurrency: 0 })).toThrow(RangeError);
  });
});
