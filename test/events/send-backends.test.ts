/**
 * `engine.send`, `sendMany` and `listEvents` through a runtime on every backend: a declared
 * payload validated and stored as validated, ids accepted once (also between two runtimes on one
 * namespace, sending at once), notices for each outcome, nothing stored for a bad entry.
 */
import { expect, test } from 'vitest';
import { z } from 'zod';
import { event, EventPayloadError, ListFilterError, type EventNotice } from '../../src/index.js';
import { describeOnBackends, testWhere } from '../support/backend-matrix.js';

const orderPaid = event('order.paid', { orderId: z.string(), amount: z.number(), currency: z.string().default('EUR') });

describeOnBackends('sent events', (backend) => {
  test('a declared event is validated and stored as validated; a repeated id is a duplicate that changes nothing', async () => {
    const { engine } = backend.runtime();
    const notices: EventNotice[] = [];
    engine.subscribeEvents((n) => notices.push(n));
    const sent = await engine.send(orderPaid, { orderId: 'o-1', amount: 42 }, { id: 'pay-1', ts: new Date(1_000) });
    expect(sent).toMatchObject({ status: 'accepted', id: 'pay-1', name: 'order.paid', ts: 1_000 });
    const again = await engine.send(orderPaid, { orderId: 'o-2', amount: 1 }, { id: 'pay-1' });
    expect(again).toEqual({ ...sent, status: 'duplicate' });
    const byName = await engine.send('order.note', { text: 'hi' });
    expect(byName.status).toBe('accepted');
    expect(byName.id).not.toBe('');
    expect(byName.ts).toBe(byName.receivedAt);
    const page = await engine.listEvents({ name: 'order.paid' });
    expect(page.events).toEqual([
      {
        id: 'pay-1',
        name: 'order.paid',
        payload: { orderId: 'o-1', amount: 42, currency: 'EUR' },
        ts: 1_000,
        receivedAt: sent.receivedAt,
        effects: { started: [], resumed: [], cancelled: [] },
      },
    ]);
    expect((await engine.listEvents()).events.map((e) => e.id).sort()).toEqual([byName.id, 'pay-1'].sort());
    expect(notices.map((n) => [n.type, n.eventId])).toEqual([
      ['event.received', 'pay-1'],
      ['event.duplicate', 'pay-1'],
      ['event.received', byName.id],
    ]);
  });

  test('sendMany checks every entry first: one bad payload stores nothing; good entries are stored in order', async () => {
    const { engine } = backend.runtime();
    const bad = await engine
      .sendMany([
        { event: orderPaid, payload: { orderId: 'o-1', amount: 1 } },
        { event: orderPaid, payload: { orderId: 'o-2', amount: 'two' } as never },
      ])
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(EventPayloadError);
    expect(bad).toMatchObject({ details: { entry: 1 } });
    expect((await engine.listEvents()).events).toEqual([]);
    const results = await engine.sendMany([
      { event: orderPaid, payload: { orderId: 'o-1', amount: 1 }, options: { id: 'a' } },
      { event: 'stock.low', payload: { sku: 's-1' }, options: { id: 'b' } },
      { event: orderPaid, payload: { orderId: 'o-1', amount: 1 }, options: { id: 'a' } },
    ]);
    expect(results.map((r) => [r.id, r.status])).toEqual([
      ['a', 'accepted'],
      ['b', 'accepted'],
      ['a', 'duplicate'],
    ]);
    await expect(engine.listEvents({ limit: 0 })).rejects.toBeInstanceOf(ListFilterError);
    await expect(engine.listEvents({ since: 10, until: 5 })).rejects.toBeInstanceOf(ListFilterError);
  });

  // Two runtimes on one namespace are two processes' views of one shared backend; memory has no such thing.
  testWhere(backend.shared)(
    'two runtimes sending the same ids at once: each id accepted exactly once',
    async () => {
      const first = backend.runtime();
      const second = backend.runtime({ namespace: first.namespace });
      const ids = Array.from({ length: 25 }, (_, i) => `dup-${i}`);
      const results = await Promise.all(
        ids.flatMap((id) => [first, second].map((r) => r.engine.send(orderPaid, { orderId: id, amount: 1 }, { id }))),
      );
      for (const id of ids)
        expect(
          results.filter((r) => r.id === id && r.status === 'accepted'),
          id,
        ).toHaveLength(1);
      const listed = [];
      for (let page = await second.engine.listEvents({ limit: 10 }); ;) {
        listed.push(...page.events);
        if (page.cursor === undefined) break;
        page = await second.engine.listEvents({ limit: 10, cursor: page.cursor });
      }
      expect(listed.map((e) => e.id).sort()).toEqual([...ids].sort());
    },
    120_000,
  );
});
