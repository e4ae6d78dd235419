/**
 * `cancelOn` on the memory backend with the manual clock (no sleeps): a matching event cancels an
 * execution wherever it is — running inline or in a worker, paused on an interrupt, parked on a
 * sleep or on a contended lock, queued — and rolls it back (undo ran); a non-matching event, an
 * event for a finished execution and a re-sent event cancel nothing (more); the cancel is
 * recorded on the event and told as a notice.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEngine,
  event,
  MemoryStore,
  reactor,
  ReactorError,
  type EventNotice,
  type ExecutionRecord,
} from '../../src/index.js';
import { ManualClock, createTestEngine, type TestEngineOptions } from '../../src/testing/index.js';
import { MemoryEventWaits } from '../../src/storage/memory/event-waits.js';
import '../../src/testing/vitest.js';

const orderCancelled = event('order.cancelled', { orderId: z.string(), reason: z.string().default('customer') });

/** Lets pending callbacks run until `probe` holds (no virtual time passes); a generous real deadline, never a bound. */
async function settleUntil(probe: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never reached: ${what}`);
}

/** A promise a test opens by hand. */
function gate(): { readonly wait: Promise<void>; readonly open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

function setup(options: Omit<TestEngineOptions, 'clock'> = {}) {
  const clock = new ManualClock({ autoAdvance: false });
  const t = createTestEngine({ clock, ...options });
  const notices: EventNotice[] = [];
  t.engine.subscribeEvents((n) => notices.push(n));
  const status = async (id: string) => (await t.engine.store.get(id))?.status;
  return { t, clock, notices, status };
}

describe('cancelOn on the memory backend', () => {
  test('a paused execution is rolled back by a matching event; the event records it and a notice tells it', async () => {
    const { t, notices } = setup();
    const undone: string[] = [];
    const approval = reactor('approval')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('reserve', { run: () => 'r-1', undo: () => void undone.push('reserve') })
      .interrupt('approve', { payload: { ok: z.boolean() }, waitFor: ['reserve'] })
      .build();
    const paused = await t.run(approval, { orderId: 'o-1' });
    const other = await t.run(approval, { orderId: 'o-2' });
    expect(paused).toBePaused('approve');
    const sent = await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' });
    expect(sent.status).toBe('accepted');
    const result = (await t.engine.result(paused.executionId))!;
    expect(result).toHaveBeenCancelledByEvent('order.cancelled', 'cx-1');
    expect(result.status === 'cancelled' && result.reason).toBe('cancelled by event order.cancelled cx-1');
    expect(undone).toEqual(['reserve']);
    expect((await t.engine.result(other.executionId))?.status).toBe('paused');
    const [kept] = (await t.engine.listEvents({ name: 'order.cancelled' })).events;
    expect(kept?.effects.cancelled).toEqual([paused.executionId]);
    expect(notices.filter((n) => n.type === 'event.cancelled')).toEqual([
      expect.objectContaining({
        eventId: 'cx-1',
        name: 'order.cancelled',
        executionId: paused.executionId,
        reactor: 'approval',
        outcome: 'cancelled',
      }),
    ]);
  });

  test('an execution parked on a sleep is rolled back; its wake job then runs nothing', async () => {
    const { t, clock, status } = setup();
    const undone: string[] = [];
    const napping = reactor('napping')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('before', { run: () => 'ready', undo: () => void undone.push('before') })
      .sleep('wait', { for: '3d', waitFor: ['before'] })
      .step('after', { waitFor: ['wait'], run: () => 'done' })
      .returns('after');
    const started = await t.engine.start(napping, { orderId: 'o-1' });
    await settleUntil(async () => (await status(started.executionId)) === 'parked', 'parked on the sleep');
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' });
    expect(await t.engine.result(started.executionId)).toHaveBeenCancelledByEvent('order.cancelled');
    expect(undone).toEqual(['before']);
    clock.advance('3d');
    await t.drain();
    expect(t.events.some((e) => e.type === 'step.started' && e.step === 'after')).toBe(false);
  });

  test('an inline run is stopped at its next step boundary and rolled back; send does not wait for it', async () => {
    const { t, notices } = setup();
    const undone: string[] = [];
    const slow = gate();
    const inline = reactor('inline-slow')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('reserve', { run: () => 'r', undo: () => void undone.push('reserve') })
      .step('ship', {
        waitFor: ['reserve'],
        run: () => slow.wait.then(() => 's'),
        undo: () => void undone.push('ship'),
      })
      .step('notify', { waitFor: ['ship'], run: () => 'n' })
      .build();
    const running = t.run(inline, { orderId: 'o-1' });
    await settleUntil(() => t.events.some((e) => e.type === 'step.started' && e.step === 'ship'), 'ship started');
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' }); // resolves while ship still runs
    expect(notices.find((n) => n.type === 'event.cancelled')).toMatchObject({ outcome: 'requested' });
    slow.open();
    const result = await running;
    expect(result).toHaveBeenCancelledByEvent('order.cancelled', 'cx-1');
    expect(undone).toEqual(['ship', 'reserve']);
    expect(t.events.some((e) => e.type === 'step.started' && e.step === 'notify')).toBe(false);
  });

  test('an event sent by a step of the execution it cancels does not wait for that execution (no deadlock)', async () => {
    const { t } = setup();
    const self = reactor('self-cancel')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('cancel-me', {
        run: async ({ orderId }) => (await t.engine.send(orderCancelled, { orderId })).status,
        undo: () => undefined,
      })
      .step('never', { waitFor: ['cancel-me'], run: () => 'n' })
      .build();
    const result = await t.run(self, { orderId: 'o-9' });
    expect(result).toHaveBeenCancelledByEvent('order.cancelled');
  });

  test('a run in a worker gets a cancel request and rolls back at its next step boundary', async () => {
    const { t, status, notices } = setup({ checkpointIntervalMs: 0 }); // the record says running once a step is done
    const undone: string[] = [];
    const worker = reactor('worker-slow')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('reserve', { run: () => 'r', undo: () => void undone.push('reserve') })
      // Ends only once the request has reached the run (its signal aborts).
      .step('ship', {
        waitFor: ['reserve'],
        run: (_args, ctx) =>
          new Promise<string>((resolve) => ctx.signal.addEventListener('abort', () => resolve('s'), { once: true })),
      })
      .step('notify', { waitFor: ['ship'], run: () => 'n' })
      .background('all')
      .build();
    const started = await t.engine.start(worker, { orderId: 'o-1' });
    await settleUntil(() => t.events.some((e) => e.type === 'step.started' && e.step === 'ship'), 'ship started');
    await settleUntil(async () => (await status(started.executionId)) === 'running', 'the record says running');
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' });
    expect(notices.find((n) => n.type === 'event.cancelled')).toMatchObject({ outcome: 'requested' });
    await t.drain();
    expect(await t.engine.result(started.executionId)).toHaveBeenCancelledByEvent('order.cancelled', 'cx-1');
    expect(undone).toEqual(['reserve']);
    expect(t.events.some((e) => e.type === 'step.started' && e.step === 'notify')).toBe(false);
  });

  test('an execution parked on a contended lock is rolled back; the holder goes on', async () => {
    const { t, status } = setup({ background: { workerWaitMs: 0 } }); // a worker meeting the held lock parks at once
    const slow = gate();
    const undone: string[] = [];
    const locked = reactor('locked')
      .input({ orderId: z.string() })
      .withLock({ key: () => 'account-1' })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('work', { run: () => slow.wait.then(() => 'w'), undo: () => void undone.push('work') })
      .build();
    const holder = t.run(locked, { orderId: 'o-1' }); // inline, holding the lock
    await settleUntil(() => t.events.some((e) => e.type === 'step.started'), 'the holder runs');
    const waiter = await t.engine.start(locked, { orderId: 'o-2' }); // in a worker
    await settleUntil(async () => (await status(waiter.executionId)) === 'parked', 'the waiter parked');
    await t.engine.send(orderCancelled, { orderId: 'o-2' });
    expect(await t.engine.result(waiter.executionId)).toHaveBeenCancelledByEvent('order.cancelled');
    expect((await t.engine.result(waiter.executionId))?.trace.some((e) => e.type === 'run.parked')).toBe(true);
    slow.open();
    expect(await holder).toHaveCompleted();
    await t.drain();
    expect(undone).toEqual([]);
  });

  test('a queued start (not yet taken by a worker) is cancelled before it runs; startMany registers too', async () => {
    const { t, clock } = setup();
    const ran: string[] = [];
    const later = reactor('later')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('work', { run: ({ orderId }) => void ran.push(orderId) })
      .build();
    const [a, b] = await t.engine.startMany([
      { reactor: later, input: { orderId: 'o-1' }, options: { delay: '1h' } },
      { reactor: later, input: { orderId: 'o-2' }, options: { delay: '1h' } },
    ]);
    await t.engine.send(orderCancelled, { orderId: 'o-1' });
    expect(await t.engine.result(a.executionId)).toHaveBeenCancelledByEvent('order.cancelled');
    clock.advance('1h');
    await t.drain();
    expect(ran).toEqual(['o-2']);
    expect((await t.engine.result(b.executionId))?.status).toBe('completed');
  });

  test('match is the final check on the payload and the input; a non-matching event cancels nothing', async () => {
    const { t, notices } = setup();
    const checked: unknown[] = [];
    const guarded = reactor('guarded')
      .input({ orderId: z.string(), amount: z.number() })
      .cancelOn(orderCancelled, {
        matchOn: ['orderId'],
        match: (e, input) => (checked.push([e.reason, input.amount]), e.reason !== 'test' && input.amount < 100),
      })
      .interrupt('approve', { payload: { ok: z.boolean() } })
      .build();
    const small = await t.run(guarded, { orderId: 'o-1', amount: 5 });
    const large = await t.run(guarded, { orderId: 'o-1', amount: 500 });
    await t.engine.send(orderCancelled, { orderId: 'o-1', reason: 'test' });
    await t.engine.send(orderCancelled, { orderId: 'o-3' }); // no execution has this key: nothing is read
    expect((await t.engine.result(small.executionId))?.status).toBe('paused');
    expect((await t.engine.result(large.executionId))?.status).toBe('paused');
    expect(checked.map(String).sort()).toEqual(['test,5', 'test,500']);
    await t.engine.send(orderCancelled, { orderId: 'o-1' });
    expect(await t.engine.result(small.executionId)).toHaveBeenCancelledByEvent('order.cancelled');
    expect((await t.engine.result(large.executionId))?.status).toBe('paused');
    expect(notices.filter((n) => n.type === 'event.cancelled')).toHaveLength(1);
  });

  test('an event for a finished execution is a no-op that drops its leftover registration; a re-sent event cancels nothing twice', async () => {
    const { t, notices } = setup();
    const waits = new MemoryEventWaits();
    const own = createTestEngine({ clock: new ManualClock({ autoAdvance: false }), eventWaits: waits });
    const quick = reactor('quick')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .interrupt('approve', { payload: { ok: z.boolean() } })
      .build();
    const done = await own.run(quick, { orderId: 'o-1' });
    expect(await own.resume(done, { ok: true })).toHaveCompleted();
    const key = { event: 'order.cancelled', matchKey: '["o-1"]' };
    expect((await waits.lookup(key, 'cancel', { limit: 10 })).waits).toEqual([]); // removed with its terminal record
    await waits.add({ ...key, kind: 'cancel', executionId: done.executionId, ref: 'quick' }); // a leftover (a crashed process)
    await own.engine.send(orderCancelled, { orderId: 'o-1' });
    expect((await own.engine.result(done.executionId))?.status).toBe('completed');
    expect((await waits.lookup(key, 'cancel', { limit: 10 })).waits).toEqual([]);

    const paused = await t.run(quick, { orderId: 'o-2' });
    await t.engine.send(orderCancelled, { orderId: 'o-2' }, { id: 'cx-2' });
    const again = await t.engine.send(orderCancelled, { orderId: 'o-2' }, { id: 'cx-2' });
    await t.engine.send(orderCancelled, { orderId: 'o-2' }, { id: 'cx-3' }); // another event: the execution has finished
    expect(again.status).toBe('duplicate');
    expect(await t.engine.result(paused.executionId)).toHaveBeenCancelledByEvent('order.cancelled', 'cx-2');
    expect(notices.filter((n) => n.type === 'event.cancelled').map((n) => n.eventId)).toEqual(['cx-2']);
    const byId = new Map((await t.engine.listEvents()).events.map((e) => [e.id, e.effects.cancelled]));
    expect(byId.get('cx-2')).toEqual([paused.executionId]);
    expect(byId.get('cx-3')).toEqual([]);
  });

  test('without matchOn every unfinished execution of the reactor matches; a bare event name works as a declaration', async () => {
    const { t } = setup();
    const all = reactor('all-of-them')
      .cancelOn('shop.closed')
      .interrupt('approve', { payload: { ok: z.boolean() } })
      .build();
    const ids = [(await t.run(all, {})).executionId, (await t.run(all, {})).executionId];
    await t.engine.send('shop.closed', {});
    for (const id of ids) expect(await t.engine.result(id)).toHaveBeenCancelledByEvent('shop.closed');
  });

  test('an engine without an event-wait index refuses to start a reactor that declares cancelOn', async () => {
    const engine = createEngine({ store: new MemoryStore() });
    const r = reactor('needs-index')
      .cancelOn('x.y')
      .step('a', { run: () => 1 })
      .build();
    const refused = await engine.run(r, {}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ReactorError);
    expect(refused).toMatchObject({ code: 'events_unsupported' });
    expect(
      await engine.run(
        reactor('plain')
          .step('a', { run: () => 1 })
          .build(),
        {},
      ),
    ).toHaveCompleted();
  });

  test('an event between the registration and the first record: a background start is cancelled when its job is taken', async () => {
    const held = gate();
    let holding = false;
    /** Holds the write of each pending record until the test opens the gate. */
    class HeldStore extends MemoryStore {
      override async save(record: ExecutionRecord): Promise<void> {
        if (record.status === 'pending' && Object.keys(record.steps).length === 0) {
          holding = true;
          await held.wait;
        }
        return super.save(record);
      }
    }
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock, store: new HeldStore() });
    const notices: EventNotice[] = [];
    t.engine.subscribeEvents((n) => notices.push(n));
    const ran: string[] = [];
    const plain = reactor('window-plain')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('work', { run: ({ orderId }) => void ran.push(orderId) })
      .background('all')
      .build();
    const guarded = reactor('window-guarded')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'], match: () => true })
      .step('work', { run: ({ orderId }) => void ran.push(orderId) })
      .background('all')
      .build();
    const starting = t.engine.startMany([
      { reactor: plain, input: { orderId: 'o-1' } },
      { reactor: guarded, input: { orderId: 'o-1' } },
    ]);
    await settleUntil(() => holding, 'the first records are being written');
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'early' });
    expect(notices.filter((n) => n.type === 'event.cancelled').map((n) => [n.reactor, n.outcome])).toEqual([
      ['window-plain', 'requested'],
    ]);
    held.open();
    const [a, b] = await starting;
    await t.drain();
    expect(await t.engine.result(a.executionId)).toHaveBeenCancelledByEvent('order.cancelled', 'early');
    // `match` cannot be checked without the record's input: that start is passed over (decision 152).
    expect((await t.engine.result(b.executionId))?.status).toBe('completed');
    expect(ran).toEqual(['o-1']);
  });

  test('a retry and a fork are registered like a new start; a run paused on a failure is rolled back too', async () => {
    const { t } = setup();
    const undone: string[] = [];
    const picky = reactor('picky')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('reserve', { run: () => 'r', undo: () => void undone.push('reserve') })
      .step('charge', { waitFor: ['reserve'], onFailure: 'pause', run: () => Promise.reject(new Error('declined')) })
      .build();
    const first = await t.run(picky, { orderId: 'o-1' });
    expect(first).toBePausedOnFailure('charge');
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' });
    expect(await t.engine.result(first.executionId)).toHaveBeenCancelledByEvent('order.cancelled', 'cx-1');
    expect(undone).toEqual(['reserve']);
    const retried = await t.engine.retry(first.executionId); // started in the test engine's pool
    await t.drain();
    expect(await t.engine.result(retried.executionId)).toBePausedOnFailure('charge');
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-2' });
    expect(await t.engine.result(retried.executionId)).toHaveBeenCancelledByEvent('order.cancelled', 'cx-2');
    expect(undone).toEqual(['reserve', 'reserve']);
    const fork = await t.engine.fork(retried.executionId, { fromStep: 'reserve' }); // a fork is registered too
    await t.drain();
    expect(await t.engine.result(fork.executionId)).toBePausedOnFailure('charge');
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-3' });
    expect(await t.engine.result(fork.executionId)).toHaveBeenCancelledByEvent('order.cancelled', 'cx-3');
  });

  test('an asyncReactor child is registered: an event cancels the sleeping child', async () => {
    const { t, status } = setup();
    const undone: string[] = [];
    const child = reactor('cx-child')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('hold', { run: ({ orderId }) => orderId, undo: (id) => void undone.push(`child ${id}`) })
      .sleep('nap', { for: '1h', waitFor: ['hold'] })
      .build();
    const parent = reactor('cx-parent')
      .input({ orderId: z.string() })
      .asyncReactor('fulfil', child, { args: ($) => ({ orderId: $.input('orderId') }) })
      .build();
    const done = await t.run(parent, { orderId: 'o-1' });
    expect(done).toHaveCompleted();
    const childId = done.steps['fulfil']?.unitId;
    expect(childId).toBeDefined();
    await settleUntil(async () => (await status(childId!)) === 'parked', 'the child parked on its sleep');
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' });
    expect(await t.engine.result(childId!)).toHaveBeenCancelledByEvent('order.cancelled', 'cx-1');
    expect(undone).toEqual(['child o-1']);
  });

  test('a sleep waited out inline is cut short and the run rolled back', async () => {
    const { t } = setup({ maxInlineSleepMs: Infinity });
    const undone: string[] = [];
    const napping = reactor('inline-napping')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('before', { run: () => 'ready', undo: () => void undone.push('before') })
      .sleep('wait', { for: '3d', waitFor: ['before'] })
      .step('after', { waitFor: ['wait'], run: () => 'done' })
      .build();
    const running = t.run(napping, { orderId: 'o-1' });
    await settleUntil(() => t.events.some((e) => e.type === 'step.sleeping'), 'the sleep started');
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' });
    expect(await running).toHaveBeenCancelledByEvent('order.cancelled', 'cx-1'); // the clock never moved
    expect(undone).toEqual(['before']);
  });

  test('an execution waiting for another event is rolled back; the event it waited for later resumes nothing', async () => {
    const { t } = setup();
    const undone: string[] = [];
    const paymentSettled = event('payment.settled', { orderId: z.string(), amount: z.number() });
    const checkout = reactor('cx-waiting')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .step('reserve', { run: ({ orderId }) => orderId, undo: (r) => void undone.push(r) })
      .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'], waitFor: ['reserve'] })
      .build();
    const started = await t.engine.start(checkout, { orderId: 'o-1' });
    await settleUntil(
      async () => (await t.engine.result(started.executionId))?.steps['reserve']?.status === 'completed',
      'reserved',
    );
    await t.drain();
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' });
    expect(await t.engine.result(started.executionId)).toHaveBeenCancelledByEvent('order.cancelled', 'cx-1');
    expect(undone).toEqual(['o-1']);
    await t.engine.send(paymentSettled, { orderId: 'o-1', amount: 5 }, { id: 'pay-1' });
    await t.drain();
    expect((await t.engine.result(started.executionId))?.status).toBe('cancelled');
    const [pay] = (await t.engine.listEvents({ name: 'payment.settled' })).events;
    expect(pay?.effects.resumed).toEqual([]);
  });

  test('an execution that waits for the event that cancels it is cancelled, not resumed', async () => {
    const { t } = setup();
    const both = reactor('cx-both')
      .input({ orderId: z.string() })
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .waitForEvent('cancelled', { event: orderCancelled, matchOn: ['orderId'] })
      .build();
    const started = await t.engine.start(both, { orderId: 'o-1' });
    await t.drain();
    expect((await t.engine.result(started.executionId))?.status).toBe('paused'); // waiting for the event
    await t.engine.send(orderCancelled, { orderId: 'o-1' }, { id: 'cx-1' });
    await t.drain();
    expect(await t.engine.result(started.executionId)).toHaveBeenCancelledByEvent('order.cancelled', 'cx-1');
    const [kept] = (await t.engine.listEvents({ name: 'order.cancelled' })).events;
    expect(kept?.effects).toMatchObject({ cancelled: [started.executionId], resumed: [] });
  });
});
