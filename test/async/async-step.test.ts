/**
 * `asyncStep` on the embedded default (memory store, coordinator and queue, in-process worker
 * pool): the body in its own job with its own record, readers that wait (in-process) or park
 * (worker), retries with events (F-12), its own compensate once, and discarding a unit whose
 * dispatcher rolled back (F-09). Timing-sensitive cases use a `ManualClock`; the rest is driven
 * by gates, never by sleeps.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  AsyncWaitTimeoutError,
  createEmbeddedEngine,
  defineStep,
  failure,
  MemoryCoordinator,
  MemoryStore,
  reactor,
  type ExecutionRecord,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { eventsOf, gate, manualEngine, until, untilStatus } from '../background/helpers.js';

const unitOf = (executionId: string, step: string): string => `${executionId}~${step}`;

describe('asyncStep: the body in its own job, its state on its own record', () => {
  test('an in-process reader waits for the result; the unit record is linked to its dispatcher and never written into it', async () => {
    const engine = createEmbeddedEngine();
    const ran: string[] = [];
    const order = reactor('order-async')
      .input({ orderId: z.string() })
      .step('reserve', {
        args: ($) => ({ orderId: $.input('orderId') }),
        run: ({ orderId }) => (ran.push('reserve'), { orderId, sku: 'x' }),
      })
      .asyncStep('ship', {
        args: ($) => ({ sku: $.result('reserve', 'sku') }),
        run: ({ sku }, ctx) => (ran.push(`ship:${ctx.executionId}`), { label: `L-${sku}` }),
      })
      .step('notify', { args: ($) => ({ label: $.result('ship', 'label') }), run: ({ label }) => `sent ${label}` })
      .returns('notify');
    try {
      const result = await engine.run(order, { orderId: 'o-1' });
      expect(result.status).toBe('completed');
      if (result.status !== 'completed') return;
      expect(result.value).toBe('sent L-x');
      const unitId = unitOf(result.executionId, 'ship');
      // The body ran in the unit's job (its own execution id), not in the dispatcher.
      expect(ran).toEqual(['reserve', `ship:${unitId}`]);
      expect(result.steps['ship']).toMatchObject({ status: 'completed', result: { label: 'L-x' }, unitId });
      const unit = (await engine.store.get(unitId))!;
      expect(unit).toMatchObject({
        status: 'completed',
        parentId: result.executionId,
        rootId: result.executionId,
        value: { label: 'L-x' },
        unit: { step: 'ship', dispatcherId: result.executionId },
      });
      expect(unit.steps['ship']).toMatchObject({ status: 'completed', attempts: 1 });
      expect(eventsOf(result.trace, 'async.dispatched')).toMatchObject([
        { step: 'ship', unitId, kind: 'step', jobId: `${unitId}:1` },
      ]);
      expect(eventsOf(result.trace, 'async.waiting')).toMatchObject([{ step: 'ship', unitId, mode: 'wait' }]);
      expect(eventsOf(unit.trace ?? [], 'async.completed')).toMatchObject([
        { step: 'ship', unitId, executionId: unitId, rootExecutionId: result.executionId },
      ]);
      // The dispatcher's record carries no unit state besides the link and the adopted result.
      const parent = (await engine.store.get(result.executionId))!;
      expect(parent.unit).toBeUndefined();
      expect(Object.keys(parent.steps).sort()).toEqual(['notify', 'reserve', 'ship']);
    } finally {
      await engine.close();
    }
  });

  test('nothing reads it: the run completes without waiting; the unit completes on its own later', async () => {
    const m = manualEngine();
    const fire = reactor('fire-and-forget')
      .step('a', { run: () => 1 })
      .asyncStep('audit', { run: () => 'audited' })
      .step('b', { waitFor: ['a'], run: () => 2 })
      .returns('b');
    const result = await m.engine.run(fire, {});
    expect(result.status).toBe('completed');
    const unitId = unitOf(result.executionId, 'audit');
    expect(result.steps['audit']).toMatchObject({ status: 'dispatched', unitId });
    expect((await m.store.get(unitId))?.status).toBe('pending'); // no worker yet: the parent did not wait
    const worker = m.startWorker();
    try {
      expect((await untilStatus(m.engine, unitId, 'completed')).status).toBe('completed');
      expect((await m.store.get(unitId))?.value).toBe('audited');
    } finally {
      await worker.stop();
    }
  });

  test('arguments are resolved and validated in the worker (a step definition, defaults applied there)', async () => {
    const engine = createEmbeddedEngine();
    const seen: unknown[] = [];
    const label = defineStep({
      input: { sku: z.string(), copies: z.number().default(2) },
      run: (args) => (seen.push(args), `${args.sku}x${args.copies}`),
    });
    const r = reactor('def-async').input({ sku: z.string() }).asyncStep('label', label).returns('label');
    try {
      const result = await engine.run(r, { sku: 'k' });
      expect(result).toMatchObject({ status: 'completed', value: 'kx2' });
      expect(seen).toEqual([{ sku: 'k', copies: 2 }]);
      const unit = (await engine.store.get(unitOf(result.executionId, 'label')))!;
      expect(unit.unit?.scope).toEqual({ input: { sku: 'k' }, results: {} });
    } finally {
      await engine.close();
    }
  });

  test('an inline asyncStep with undo is refused at definition (it would never run)', () => {
    expect(() => reactor('bad-undo').asyncStep('x', { run: () => 1, undo: (() => undefined) as never })).toThrow(
      /asyncStep "x" declares undo, which would never run/,
    );
  });
});

describe('asyncStep failure: retries with events (F-12), its own compensate once, the reader sees the failure', () => {
  test('each retry of the unit emits step.retrying and async.retrying; after the last attempt its compensate runs once in its job; the dispatcher rolls back the rest', async () => {
    const engine = createEmbeddedEngine();
    const calls = { ship: 0, compensate: 0, undoReserve: 0 };
    const r = reactor('ship-fails')
      .step('reserve', { run: () => 'r', undo: () => void calls.undoReserve++ })
      .asyncStep('ship', {
        waitFor: ['reserve'],
        retry: { maxAttempts: 3, backoff: 'fixed', baseDelay: 1 },
        run: () => (calls.ship++, failure(new Error('carrier down'))),
        compensate: () => void calls.compensate++,
      })
      .step('notify', { args: ($) => ({ s: $.result('ship') }), run: () => 'n' })
      .returns('notify');
    try {
      const result = await engine.run(r, {});
      expect(result.status).toBe('failed');
      if (result.status !== 'failed') return;
      expect(result.failedStep).toBe('ship');
      expect(result.error.message).toBe('carrier down');
      expect(calls).toEqual({ ship: 3, compensate: 1, undoReserve: 1 });
      const unitId = unitOf(result.executionId, 'ship');
      const unit = (await engine.store.get(unitId))!;
      expect(unit.status).toBe('failed');
      const trace = unit.trace ?? [];
      expect(eventsOf(trace, 'step.retrying').map((e) => e.attempt)).toEqual([2, 3]);
      expect(eventsOf(trace, 'async.retrying')).toMatchObject([
        { unitId, attempt: 2, error: { message: 'carrier down' } },
        { unitId, attempt: 3 },
      ]);
      expect(eventsOf(trace, 'run.queued').filter((e) => e.reason === 'retry')).toHaveLength(2);
      expect(eventsOf(trace, 'step.compensated')).toHaveLength(1);
      expect(eventsOf(trace, 'async.failed')).toMatchObject([{ unitId, error: { message: 'carrier down' } }]);
      // The dispatcher does not compensate the unit a second time; it undoes its own completed steps.
      expect(eventsOf(result.trace, 'step.compensated')).toEqual([]);
      expect(eventsOf(result.trace, 'step.undone').map((e) => e.step)).toEqual(['reserve']);
    } finally {
      await engine.close();
    }
  });
});

describe('readers: a bounded in-process wait, a parked worker woken by the unit', () => {
  test('an in-process reader gives up after asyncWaitMs with AsyncWaitTimeoutError (manual clock); the unit dispatched meanwhile never starts its body (F-09)', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const m = manualEngine({
      clock,
      coordinator: new MemoryCoordinator({ clock }),
      store: new MemoryStore({ clock }),
      queueOptions: { clock },
      background: { asyncWaitMs: 2_000 },
    });
    let body = 0;
    let undone = 0;
    const r = reactor('slow-reader')
      .step('first', { run: () => 1, undo: () => void undone++ })
      .asyncStep('slow', { waitFor: ['first'], run: () => ++body })
      .step('read', { args: ($) => ({ v: $.result('slow') }), run: ({ v }) => v })
      .returns('read');
    const running = m.engine.run(r, {});
    await until(() => m.events.some((e) => e.type === 'async.waiting'), 3_000, 'the reader to wait');
    clock.advance(2_000);
    const result = await running;
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error).toBeInstanceOf(AsyncWaitTimeoutError);
    expect(result.error).toMatchObject({
      code: 'async_wait_timeout',
      details: { step: 'slow', mode: 'wait', waitedMs: 2_000 },
    });
    expect(JSON.parse(JSON.stringify(result.error))).toMatchObject({ code: 'async_wait_timeout' });
    expect(result.failedStep).toBe('slow');
    expect(undone).toBe(1);
    // Now a worker picks the unit up: its dispatcher rolled back, so the body never starts.
    const unitId = unitOf(result.executionId, 'slow');
    const worker = m.startWorker();
    try {
      const unit = await untilStatus(m.engine, unitId, 'cancelled');
      expect(unit.status === 'cancelled' && unit.reason).toContain('rolled back (failed)');
      expect(body).toBe(0);
      expect(eventsOf(unit.trace, 'async.discarded')).toMatchObject([
        { unitId, started: false, dispatcherStatus: 'failed' },
      ]);
      expect(eventsOf(unit.trace, 'step.started')).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  test('a worker reader parks on the unit (record shows what it waits for) and the unit finishing wakes it long before the fallback', async () => {
    const engine = createEmbeddedEngine({ background: { parkFallbackMs: 20_000, workerWaitMs: 0 } });
    const open = gate();
    const r = reactor('bg-reader')
      .background('all')
      .asyncStep('slow', { run: async () => (await open.promise, 'late') })
      .step('read', { args: ($) => ({ v: $.result('slow') }), run: ({ v }) => `got ${v}` })
      .returns('read');
    try {
      const started = await engine.start(r, {});
      const unitId = unitOf(started.executionId, 'slow');
      const parked = await untilStatus(engine, started.executionId, 'parked');
      expect(parked.status === 'parked' && parked.waitingFor).toMatchObject({
        primitive: 'async',
        key: unitId,
        attempt: 1,
      });
      expect(eventsOf(parked.trace, 'async.waiting')).toMatchObject([{ step: 'slow', unitId, mode: 'park' }]);
      const t0 = Date.now();
      open.open();
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toMatchObject({ status: 'completed', value: 'got late' });
      expect(Date.now() - t0).toBeLessThan(10_000); // the fallback is 20 s: only the wake explains this
      expect(eventsOf(done?.trace ?? [], 'run.woken')).toMatchObject([{ primitive: 'async', key: unitId }]);
    } finally {
      await engine.close();
    }
  });
});

describe('F-09: a unit whose dispatcher rolled back never starts, or is discarded and compensated', () => {
  test('already running when the dispatcher rolls back: its result is discarded and its compensate runs', async () => {
    const engine = createEmbeddedEngine();
    const inBody = gate();
    const release = gate();
    const calls = { compensate: [] as string[] };
    const r = reactor('f09-running')
      .asyncStep('charge', {
        run: async () => (inBody.open(), await release.promise, 'charged'),
        compensate: (reason) => void calls.compensate.push(reason.message),
      })
      .step('boom', {
        run: async () => {
          await inBody.promise;
          throw new Error('later step failed');
        },
      })
      .build();
    try {
      const result = await engine.run(r, {});
      expect(result.status).toBe('failed');
      const unitId = unitOf(result.executionId, 'charge');
      expect(['pending', 'running']).toContain((await engine.store.get(unitId))?.status); // the body is still going
      release.open();
      const unit = await untilStatus(engine, unitId, 'cancelled');
      expect(calls.compensate).toHaveLength(1);
      expect(calls.compensate[0]).toContain('its result is discarded');
      expect(eventsOf(unit.trace, 'async.discarded')).toMatchObject([
        { unitId, started: true, dispatcherStatus: 'failed' },
      ]);
      expect(eventsOf(unit.trace, 'step.compensated')).toHaveLength(1);
      expect((await engine.store.get(unitId))?.value).toBeUndefined();
    } finally {
      release.open();
      await engine.close();
    }
  });
});

describe('unit records', () => {
  test('a unit record is a versioned execution record of its own', async () => {
    const engine = createEmbeddedEngine();
    const r = reactor('rec')
      .asyncStep('u', { run: () => 'v' })
      .returns('u');
    try {
      const result = await engine.run(r, {});
      const unit = (await engine.store.get(unitOf(result.executionId, 'u'))) as ExecutionRecord;
      expect(unit.v).toBe(1);
      expect(unit.reactor).toBe('rec');
      expect(await engine.result(unit.id)).toMatchObject({ status: 'completed', value: 'v' });
    } finally {
      await engine.close();
    }
  });
});
