import { describe, expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  event,
  reactor,
  type EventWaitTimeoutError,
  type RunResult,
  type StepsOf,
  type ReactorError,
} from '../../src/index.js';
import '../../src/testing/vitest.js';

const paymentSettled = event('payment.settled', {
  orderId: z.string(),
  amount: z.number(),
  currency: z.string().default('EUR'),
});

describe('.waitForEvent', () => {
  test("the step's result is the event's payload, typed by its declaration (defaults applied)", () => {
    const r = reactor('w')
      .input({ orderId: z.string() })
      .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'] })
      .step('ship', {
        args: ($) => ({ amount: $.result('payment', 'amount') }),
        run: ({ amount }) => {
          expectTypeOf(amount).toEqualTypeOf<number>();
          return amount;
        },
      })
      .build();
    expectTypeOf<StepsOf<typeof r>['payment']>().toEqualTypeOf<{ orderId: string; amount: number; currency: string }>();
  });

  test('matchOn names fields of both the payload and the step arguments; anything else does not compile', () => {
    reactor('w')
      .input({ orderId: z.string(), customer: z.string() })
      .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'] });
    reactor('w')
      .input({ orderId: z.string(), customer: z.string() })
      // @ts-expect-error -- `customer` is an argument, not a payload field
      .waitForEvent('payment', { event: paymentSettled, matchOn: ['customer'] });
    const notAnArgument = reactor('w')
      .input({ customer: z.string() })
      .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'] });
    expectTypeOf(notAnArgument).toEqualTypeOf<{
      readonly '~error': 'matchOn names fields that are not step arguments: orderId';
    }>();
    // @ts-expect-error -- `orderId` is a payload field, not an argument: nothing can follow
    notAnArgument.build();
    reactor('w')
      .input({ id: z.string() })
      .waitForEvent('payment', {
        event: paymentSettled,
        args: ($) => ({ orderId: $.input('id') }),
        matchOn: ['orderId'],
      });
  });

  test('match receives the typed payload and the step arguments', () => {
    reactor('w')
      .input({ orderId: z.string(), min: z.number() })
      .waitForEvent('payment', {
        event: paymentSettled,
        match: (e, args) => {
          expectTypeOf(e).toEqualTypeOf<{ orderId: string; amount: number; currency: string }>();
          expectTypeOf(args).toEqualTypeOf<{ orderId: string; min: number }>();
          return e.amount >= args.min;
        },
      });
  });

  test("onTimeout's value joins the step's result type; 'fail' leaves it the payload", () => {
    const valued = reactor('w')
      .input({ orderId: z.string() })
      .waitForEvent('payment', {
        event: paymentSettled,
        timeout: '1d',
        onTimeout: ({ orderId }) => ({ orderId, timedOut: true as const }),
      })
      .build();
    expectTypeOf<StepsOf<typeof valued>['payment']>().toEqualTypeOf<
      { orderId: string; amount: number; currency: string } | { orderId: string; timedOut: true }
    >();
    const failing = reactor('w')
      .input({ orderId: z.string() })
      .waitForEvent('payment', { event: paymentSettled, timeout: '1d', onTimeout: 'fail' })
      .build();
    expectTypeOf<StepsOf<typeof failing>['payment']>().toEqualTypeOf<{
      orderId: string;
      amount: number;
      currency: string;
    }>();
  });

  test('the event must be a declaration; the timeout error is a ReactorError with a stable code', () => {
    reactor('w')
      .input({ orderId: z.string() })
      // @ts-expect-error -- a name is not a declaration: the payload type would be unknown
      .waitForEvent('payment', { event: 'payment.settled' });
    expectTypeOf<EventWaitTimeoutError>().toMatchTypeOf<ReactorError<'event_wait_timed_out'>>();
    expectTypeOf<EventWaitTimeoutError['code']>().toEqualTypeOf<'event_wait_timed_out'>();
  });
});

describe('the test kit', () => {
  test('toBeWaitingForEvent takes an optional event name', () => {
    const result = {} as RunResult;
    expectTypeOf(expect(result).toBeWaitingForEvent).parameters.toEqualTypeOf<[name?: string]>();
  });
});
