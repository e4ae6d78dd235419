import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  event,
  type Engine,
  type EventInput,
  type EventListPage,
  type EventName,
  type EventNotice,
  type EventPayload,
  type SendResult,
  type StoredEvent,
} from '../../src/index.js';

declare const engine: Engine;
const orderPaid = event('order.paid', {
  orderId: z.string(),
  amount: z.number(),
  currency: z.string().default('EUR'),
  note: z.string().optional(),
});

describe('event declarations', () => {
  test('the payload is inferred from the fields: what is sent, and what is stored (defaults applied)', () => {
    expectTypeOf<EventName<typeof orderPaid>>().toEqualTypeOf<'order.paid'>();
    expectTypeOf<EventInput<typeof orderPaid>>().toEqualTypeOf<{
      orderId: string;
      amount: number;
      currency?: string | undefined;
      note?: string | undefined;
    }>();
    expectTypeOf<EventPayload<typeof orderPaid>>().toEqualTypeOf<{
      orderId: string;
      amount: number;
      currency: string;
      note: string | undefined;
    }>();
  });

  test('engine.send checks a declared payload at compile time; a name takes any payload', () => {
    expectTypeOf(engine.send(orderPaid, { orderId: 'o-1', amount: 1 })).toEqualTypeOf<Promise<SendResult>>();
    // @ts-expect-error amount is a number
    void engine.send(orderPaid, { orderId: 'o-1', amount: '1' });
    // @ts-expect-error orderId is required
    void engine.send(orderPaid, { amount: 1 });
    void engine.send('anything.happened', { whatever: [1, 2] }, { id: 'e-1', ts: new Date() });
    // @ts-expect-error ts is a Date or epoch ms
    void engine.send('x', {}, { ts: '2026-01-01' });
  });

  test('sendMany entries are typed by their event; results, pages and notices are plain data', () => {
    void engine.sendMany([
      { event: orderPaid, payload: { orderId: 'o-1', amount: 1 } },
      { event: 'stock.low', payload: { sku: 's' }, options: { id: 's-1' } },
    ]);
    void engine.sendMany([
      // @ts-expect-error amount is required
      { event: orderPaid, payload: { orderId: 'o-1' } },
    ]);
    expectTypeOf<SendResult['status']>().toEqualTypeOf<'accepted' | 'duplicate'>();
    expectTypeOf<EventListPage['events']>().toEqualTypeOf<readonly StoredEvent[]>();
    expectTypeOf<StoredEvent['effects']['started']>().toEqualTypeOf<readonly string[]>();
    expectTypeOf<EventNotice['type']>().toEqualTypeOf<
      | 'event.received'
      | 'event.cancelled'
      | 'event.duplicate'
      | 'event.started'
      | 'event.trigger_failed'
      | 'event.resumed'
    >();
  });
});
