/**
 * Reactors started by an event through a runtime on every backend: the started execution runs in
 * a worker with the trigger's input, carries the event's tags (listable with `engine.list`), is
 * recorded on the event's `started` effects; a re-sent event starts nothing twice (and starts what
 * a sender that died after storing it left unstarted); a failing trigger leaves the event stored; and two runtimes on one namespace sending the same ids at once
 * start exactly one execution per event.
 */
import { expect, test } from 'vitest';
import { z } from 'zod';
import { event, reactor, type EventNotice } from '../../src/index.js';
import { describeOnBackends, testWhere } from '../support/backend-matrix.js';

const orderPaid = event('order.paid', { orderId: z.string(), amount: z.number() });

const fulfil = reactor('fulfil-on-paid')
  .input({ orderId: z.string(), cents: z.number().int() })
  .on(orderPaid, { input: (e) => ({ orderId: e.orderId, cents: Math.round(e.amount * 100) }) })
  .step('ship', { args: ($) => ({ cents: $.input('cents') }), run: ({ cents }) => cents })
  .returns('ship');

const refuses = reactor('refuses-on-paid')
  .on(orderPaid, {
    input: () => {
      throw new Error('never');
    },
  })
  .step('s', { run: () => 1 })
  .build();

describeOnBackends('reactors started by an event', (backend) => {
  test('a sent event starts the reactor once; a re-send starts nothing twice; the event records it', async () => {
    const { engine, startWorker } = backend.runtime({ reactors: [fulfil, refuses] });
    const notices: EventNotice[] = [];
    engine.subscribeEvents((n) => notices.push(n));
    const sent = await engine.send(orderPaid, { orderId: 'o-1', amount: 4.2 }, { id: 'pay-1' });
    expect(sent.status).toBe('accepted');
    expect(sent.started).toHaveLength(1);
    expect(sent.triggerFailures.map((f) => [f.code, f.details.reactor, f.details.stage])).toEqual([
      ['event_trigger_failed', 'refuses-on-paid', 'input'],
    ]);
    const again = await engine.send(orderPaid, { orderId: 'o-1', amount: 4.2 }, { id: 'pay-1' });
    expect(again).toMatchObject({ status: 'duplicate', started: sent.started });
    startWorker({ concurrency: 2 });
    const [executionId] = sent.started;
    const done = await engine.wait(executionId!, fulfil, { timeoutMs: 60_000 });
    expect(done.status === 'completed' && done.value).toBe(420);
    expect(done.tags).toEqual({ event: 'pay-1', 'event.name': 'order.paid' });
    const listed = await engine.list({ tags: { event: 'pay-1' } });
    expect(listed.executions.map((e) => e.executionId)).toEqual([executionId]);
    expect((await engine.list({ reactor: 'fulfil-on-paid' })).executions).toHaveLength(1);
    const kept = (await engine.listEvents({ name: 'order.paid' })).events;
    expect(kept.map((e) => [e.id, e.effects.started])).toEqual([['pay-1', [executionId]]]);
    expect(
      notices.filter((n) => n.type === 'event.started').map((n) => n.type === 'event.started' && n.replay),
    ).toEqual([false, true]);
  }, 120_000);

  test('an event stored by a process that died before starting anything: sending it again starts it, once', async () => {
    const runtime = backend.runtime({ reactors: [fulfil] });
    // What a sender that died between the append and the start leaves: the event, no execution.
    await runtime.backend.events!.append({
      id: 'pay-crash',
      name: 'order.paid',
      payload: { orderId: 'o-9', amount: 1 },
    });
    expect((await runtime.engine.list({ reactor: 'fulfil-on-paid' })).executions).toEqual([]);
    const healed = await runtime.engine.send(orderPaid, { orderId: 'o-9', amount: 1 }, { id: 'pay-crash' });
    expect(healed.status).toBe('duplicate');
    expect(healed.started).toHaveLength(1);
    const again = await runtime.engine.send(orderPaid, { orderId: 'o-9', amount: 1 }, { id: 'pay-crash' });
    expect(again.started).toEqual(healed.started);
    expect((await runtime.engine.list({ reactor: 'fulfil-on-paid' })).executions).toHaveLength(1);
    expect((await runtime.engine.listEvents()).events[0]?.effects.started).toEqual(healed.started);
  }, 120_000);

  // Two runtimes on one namespace are two processes' views of one shared backend; memory has no such thing.
  testWhere(backend.shared)(
    'two runtimes sending the same ids at once start exactly one execution per event',
    async () => {
      const first = backend.runtime({ reactors: [fulfil] });
      const second = backend.runtime({ reactors: [fulfil], namespace: first.namespace });
      const ids = Array.from({ length: 20 }, (_, i) => `pay-${i}`);
      const results = await Promise.all(
        ids.flatMap((id) =>
          [first, second, first].map((r) => r.engine.send(orderPaid, { orderId: id, amount: 1 }, { id })),
        ),
      );
      for (const id of ids) {
        const mine = results.filter((r) => r.id === id);
        expect(
          mine.filter((r) => r.status === 'accepted'),
          id,
        ).toHaveLength(1);
        expect(new Set(mine.map((r) => r.started.join())).size, id).toBe(1);
        expect(mine[0]?.started, id).toHaveLength(1);
      }
      const executions = [];
      for (let page = await second.engine.list({ reactor: 'fulfil-on-paid', limit: 100 }); ;) {
        executions.push(...page.executions);
        if (page.cursor === undefined) break;
        page = await second.engine.list({ reactor: 'fulfil-on-paid', limit: 100, cursor: page.cursor });
      }
      expect(executions).toHaveLength(ids.length);
      expect(new Set(executions.map((e) => e.tags.event))).toEqual(new Set(ids));
    },
    120_000,
  );
});
