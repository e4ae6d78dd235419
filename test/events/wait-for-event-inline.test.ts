/**
 * `.waitForEvent` in process: an inline run parks at the wait and returns `paused` holding
 * nothing; a sent event resumes it (in the test engine's worker pool, or — on an engine without a
 * queue — in the sending process); a predicate-only wait (no `matchOn`) is matched by `match`; a
 * wait on an engine without an index fails the step with `events_unsupported`; and the builder
 * refuses a bad declaration.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEngine,
  DefinitionError,
  event,
  MemoryCoordinator,
  MemoryStore,
  reactor,
  type ReactorEvent,
} from '../../src/index.js';
import { MemoryEventLog } from '../../src/storage/memory/event-log.js';
import { MemoryEventWaits } from '../../src/storage/memory/event-waits.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';
import { runMatchers } from '../../src/testing/matchers.js';
import { bigPayment, both, checkout, parcelReady, paymentSettled } from './wait-fixtures.js';

describe('waitForEvent in process', () => {
  test('an inline run parks at the wait (paused, nothing held) and a sent event resumes it in a worker', async () => {
    const t = createTestEngine();
    const paused = await t.run(checkout, { orderId: 'o-1' });
    expect(paused).toBePaused('payment');
    expect(t.events.filter((e) => e.type === 'wait.paused')).toEqual([
      expect.objectContaining({ step: 'payment', event: 'payment.settled', matchKey: '["o-1"]' }),
    ]);
    const record = await t.store.get(paused.executionId);
    expect(record).toMatchObject({ status: 'paused' });
    expect(record?.background?.waitingFor).toBeUndefined(); // parked on nothing: no key, no job
    await t.engine.send(paymentSettled, { orderId: 'o-1', amount: 12 }, { id: 'pay-1' });
    await t.drain();
    expect(await t.engine.result(paused.executionId)).toMatchObject({ status: 'completed', value: 'o-1:12' });
    expect(t.events.filter((e) => e.type === 'wait.resumed')).toEqual([
      expect.objectContaining({ step: 'payment', eventId: 'pay-1', mode: 'background' }),
    ]);
    await t.close();
  });

  test('without a queue the resumed run continues in the sending process', async () => {
    const store = new MemoryStore();
    const engine = createEngine({
      store,
      coordinator: new MemoryCoordinator(),
      interruptClaims: store,
      events: new MemoryEventLog(),
      eventWaits: new MemoryEventWaits(),
      reactors: [checkout],
    });
    const events: ReactorEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const paused = await engine.run(checkout, { orderId: 'o-2' });
    expect(paused).toBePaused('payment');
    await engine.idle(); // the re-check after the park found nothing
    await engine.send(paymentSettled, { orderId: 'o-2', amount: 3 });
    await engine.idle();
    expect(await engine.result(paused.executionId)).toMatchObject({ status: 'completed', value: 'o-2:3' });
    expect(events.find((e) => e.type === 'wait.resumed')).toMatchObject({ mode: 'inline' });
  });

  test('an execution cancelled while it waits leaves no registration in the index', async () => {
    const eventWaits = new MemoryEventWaits();
    const t = createTestEngine({ eventWaits });
    const paused = await t.run(checkout, { orderId: 'o-5' });
    const key = { event: 'payment.settled', matchKey: '["o-5"]' };
    expect((await eventWaits.lookup(key, 'resume', { limit: 10 })).waits).toHaveLength(1);
    await t.engine.cancel(paused.executionId);
    await t.engine.idle();
    expect((await eventWaits.lookup(key, 'resume', { limit: 10 })).waits).toEqual([]);
    await t.close();
  });

  test('a wait without matchOn is matched by its predicate alone', async () => {
    const anyBig = reactor('wfe-any-big')
      .input({ min: z.number() })
      .waitForEvent('payment', { event: paymentSettled, match: (e, { min }) => e.amount >= min })
      .returns('payment');
    const t = createTestEngine({ reactors: [anyBig] });
    const paused = await t.run(anyBig, { min: 100 });
    expect(paused).toBePaused('payment');
    await t.engine.send(paymentSettled, { orderId: 'x', amount: 5 });
    await t.drain();
    expect((await t.engine.result(paused.executionId))?.status).toBe('paused');
    await t.engine.send(paymentSettled, { orderId: 'y', amount: 500 });
    await t.drain();
    expect(await t.engine.result(paused.executionId)).toMatchObject({ value: { orderId: 'y', amount: 500 } });
    await t.close();
  });

  test('toBeWaitingForEvent: a run paused at a wait, for that event; it fails otherwise, saying what the run does', async () => {
    const t = createTestEngine();
    const paused = await t.run(checkout, { orderId: 'o-w' });
    // The paused result names the event each open wait waits for; an interrupt has none.
    expect(paused.status === 'paused' && paused.interrupts).toEqual([
      expect.objectContaining({ step: 'payment', event: 'payment.settled' }),
    ]);
    expect(paused).toBeWaitingForEvent();
    expect(paused).toBeWaitingForEvent('payment.settled');
    expect(paused).not.toBeWaitingForEvent('parcel.ready');
    expect(runMatchers.toBeWaitingForEvent(paused, 'parcel.ready')).toEqual({
      pass: false,
      message:
        'expected the run to be paused waiting for event "parcel.ready"; it waits for "payment.settled" at "payment"',
    });
    const done = await t.run(
      reactor('wfe-plain')
        .step('a', { run: () => 1 })
        .returns('a'),
      {},
    );
    expect(done).not.toBeWaitingForEvent();
    expect(runMatchers.toBeWaitingForEvent(done).message).toBe(
      'expected the run to be paused waiting for an event; it completed',
    );
    const approval = reactor('wfe-approval')
      .interrupt('approve', { payload: z.object({ ok: z.boolean() }) })
      .returns('approve');
    const atInterrupt = await t.run(approval, {});
    expect(atInterrupt).toBePaused('approve');
    expect(atInterrupt.status === 'paused' && atInterrupt.interrupts).toEqual([{ step: 'approve' }]);
    expect(atInterrupt).not.toBeWaitingForEvent();
    expect(runMatchers.toBeWaitingForEvent(atInterrupt).message).toBe(
      'expected the run to be paused waiting for an event; it is paused at interrupts [approve], none a wait for an event',
    );
    expect(runMatchers.toBeWaitingForEvent('nope').pass).toBe(false);
    await t.close();
  });

  test("the test engine's send resumes a waiting run on the manual clock; a wait resumed leaves the others waiting", async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock });
    const two = await t.run(both, { orderId: 'o-s' });
    expect(two).toBeWaitingForEvent('payment.settled');
    expect(two).toBeWaitingForEvent('parcel.ready');
    const sent = await t.send(paymentSettled, { orderId: 'o-s', amount: 5 }, { id: 'pay-s' });
    expect(sent).toMatchObject({ status: 'accepted', started: [], runs: [] });
    const half = await t.engine.result(two.executionId);
    expect(half).toBeWaitingForEvent('parcel.ready');
    expect(half).not.toBeWaitingForEvent('payment.settled');
    await t.send(parcelReady, { orderId: 'o-s', parcel: 'P-1' });
    expect(await t.engine.result(two.executionId)).toMatchObject({ status: 'completed', value: 'P-1:5' });
    // A wait with a timeout: an event its predicate refuses leaves it waiting; the matching one resumes it. The clock never moved.
    const big = await t.run(bigPayment, { orderId: 'o-b', min: 10 });
    await t.send(paymentSettled, { orderId: 'o-b', amount: 3 });
    expect(await t.engine.result(big.executionId)).toBeWaitingForEvent('payment.settled');
    await t.send(paymentSettled, { orderId: 'o-b', amount: 30 });
    expect(await t.engine.result(big.executionId)).toMatchObject({
      status: 'completed',
      value: { orderId: 'o-b', amount: 30 },
    });
    expect(clock.now()).toBe(two.trace[0]!.at);
    await t.close();
  });

  test('engine.resume does not resume a wait for an event', async () => {
    const t = createTestEngine();
    const paused = await t.run(checkout, { orderId: 'o-3' });
    await expect(t.engine.resume(paused.executionId, { orderId: 'o-3', amount: 1 })).rejects.toMatchObject({
      code: 'resume_refused',
    });
    await t.close();
  });

  test('an engine without an event-wait index fails the step with events_unsupported', async () => {
    const store = new MemoryStore();
    const engine = createEngine({ store, coordinator: new MemoryCoordinator(), interruptClaims: store });
    const failed = await engine.run(checkout, { orderId: 'o-4' });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'events_unsupported' } });
  });

  test('the builder refuses a bad declaration', () => {
    const build = (options: object) => () =>
      reactor('bad')
        .input({ orderId: z.string() })
        .waitForEvent('w', options as never)
        .build();
    expect(build({ event: 'payment.settled' })).toThrow(DefinitionError);
    expect(build({ event: paymentSettled, matchOn: ['nope'] })).toThrow(/not a field of event "payment.settled"/);
    expect(build({ event: paymentSettled, matchOn: ['orderId', 'orderId'] })).toThrow(/twice/);
    expect(build({ event: paymentSettled, timeout: 0 })).toThrow(/positive duration/);
    expect(build({ event: paymentSettled, onTimeout: () => 1 })).toThrow(/needs a timeout/);
    expect(build({ event: paymentSettled, timeout: '1h', onTimeout: 'skip' })).toThrow(/onTimeout/);
    expect(build({ event: paymentSettled, lock: { key: 'k' } })).toThrow(/cannot coordinate/);
    const other = event('other.thing', { id: z.string() });
    expect(() =>
      reactor('bad-map')
        .input({ ids: z.array(z.string()) })
        .map('each', {
          source: ($) => $.input('ids'),
          each: reactor('el').input({ id: z.string() }).waitForEvent('w', { event: other }).build(),
          args: (id: string) => ({ id }),
        })
        .build(),
    ).toThrow(/map elements cannot pause/);
  });
});
