/**
 * Reactors started by an event (`.on`), on the test engine (memory backend, manual clock, no
 * sleeps): one execution per event and reactor with the trigger's input, a repeated send that
 * starts nothing twice, `match` and `idempotencyKey`, a failing trigger that stops none of the
 * others, the index kept by registration, and the declaration checked at build.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  DefinitionError,
  event,
  EventTriggerError,
  reactor,
  type AnyReactorDefinition,
  type EventNotice,
} from '../../src/index.js';
import { createEngine, MemoryEventLog, MemoryStore } from '../../src/index.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';
import { runMatchers } from '../../src/testing/matchers.js';
import '../../src/testing/vitest.js';

const orderPaid = event('order.paid', { orderId: z.string(), amount: z.number() });

const fulfil = reactor('fulfil')
  .input({ orderId: z.string(), cents: z.number().int() })
  .on(orderPaid, { input: (e) => ({ orderId: e.orderId, cents: e.amount * 100 }), match: (e) => e.amount > 0 })
  .step('ship', { args: ($) => ({ orderId: $.input('orderId') }), run: ({ orderId }) => `shipped ${orderId}` })
  .returns('ship');

const audit = reactor('audit')
  .input({ note: z.string() })
  .on('order.paid', { input: (e, meta) => ({ note: `${meta.id}: ${JSON.stringify(e)}` }) })
  .step('log', { run: ({ note }) => note })
  .returns('log');

function engineWith(...reactors: AnyReactorDefinition[]) {
  const t = createTestEngine({ reactors });
  const notices: EventNotice[] = [];
  t.engine.subscribeEvents((n) => notices.push(n));
  return { t, notices };
}

describe('starting reactors on an event', () => {
  test('a matching event starts one execution per reactor, tagged with the event and recorded on it', async () => {
    const { t, notices } = engineWith(fulfil, audit);
    const sent = await t.engine.send(orderPaid, { orderId: 'o-1', amount: 3 }, { id: 'pay-1' });
    expect(sent.status).toBe('accepted');
    expect(sent.started).toHaveLength(2);
    expect(sent.triggerFailures).toEqual([]);
    await t.drain();
    const [fulfilled, audited] = await Promise.all([
      t.engine.result(sent.started[0]!, fulfil),
      t.engine.result(sent.started[1]!, audit),
    ]);
    expect(fulfilled).toHaveCompleted();
    expect(fulfilled?.status === 'completed' && fulfilled.value).toBe('shipped o-1');
    expect(fulfilled).toBeStartedByEvent({ name: 'order.paid', id: 'pay-1' });
    expect(fulfilled?.tags).toEqual({ event: 'pay-1', 'event.name': 'order.paid' });
    expect(audited?.status === 'completed' && audited.value).toBe('pay-1: {"orderId":"o-1","amount":3}');
    const [kept] = (await t.engine.listEvents()).events;
    expect(kept?.effects.started).toEqual(sent.started);
    expect(notices.map((n) => [n.type, 'reactor' in n ? n.reactor : undefined])).toEqual([
      ['event.received', undefined],
      ['event.started', 'fulfil'],
      ['event.started', 'audit'],
    ]);
    expect(notices[1]).toMatchObject({ eventId: 'pay-1', executionId: sent.started[0], replay: false });
  });

  test('the same event sent again starts nothing twice: it finds each start made (replay) and answers the same ids', async () => {
    const { t, notices } = engineWith(fulfil);
    const first = await t.engine.send(orderPaid, { orderId: 'o-1', amount: 1 }, { id: 'pay-1' });
    const again = await t.engine.send(orderPaid, { orderId: 'o-1', amount: 1 }, { id: 'pay-1' });
    const [many] = await t.engine.sendMany([
      { event: orderPaid, payload: { orderId: 'o-1', amount: 1 }, options: { id: 'pay-1' } },
    ]);
    expect(again.status).toBe('duplicate');
    expect(again.started).toEqual(first.started);
    expect(many?.started).toEqual(first.started);
    await t.drain();
    expect((await t.engine.list({ reactor: 'fulfil' })).executions).toHaveLength(1);
    expect(
      notices.filter((n) => n.type === 'event.started').map((n) => n.type === 'event.started' && n.replay),
    ).toEqual([false, true, true]);
    expect((await t.engine.listEvents()).events[0]?.effects.started).toEqual(first.started);
  });

  test('match decides; events of other names start nothing; each sendMany entry runs its own triggers', async () => {
    const { t } = engineWith(fulfil);
    expect((await t.engine.send(orderPaid, { orderId: 'o-0', amount: 0 })).started).toEqual([]);
    expect((await t.engine.send('order.refunded', { orderId: 'o-0' })).started).toEqual([]);
    const results = await t.engine.sendMany([
      { event: orderPaid, payload: { orderId: 'o-1', amount: 1 } },
      { event: orderPaid, payload: { orderId: 'o-2', amount: 0 } },
      { event: orderPaid, payload: { orderId: 'o-3', amount: 2 } },
    ]);
    expect(results.map((r) => r.started.length)).toEqual([1, 0, 1]);
    await t.drain();
    expect((await t.engine.list({ reactor: 'fulfil' })).executions).toHaveLength(2);
  });

  test('idempotencyKey: events with one key start one execution; a key that is not a non-empty string fails the trigger', async () => {
    const perOrder = reactor('per-order')
      .input({ orderId: z.string() })
      .on(orderPaid, { input: (e) => ({ orderId: e.orderId }), idempotencyKey: (e) => `order:${e.orderId}` })
      .step('s', { run: ({ orderId }) => orderId })
      .build();
    const { t } = engineWith(perOrder);
    const a = await t.engine.send(orderPaid, { orderId: 'o-1', amount: 1 });
    const b = await t.engine.send(orderPaid, { orderId: 'o-1', amount: 2 });
    expect(b.started).toEqual(a.started);
    const blank = reactor('blank')
      .on(orderPaid, { input: () => ({}), idempotencyKey: () => '' })
      .step('s', { run: () => 1 })
      .build();
    t.engine.register(blank);
    const c = await t.engine.send(orderPaid, { orderId: 'o-2', amount: 1 });
    expect(c.started).toHaveLength(1);
    expect(c.triggerFailures[0]).toMatchObject({
      code: 'event_trigger_failed',
      details: { reactor: 'blank', stage: 'idempotencyKey' },
    });
  });

  test('a trigger that throws or gives an invalid input fails alone: the others start, the event stays stored', async () => {
    const throwing = reactor('throwing')
      .on(orderPaid, {
        input: () => {
          throw new Error('no input today');
        },
      })
      .step('s', { run: () => 1 })
      .build();
    const badMatch = reactor('bad-match')
      .on(orderPaid, {
        input: () => ({}),
        match: () => {
          throw new Error('cannot tell');
        },
      })
      .step('s', { run: () => 1 })
      .build();
    const invalid = reactor('invalid')
      .input({ cents: z.number().int() })
      .on(orderPaid, { input: (e) => ({ cents: e.amount }) })
      .step('s', { run: ({ cents }) => cents })
      .build();
    const { t, notices } = engineWith(throwing, badMatch, invalid, fulfil);
    const sent = await t.engine.send(orderPaid, { orderId: 'o-1', amount: 1.5 }, { id: 'pay-9' });
    expect(sent.status).toBe('accepted');
    expect(sent.started).toHaveLength(1);
    expect(sent.triggerFailures.map((f) => [f.details.reactor, f.details.stage])).toEqual([
      ['throwing', 'input'],
      ['bad-match', 'match'],
      ['invalid', 'input'],
    ]);
    expect(sent.triggerFailures[0]).toBeInstanceOf(EventTriggerError);
    expect(sent.triggerFailures[0]?.message).toContain('no input today');
    expect(sent.triggerFailures[2]?.details.issues?.[0]?.path).toBe('cents');
    expect(notices.filter((n) => n.type === 'event.trigger_failed')).toHaveLength(3);
    expect(notices.find((n) => n.type === 'event.trigger_failed')).toMatchObject({
      eventId: 'pay-9',
      reactor: 'throwing',
      error: { code: 'event_trigger_failed', details: { stage: 'input' } },
    });
    expect((await t.engine.listEvents()).events.map((e) => e.id)).toEqual(['pay-9']);
    await t.drain();
    expect((await t.engine.list()).executions.map((e) => e.reactor)).toEqual(['fulfil']);
  });

  test("a failed trigger is a warning on the engine's logger, naming the event, the reactor and the stage", async () => {
    const warnings: { fields: unknown; message: string | undefined }[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (fields: object | string, message?: string) => warnings.push({ fields, message }),
      error: () => undefined,
    };
    const invalid = reactor('invalid')
      .input({ cents: z.number().int() })
      .on(orderPaid, { input: (e) => ({ cents: e.amount }) })
      .step('s', { run: ({ cents }) => cents })
      .build();
    const t = createTestEngine({ reactors: [invalid], logger, logEvents: false });
    await t.engine.send(orderPaid, { orderId: 'o-1', amount: 0.5 }, { id: 'pay-w' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.fields).toMatchObject({
      eventId: 'pay-w',
      event: 'order.paid',
      reactor: 'invalid',
      stage: 'input',
    });
    expect(warnings[0]?.message).toContain('could not start');
  });

  test('triggers are indexed at registration: an unregistered reactor starts nothing; a new version replaces its triggers', async () => {
    const { t } = engineWith();
    expect((await t.engine.send(orderPaid, { orderId: 'o-1', amount: 1 })).started).toEqual([]);
    t.engine.register(fulfil);
    expect((await t.engine.send(orderPaid, { orderId: 'o-2', amount: 1 })).started).toHaveLength(1);
    const quiet = reactor('fulfil', { version: '2' })
      .input({ orderId: z.string(), cents: z.number().int() })
      .step('ship', { run: () => 'quiet' })
      .step('more', { run: () => 1 })
      .returns('ship');
    t.engine.register(quiet);
    expect((await t.engine.send(orderPaid, { orderId: 'o-3', amount: 1 })).started).toEqual([]);
  });

  test('triggers run in the order their reactors were first registered; a new version keeps its place', async () => {
    const { t, notices } = engineWith(fulfil, audit);
    const fulfil3 = reactor('fulfil', { version: '3' })
      .input({ orderId: z.string(), cents: z.number().int() })
      .on(orderPaid, { input: (e) => ({ orderId: e.orderId, cents: 3 }) })
      .step('ship', { run: () => 'v3' })
      .step('extra', { run: () => 3 })
      .returns('ship');
    t.engine.register(fulfil3);
    await t.engine.send(orderPaid, { orderId: 'o-1', amount: 1 });
    expect(notices.filter((n) => n.type === 'event.started').map((n) => 'reactor' in n && n.reactor)).toEqual([
      'fulfil',
      'audit',
    ]);
    await t.drain();
    const [first] = (await t.engine.list({ reactor: 'fulfil' })).executions;
    const done = await t.engine.result(first!.executionId, fulfil3);
    expect(done?.status === 'completed' && done.value).toBe('v3');
  });

  test('an engine without a queue cannot start on an event: the trigger fails (queue_missing), the event is stored', async () => {
    const clock = new ManualClock();
    const engine = createEngine({
      store: new MemoryStore(),
      clock,
      events: new MemoryEventLog({ clock }),
      reactors: [fulfil],
    });
    const sent = await engine.send(orderPaid, { orderId: 'o-1', amount: 1 });
    expect(sent.started).toEqual([]);
    expect(sent.triggerFailures[0]?.details.stage).toBe('start');
    expect((sent.triggerFailures[0]?.cause as { code?: string }).code).toBe('queue_missing');
    expect((await engine.listEvents()).events).toHaveLength(1);
  });

  test('the test engine starts the triggered executions on its manual clock; its send drains them', async () => {
    const later = reactor('later')
      .input({ orderId: z.string() })
      .on(orderPaid, { input: (e) => ({ orderId: e.orderId }) })
      .sleep('wait', { for: '1h' })
      .step('done', { waitFor: ['wait'], run: () => 'done' })
      .returns('done');
    const t = createTestEngine({ reactors: [later] });
    const sent = await t.send(orderPaid, { orderId: 'o-1', amount: 1 }, { id: 'e-1' });
    expect(sent.runs).toHaveLength(1);
    expect(sent.runs[0]).toHaveCompleted();
    expect(sent.runs[0]).toBeStartedByEvent({ id: 'e-1' });
    expect(sent.runs[0]).not.toBeStartedByEvent({ name: 'order.refunded' });
    expect(t.clock.now()).toBeGreaterThanOrEqual(3_600_000);
  });
});

test('toBeStartedByEvent: a run not started by an event fails it, saying so', async () => {
  const t = createTestEngine();
  const plain = await t.run(fulfil, { orderId: 'o-1', cents: 1 });
  expect(plain).toHaveCompleted();
  expect(plain).not.toBeStartedByEvent();
  const verdict = runMatchers.toBeStartedByEvent(plain, { name: 'order.paid' });
  expect(verdict).toEqual({
    pass: false,
    message: 'expected the run to have been started by an event "order.paid"; it was not started by an event',
  });
  expect(runMatchers.toBeStartedByEvent('nope').pass).toBe(false);
});

describe('.on checked at build', () => {
  const base = () => reactor('r').input({ id: z.string() });
  test.each([
    ['an empty name', () => base().on('', { input: () => ({ id: 'x' }) }), 'event name'],
    ['no options', () => base().on('a.b', undefined as never), 'needs options'],
    ['no input', () => base().on('a.b', {} as never), 'needs an input function'],
    [
      'an unknown option',
      () => base().on('a.b', { input: () => ({ id: 'x' }), when: 1 } as never),
      'unknown option "when"',
    ],
    [
      'a match that is no function',
      () => base().on('a.b', { input: () => ({ id: 'x' }), match: true } as never),
      'match must be a function',
    ],
    [
      'the same event twice',
      () =>
        base()
          .on('a.b', { input: () => ({ id: 'x' }) })
          .on(event('a.b', {}), { input: () => ({ id: 'y' }) }),
      'twice',
    ],
    [
      '.input after .on',
      () =>
        reactor('r')
          .on('a.b', { input: () => ({}) })
          .input({ id: z.string() }),
      'first',
    ],
  ])('%s is a DefinitionError', (_case, build, message) => {
    expect(build).toThrow(DefinitionError);
    expect(build).toThrow(message);
  });

  test('several events per reactor; a derived reactor inherits them', () => {
    const built = base()
      .on('a.b', { input: () => ({ id: 'x' }) })
      .on(orderPaid, { input: (e) => ({ id: e.orderId }) })
      .step('s', { run: () => 1 })
      .build();
    expect(built.triggers?.map((t) => t.event)).toEqual(['a.b', 'order.paid']);
    expect(Object.isFrozen(built.triggers)).toBe(true);
    expect(
      built
        .extend('derived')
        .build()
        .triggers?.map((t) => t.event),
    ).toEqual(['a.b', 'order.paid']);
  });
});
