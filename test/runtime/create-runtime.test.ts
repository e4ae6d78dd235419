/**
 * `createRuntime` over the memory backend, on a manual clock that never moves by itself: an
 * engine, its workers and schedules from one Backend bundle; the refusal of a shared backend
 * without job leases; interrupt claims taken from the bundle only; the start-up gate.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createMemoryBackend,
  createRuntime,
  errorFromJSON,
  reactor,
  RuntimeOptionError,
  type Backend,
} from '../../src/index.js';
import { composeJobLeases } from '../../src/engine/jobs/job-lease.js';
import { ManualClock } from '../../src/testing/index.js';

const double = reactor('double')
  .input({ n: z.number() })
  .step('twice', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => n * 2 })
  .returns('twice');

const approval = reactor('approval')
  .input({ orderId: z.string() })
  .interrupt('approve', { payload: { ok: z.boolean() }, correlationId: () => 'order:o-1' })
  .returns('approve');

function memory() {
  const clock = new ManualClock({ start: Date.UTC(2026, 0, 1), autoAdvance: false });
  return { clock, backend: createMemoryBackend({ clock }) };
}

describe('createRuntime over the memory backend', () => {
  test('a started execution runs on a worker started from the runtime; health, inspector and close', async () => {
    const { clock, backend } = memory();
    const runtime = createRuntime(backend, { clock, reactors: [double] });
    expect(runtime.queueInspector).toBe(backend.queueInspector);
    expect(runtime.health()).toEqual({ subscriptions: { confirmed: true, channels: 0, unconfirmed: 0 } });
    const started = await runtime.engine.start(double, { n: 21 });
    expect((await runtime.engine.result(started.executionId))?.status).toBe('queued');
    runtime.startWorker({ concurrency: 1 });
    await backend.drain();
    const done = await runtime.engine.result(started.executionId);
    expect(done?.status === 'completed' && done.value).toBe(42);
    const closing = runtime.close();
    expect(runtime.close()).toBe(closing);
    await closing;
  });

  test('a worker stopped before the runtime closes is not kept by it', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { clock, backend } = memory();
    const runtime = createRuntime(backend, { clock, reactors: [double] });
    try {
      const started = await runtime.engine.start(double, { n: 1 });
      let worker: ReturnType<typeof runtime.startWorker> | undefined = runtime.startWorker({ concurrency: 1 });
      await backend.drain();
      expect((await runtime.engine.result(started.executionId))?.status).toBe('completed');
      const stopped = new WeakRef(worker);
      await worker.stop();
      worker = undefined;
      for (let i = 0; i < 5 && stopped.deref() !== undefined; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
      expect(stopped.deref()).toBeUndefined();
    } finally {
      await runtime.close();
    }
  });

  test('a delayed start waits for the injected clock', async () => {
    const { clock, backend } = memory();
    const runtime = createRuntime(backend, { clock, reactors: [double] });
    runtime.startWorker();
    try {
      const started = await runtime.engine.start(double, { n: 2 }, { delay: '1m' });
      expect(backend.queue.counts()).toEqual({ ready: 0, delayed: 1, running: 0 });
      clock.advance(60_000);
      await backend.drain();
      const done = await runtime.engine.result(started.executionId);
      expect(done?.status === 'completed' && done.value).toBe(4);
    } finally {
      await runtime.close();
    }
  });

  test('schedules live on the backend: one upserted is listed by the runtime', async () => {
    const { clock, backend } = memory();
    const runtime = createRuntime(backend, { clock, reactors: [double] });
    try {
      await runtime.schedules.upsert({ id: 'nightly', reactor: double, every: '1h', input: { n: 1 } });
      expect((await backend.schedules.list()).map((s) => s.id)).toEqual(['nightly']);
      expect((await runtime.schedules.list()).map((s) => s.id)).toEqual(['nightly']);
    } finally {
      await runtime.close();
    }
  });
});

describe('a shared backend must bring its own job leases', () => {
  test('without them createRuntime refuses, with a typed error that round-trips as JSON', () => {
    const { backend } = memory();
    const shared: Backend = { ...backend, name: 'shared-test', shared: true, jobLeases: undefined };
    let thrown: unknown;
    try {
      createRuntime(shared, {});
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RuntimeOptionError);
    expect(thrown).toMatchObject({
      code: 'runtime_option_invalid',
      details: { factory: 'createRuntime', option: 'jobLeases', value: 'undefined' },
    });
    expect((thrown as Error).message).toContain('shared-test backend is shared between processes');
    const back = errorFromJSON(JSON.parse(JSON.stringify(thrown)) as never);
    expect(back).toBeInstanceOf(RuntimeOptionError);
    expect(back).toMatchObject({ code: 'runtime_option_invalid', details: { option: 'jobLeases' } });
  });

  test('with them it builds; a backend of this process alone needs none', async () => {
    const { clock, backend } = memory();
    const jobLeases = composeJobLeases(backend.store, backend.coordinator);
    const shared = createRuntime({ ...backend, shared: true, jobLeases }, { clock });
    await shared.close();
    const local = createRuntime(memory().backend, { clock });
    await local.close();
  });
});

describe('interrupt claims come from the bundle', () => {
  test('the memory backend passes its store as the claims: an interrupt pauses', async () => {
    const { clock, backend } = memory();
    const runtime = createRuntime(backend, { clock, reactors: [approval] });
    try {
      const paused = await runtime.engine.run(approval, { orderId: 'o-1' });
      expect(paused.status).toBe('paused');
    } finally {
      await runtime.close();
    }
  });

  test('a bundle without claims: the interrupt fails with interrupts_unsupported, whatever the store implements', async () => {
    const { clock, backend } = memory();
    const runtime = createRuntime({ ...backend, interruptClaims: undefined }, { clock, reactors: [approval] });
    try {
      const failed = await runtime.engine.run(approval, { orderId: 'o-2' });
      expect(failed.status === 'failed' && failed.error).toMatchObject({ code: 'interrupts_unsupported' });
    } finally {
      await runtime.close();
    }
  });
});

describe('the start-up gate of a backend (Backend.ready)', () => {
  test('engine calls and workers wait for it; its refusal rejects the calls', async () => {
    const { clock, backend } = memory();
    let open!: () => void;
    const ready = new Promise<void>((resolve) => (open = resolve));
    const runtime = createRuntime({ ...backend, ready }, { clock, reactors: [double] });
    runtime.startWorker();
    try {
      let settled = false;
      const starting = runtime.engine.start(double, { n: 3 }).then((s) => ((settled = true), s));
      await Promise.resolve();
      await Promise.resolve();
      expect(settled).toBe(false);
      expect(backend.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
      open();
      const started = await starting;
      await backend.drain();
      const done = await runtime.engine.result(started.executionId);
      expect(done?.status === 'completed' && done.value).toBe(6);
    } finally {
      await runtime.close();
    }
    const refused = memory();
    const refusal = Promise.reject(new Error('not durable'));
    refusal.catch(() => undefined);
    const gated = createRuntime({ ...refused.backend, ready: refusal }, { clock: refused.clock });
    await expect(gated.engine.start(double, { n: 1 })).rejects.toThrow('not durable');
    await gated.close();
  });
});
