/**
 * The delayed job of a `.waitForEvent` timeout (and of an interrupt's active timeout) leaves the
 * queue once the wait ends another way: resumed (by its event, or by `engine.resume`), the
 * execution cancelled, or failed by another wait's timeout. On the
 * embedded engine (the memory backend) a drain then resolves at once instead of at the timeout's due time; a timeout
 * job that still fires after its wait ended changes nothing.
 */
import { expect, test } from 'vitest';
import { z } from 'zod';
import { createMemoryBackend, event, reactor } from '../../src/index.js';
import { createRuntime } from '../../src/runtime/create-runtime.js';
import { timeoutJobId } from '../../src/engine/execution/interrupt/pause.js';
import type { JobQueue } from '../../src/ports/queue.js';
import { describeOnBackends } from '../support/backend-matrix.js';
import { allReach, paymentSettled } from './wait-fixtures.js';

const parcelReady = event('parcel.ready', { orderId: z.string(), parcel: z.string() });

/** Waits up to two days for its order's settlement. */
const settles = reactor('wtj-settles')
  .input({ orderId: z.string() })
  .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'], timeout: '2d' })
  .returns('payment');

/** Two waits side by side: the parcel's times out soon (failing the run), the payment's in two days. */
const twoWaits = (parcelTimeoutMs: number) =>
  reactor('wtj-two-waits')
    .input({ orderId: z.string() })
    .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'], timeout: '2d' })
    .waitForEvent('parcel', { event: parcelReady, matchOn: ['orderId'], timeout: parcelTimeoutMs })
    .returns('payment');

/** An interrupt with an active timeout of two days. */
const approves = reactor('wtj-approves')
  .input({ orderId: z.string() })
  .interrupt('approval', { payload: { ok: z.boolean() }, timeout: '2d', timeoutStrategy: 'active' })
  .returns('approval');

/** Where the timeout job of `step` is, polled until it is no longer queued (a generous bound; never a timed assert). */
async function leftQueue(queue: JobQueue, jobId: string): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const [place] = await queue.jobStates!([jobId]);
    if (place !== 'queued') return place!;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return 'queued';
}

async function placeOf(queue: JobQueue, jobId: string): Promise<string> {
  return (await queue.jobStates!([jobId]))[0]!;
}

describeOnBackends(
  'the timeout job of an event wait',
  (backend) => {
    test('is discarded when the event resumes the wait', async () => {
      const runtime = backend.runtime({ reactors: [settles] });
      runtime.startWorker({ concurrency: 2 });
      const { engine } = runtime;
      const queue = runtime.backend.queue;
      const run = await engine.start(settles, { orderId: 'o-1' });
      await allReach(engine, [run.executionId], 'paused');
      const jobId = timeoutJobId(run.executionId, 'payment');
      expect(await placeOf(queue, jobId)).toBe('queued');
      await engine.send(paymentSettled, { orderId: 'o-1', amount: 5 });
      await allReach(engine, [run.executionId], 'completed');
      // Discarded before the resumed run's job was enqueued: no wait needed.
      expect(await placeOf(queue, jobId)).not.toBe('queued');
      expect(await engine.result(run.executionId)).toMatchObject({ value: { orderId: 'o-1', amount: 5 } });
    });

    test('is discarded when the waiting execution is cancelled', async () => {
      const runtime = backend.runtime({ reactors: [settles] });
      runtime.startWorker({ concurrency: 2 });
      const { engine } = runtime;
      const queue = runtime.backend.queue;
      const run = await engine.start(settles, { orderId: 'o-2' });
      await allReach(engine, [run.executionId], 'paused');
      const jobId = timeoutJobId(run.executionId, 'payment');
      expect(await placeOf(queue, jobId)).toBe('queued');
      expect((await engine.cancel(run.executionId)).status).toBe('cancelled');
      expect(await leftQueue(queue, jobId)).not.toBe('queued');
    });

    test("is discarded when another wait's timeout fails the run", async () => {
      const reactorDef = twoWaits(200);
      const runtime = backend.runtime({ reactors: [reactorDef] });
      runtime.startWorker({ concurrency: 2 });
      const { engine } = runtime;
      const queue = runtime.backend.queue;
      const run = await engine.start(reactorDef, { orderId: 'o-3' });
      await allReach(engine, [run.executionId], 'failed');
      expect(await leftQueue(queue, timeoutJobId(run.executionId, 'payment'))).not.toBe('queued');
    });

    test("is discarded when an interrupt's active timeout is resumed, or its execution cancelled", async () => {
      const runtime = backend.runtime({ reactors: [approves] });
      runtime.startWorker({ concurrency: 2 });
      const { engine } = runtime;
      const queue = runtime.backend.queue;
      const resumed = await engine.start(approves, { orderId: 'o-5' });
      const cancelled = await engine.start(approves, { orderId: 'o-6' });
      await allReach(engine, [resumed.executionId, cancelled.executionId], 'paused');
      const resumedJob = timeoutJobId(resumed.executionId, 'approval');
      const cancelledJob = timeoutJobId(cancelled.executionId, 'approval');
      expect(await placeOf(queue, resumedJob)).toBe('queued');
      expect(await placeOf(queue, cancelledJob)).toBe('queued');
      await engine.resume(resumed.executionId, { ok: true });
      // Discarded before the resume returned: no wait needed.
      expect(await placeOf(queue, resumedJob)).not.toBe('queued');
      await allReach(engine, [resumed.executionId], 'completed');
      expect((await engine.cancel(cancelled.executionId)).status).toBe('cancelled');
      expect(await leftQueue(queue, cancelledJob)).not.toBe('queued');
    });
  },
  { backends: ['memory', 'redis'] },
);

test('the embedded backend drains at once after the event resumed the wait, and a stray timeout job changes nothing', async () => {
  // `createEmbeddedEngine` is this runtime; its `drain` is the backend's.
  const backend = createMemoryBackend();
  const runtime = createRuntime(backend, { reactors: [settles] });
  runtime.startWorker({ concurrency: 2 });
  const { engine } = runtime;
  try {
    const run = await engine.start(settles, { orderId: 'o-4' });
    await allReach(engine, [run.executionId], 'paused');
    expect(backend.queue.counts().delayed).toBe(1);
    await engine.send(paymentSettled, { orderId: 'o-4', amount: 8 });
    await allReach(engine, [run.executionId], 'completed');
    // Nothing is left delayed: the drain does not wait for the two days of the timeout.
    expect(backend.queue.counts().delayed).toBe(0);
    await backend.drain();
    // A timeout job delivered after its wait ended (one the queue could not discard) finds no open wait.
    const stray = `${timeoutJobId(run.executionId, 'payment')}:stray`;
    await backend.queue.enqueue({ v: 1, executionId: run.executionId, reactor: settles.name }, { jobId: stray });
    await backend.drain();
    expect(await backend.queue.jobStates!([stray])).toEqual(['finished']);
    expect(await engine.result(run.executionId)).toMatchObject({ status: 'completed', value: { amount: 8 } });
  } finally {
    await runtime.close();
  }
});
