import { describe, expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  event,
  reactor,
  type CancelOnOptions,
  type CancelOnSpec,
  type MatchableField,
  type RunResult,
} from '../../src/index.js';
import '../../src/testing/vitest.js';

const orderCancelled = event('order.cancelled', { orderId: z.string(), reason: z.string(), count: z.number() });
const base = reactor('fulfil').input({ orderId: z.string(), amount: z.number(), count: z.string() });

describe('cancelOn', () => {
  test('match receives the declaration payload and the validated input', () => {
    base.cancelOn(orderCancelled, {
      matchOn: ['orderId'],
      match: (e, input) => {
        expectTypeOf(e).toEqualTypeOf<{ orderId: string; reason: string; count: number }>();
        expectTypeOf(input).toEqualTypeOf<{ orderId: string; amount: number; count: string }>();
        return e.reason !== 'test';
      },
    });
  });

  test('matchOn names only fields of both the payload and the input, of compatible types', () => {
    expectTypeOf<
      MatchableField<{ orderId: string; count: number }, { orderId: string; count: string }>
    >().toEqualTypeOf<'orderId'>();
    // @ts-expect-error -- "reason" is not a reactor input
    base.cancelOn(orderCancelled, { matchOn: ['reason'] });
    // @ts-expect-error -- "amount" is not a payload field
    base.cancelOn(orderCancelled, { matchOn: ['amount'] });
    // @ts-expect-error -- "count" is a number in the payload and a string in the input
    base.cancelOn(orderCancelled, { matchOn: ['count'] });
  });

  test('a bare event name: any input field, a payload of unknown fields', () => {
    base.cancelOn('order.voided', {
      matchOn: ['orderId', 'amount'],
      match: (e, input) => {
        expectTypeOf(e).toEqualTypeOf<Readonly<Record<string, unknown>>>();
        return e['orderId'] === input.orderId;
      },
    });
    // @ts-expect-error -- "sku" is not a reactor input
    base.cancelOn('order.voided', { matchOn: ['sku'] });
  });

  test('several declarations chain and keep the builder typed', () => {
    const built = base
      .cancelOn(orderCancelled, { matchOn: ['orderId'] })
      .cancelOn('order.voided')
      .step('ship', { run: (input) => input.orderId })
      .returns('ship');
    expectTypeOf(built.cancelOn).toEqualTypeOf<readonly CancelOnSpec[]>();
    // @ts-expect-error -- match must return a boolean
    base.cancelOn(orderCancelled, { match: () => 'yes' });
    expectTypeOf<CancelOnOptions<{ a: string }, { a: string }>['matchOn']>().toEqualTypeOf<
      readonly 'a'[] | undefined
    >();
  });
});

describe('the test kit', () => {
  test('toHaveBeenCancelledByEvent takes an optional event name and id', () => {
    const result = {} as RunResult;
    expectTypeOf(expect(result).toHaveBeenCancelledByEvent).parameters.toEqualTypeOf<
      [name?: string, eventId?: string]
    >();
  });
});
