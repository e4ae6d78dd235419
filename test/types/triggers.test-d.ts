/**
 * Types of `.on(event, { input, match?, idempotencyKey? })`: the payload typed by the event's
 * declaration (unknown for a bare name), `input` checked against the reactor's run input, the
 * results and notices of a start by event, and the test kit's `send` and matcher.
 */
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  event,
  reactor,
  type EventNotice,
  type EventTriggerError,
  type SendResult,
  type TriggerEvent,
} from '../../src/index.js';
import { createTestEngine, type TestSendResult } from '../../src/testing/index.js';
import type { RunResult } from '../../src/index.js';
import type { ReactorMatchers } from '../../src/testing/vitest.js';

const orderPaid = event('order.paid', { orderId: z.string(), amount: z.number(), currency: z.string().default('EUR') });
const base = () => reactor('fulfil').input({ orderId: z.string(), cents: z.number(), note: z.string().optional() });

describe('.on', () => {
  test('with a declaration the payload is the stored payload of its schema; the second argument is the event', () => {
    base().on(orderPaid, {
      input: (e, meta) => {
        expectTypeOf(e).toEqualTypeOf<{ orderId: string; amount: number; currency: string }>();
        expectTypeOf(meta).toEqualTypeOf<TriggerEvent>();
        return { orderId: e.orderId, cents: e.amount * 100 };
      },
      match: (e) => {
        expectTypeOf(e.currency).toEqualTypeOf<string>();
        return e.amount > 0;
      },
      idempotencyKey: (e) => `order:${e.orderId}`,
    });
  });

  test('with a bare name the payload is unknown', () => {
    base().on('order.refunded', {
      input: (e) => {
        expectTypeOf(e).toEqualTypeOf<unknown>();
        return { orderId: String((e as { orderId: string }).orderId), cents: 0 };
      },
    });
  });

  test('input must return what the reactor accepts: a missing or mistyped field, or a wrong match, does not compile', () => {
    // @ts-expect-error cents is missing
    base().on(orderPaid, { input: (e) => ({ orderId: e.orderId }) });
    // @ts-expect-error cents must be a number
    base().on(orderPaid, { input: (e) => ({ orderId: e.orderId, cents: e.currency }) });
    // @ts-expect-error the payload has no field "sku"
    base().on(orderPaid, { input: (e) => ({ orderId: e.sku, cents: 1 }) });
    // @ts-expect-error match returns a boolean
    base().on(orderPaid, { input: (e) => ({ orderId: e.orderId, cents: 1 }), match: () => 'yes' });
    // @ts-expect-error idempotencyKey returns a string
    base().on(orderPaid, { input: (e) => ({ orderId: e.orderId, cents: 1 }), idempotencyKey: () => 42 });
    // @ts-expect-error input is required
    base().on(orderPaid, { match: () => true });
  });

  test('several .on per reactor, and the chain goes on with the same types', () => {
    const built = base()
      .on(orderPaid, { input: (e) => ({ orderId: e.orderId, cents: e.amount }) })
      .on('order.replayed', { input: () => ({ orderId: 'x', cents: 0 }) })
      .step('ship', { args: ($) => ({ orderId: $.input('orderId') }), run: ({ orderId }) => orderId })
      .returns('ship');
    expectTypeOf(built.name).toEqualTypeOf<'fulfil'>();
  });
});

describe('results and notices', () => {
  test('a send result names the started executions and the failed triggers', () => {
    expectTypeOf<SendResult['started']>().toEqualTypeOf<readonly string[]>();
    expectTypeOf<SendResult['triggerFailures']>().toEqualTypeOf<readonly EventTriggerError[]>();
    expectTypeOf<EventTriggerError['details']['stage']>().toEqualTypeOf<
      'match' | 'input' | 'idempotencyKey' | 'start' | 'effect'
    >();
  });

  test('event.started and event.trigger_failed notices', () => {
    const notice = {} as EventNotice;
    if (notice.type === 'event.started') {
      expectTypeOf(notice.executionId).toEqualTypeOf<string>();
      expectTypeOf(notice.replay).toEqualTypeOf<boolean>();
      expectTypeOf(notice.reactor).toEqualTypeOf<string>();
    }
    if (notice.type === 'event.trigger_failed') expectTypeOf(notice.error.code).toEqualTypeOf<string | undefined>();
  });

  test("the test engine's send is typed by the declaration and resolves with the started runs", async () => {
    const t = createTestEngine();
    const sent = await t.send(orderPaid, { orderId: 'o-1', amount: 1 });
    expectTypeOf(sent).toEqualTypeOf<TestSendResult>();
    expectTypeOf(sent.runs).toEqualTypeOf<readonly RunResult[]>();
    // @ts-expect-error amount must be a number
    await t.send(orderPaid, { orderId: 'o-1', amount: 'one' });
    await t.send('anything', { free: true });
    expectTypeOf<ReactorMatchers['toBeStartedByEvent']>().parameters.toEqualTypeOf<
      [expected?: { readonly name?: string; readonly id?: string }]
    >();
  });
});
