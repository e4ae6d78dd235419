/**
 * `cancelOn` through a runtime with a worker on every backend whose bundle has an event-wait
 * index (a backend without one skips): a matching event, sent from another runtime of the same
 * namespace on a server backend (a second process's view), cancels a paused, a sleeping, a
 * lock-parked and a running execution, each rolled back (its undo ran); a non-matching event, an
 * event for a finished execution and a re-sent event cancel nothing (more). Real time: every
 * wait is a generous deadline, never a bound.
 */
import { expect, test, type TestContext } from 'vitest';
import { z } from 'zod';
import { event, reactor, type AnyReactorDefinition, type Engine } from '../../src/index.js';
import { describeOnBackends, type MatrixBackend, type MatrixRuntime } from '../support/backend-matrix.js';
import { until, untilStatus } from '../background/helpers.js';
import '../../src/testing/vitest.js';

const WAIT_MS = 30_000;
const TEST_MS = 90_000;
const orderCancelled = event('order.cancelled', { orderId: z.string() });

function gate(): { readonly wait: Promise<void>; readonly open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** The reactors of one test, logging their undos. */
function reactors(undone: string[], slow: Promise<void>) {
  const approval = reactor('cx-approval')
    .input({ orderId: z.string() })
    .cancelOn(orderCancelled, { matchOn: ['orderId'] })
    .step('reserve', { run: ({ orderId }) => orderId, undo: (r) => void undone.push(`approval ${r}`) })
    .interrupt('approve', { payload: { ok: z.boolean() }, waitFor: ['reserve'] })
    .build();
  const napping = reactor('cx-napping')
    .input({ orderId: z.string() })
    .cancelOn(orderCancelled, { matchOn: ['orderId'] })
    .step('before', { run: ({ orderId }) => orderId, undo: (r) => void undone.push(`napping ${r}`) })
    .sleep('nap', { for: '1h', waitFor: ['before'] })
    .background('all')
    .build();
  const working = reactor('cx-working')
    .input({ orderId: z.string() })
    .cancelOn(orderCancelled, { matchOn: ['orderId'] })
    .step('reserve', { run: ({ orderId }) => orderId, undo: (r) => void undone.push(`working ${r}`) })
    // Ends only once the cancel has reached the run (its signal aborts): the request travels asynchronously.
    .step('ship', {
      waitFor: ['reserve'],
      run: (_args, ctx) =>
        new Promise<string>((resolve) =>
          ctx.signal.addEventListener('abort', () => resolve('shipped'), { once: true }),
        ),
    })
    .step('notify', { waitFor: ['ship'], run: () => void undone.push('notify ran') })
    .background('all')
    .build();
  const locked = reactor('cx-locked')
    .input({ orderId: z.string() })
    .withLock({ key: () => 'account-1' })
    .cancelOn(orderCancelled, { matchOn: ['orderId'] })
    .step('work', { run: () => slow.then(() => 'w'), undo: () => void undone.push('locked work') })
    .build();
  return { approval, napping, working, locked };
}

describeOnBackends('cancelOn', (backend: MatrixBackend) => {
  /** A runtime with a worker, and the engine events are sent from: another runtime of its namespace on a server backend. */
  function pair(ctx: TestContext, list: readonly AnyReactorDefinition[]): { runtime: MatrixRuntime; sender: Engine } {
    const runtime = backend.runtime({ reactors: list, background: { workerWaitMs: 0 }, checkpointIntervalMs: 0 });
    if (runtime.backend.eventWaits === undefined) ctx.skip(); // the index is not on this backend yet
    runtime.startWorker({ concurrency: 4 });
    const sender = backend.shared
      ? backend.runtime({ namespace: runtime.namespace, reactors: list }).engine
      : runtime.engine;
    return { runtime, sender };
  }

  test(
    'a paused, a sleeping and a running execution are cancelled and rolled back; the events record them',
    async (ctx) => {
      const undone: string[] = [];
      const slow = gate();
      const r = reactors(undone, slow.wait);
      const { runtime, sender } = pair(ctx, [r.approval, r.napping, r.working]);
      const engine = runtime.engine;
      const paused = await engine.run(r.approval, { orderId: 'o-1' });
      expect(paused).toBePaused('approve');
      const napping = await engine.start(r.napping, { orderId: 'o-2' });
      await untilStatus(engine, napping.executionId, 'parked', WAIT_MS);
      const working = await engine.start(r.working, { orderId: 'o-3' });
      await until(
        async () => (await engine.result(working.executionId))?.steps['reserve']?.status === 'completed',
        WAIT_MS,
        'the working execution past reserve',
      );
      await until(async () => (await engine.store.get(working.executionId))?.status === 'running', WAIT_MS, 'running');

      for (const orderId of ['o-1', 'o-2', 'o-3'])
        expect((await sender.send(orderCancelled, { orderId }, { id: `cx-${orderId}` })).status).toBe('accepted');
      slow.open();
      for (const [id, orderId] of [
        [paused.executionId, 'o-1'],
        [napping.executionId, 'o-2'],
        [working.executionId, 'o-3'],
      ] as const)
        expect(await untilStatus(engine, id, 'cancelled', WAIT_MS)).toHaveBeenCancelledByEvent(
          'order.cancelled',
          `cx-${orderId}`,
        );
      expect(undone.sort()).toEqual(['approval o-1', 'napping o-2', 'working o-3']);
      const events = (await sender.listEvents({ name: 'order.cancelled' })).events;
      expect(new Map(events.map((e) => [e.id, e.effects.cancelled]))).toEqual(
        new Map([
          ['cx-o-1', [paused.executionId]],
          ['cx-o-2', [napping.executionId]],
          ['cx-o-3', [working.executionId]],
        ]),
      );
    },
    TEST_MS,
  );

  test(
    'an execution parked on a contended lock is cancelled and rolled back; the holder goes on',
    async (ctx) => {
      const undone: string[] = [];
      const slow = gate();
      const r = reactors(undone, slow.wait);
      const { runtime, sender } = pair(ctx, [r.locked]);
      const engine = runtime.engine;
      const holder = engine.run(r.locked, { orderId: 'o-1' });
      await until(
        async () => (await engine.list({ reactor: 'cx-locked' })).executions.length === 1,
        WAIT_MS,
        'the holder',
      );
      const waiter = await engine.start(r.locked, { orderId: 'o-2' });
      await untilStatus(engine, waiter.executionId, 'parked', WAIT_MS);
      await sender.send(orderCancelled, { orderId: 'o-2' });
      expect(await untilStatus(engine, waiter.executionId, 'cancelled', WAIT_MS)).toHaveBeenCancelledByEvent();
      slow.open();
      expect(await holder).toHaveCompleted();
      expect(undone).toEqual([]);
    },
    TEST_MS,
  );

  test(
    'a non-matching event, an event for a finished execution and a re-sent event cancel nothing (more)',
    async (ctx) => {
      const undone: string[] = [];
      const r = reactors(undone, Promise.resolve());
      const { runtime, sender } = pair(ctx, [r.approval]);
      const engine = runtime.engine;
      const paused = await engine.run(r.approval, { orderId: 'o-1' });
      const finished = await engine.run(r.approval, { orderId: 'o-2' });
      expect(await engine.resume(finished.executionId, { ok: true })).toHaveCompleted();
      await sender.send(orderCancelled, { orderId: 'o-9' }, { id: 'nobody' });
      await sender.send(orderCancelled, { orderId: 'o-2' }, { id: 'too-late' });
      expect((await engine.result(paused.executionId))?.status).toBe('paused');
      expect((await engine.result(finished.executionId))?.status).toBe('completed');
      await sender.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' });
      expect((await sender.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' })).status).toBe('duplicate');
      expect(await untilStatus(engine, paused.executionId, 'cancelled', WAIT_MS)).toHaveBeenCancelledByEvent(
        'order.cancelled',
        'cx-1',
      );
      expect(undone).toEqual(['approval o-1']);
      const effects = new Map((await sender.listEvents()).events.map((e) => [e.id, e.effects.cancelled]));
      expect(effects).toEqual(
        new Map([
          ['nobody', []],
          ['too-late', []],
          ['cx-1', [paused.executionId]],
        ]),
      );
    },
    TEST_MS,
  );
});
