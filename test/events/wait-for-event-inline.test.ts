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
import { createTestEngine } from '../../src/testing/index.js';
import { checkout, paymentSettled } from './wait-fixtures.js';

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
