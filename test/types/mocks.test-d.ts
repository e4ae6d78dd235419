import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { defineStep, failure, reactor } from '../../src/index.js';
import { createTestEngine, mockSteps, testReactor, type StepMocks } from '../../src/testing/index.js';

const payment = reactor('payment')
  .step('charge', { run: () => ({ id: 'c-1', amountCents: 100 }) })
  .returns('charge');
const checkout = reactor('checkout')
  .input({ orderId: z.string() })
  .step('reserve', { run: () => ({ reservationId: 'r-1' }) })
  .compose('payment', payment, { args: () => ({}) })
  .step('notify', { args: ($) => ({ order: $.input('orderId') }), run: ({ order }) => order.length })
  .build();

describe('mockSteps is typed by the reactor', () => {
  test('mocks name the reactor’s steps, with values of their result types', () => {
    expectTypeOf<keyof StepMocks<typeof checkout>>().toMatchTypeOf<string>();
    mockSteps(checkout, { reserve: { value: { reservationId: 'r-2' } }, notify: () => 3 });
    mockSteps(checkout, { notify: { throws: new Error('down') }, reserve: () => failure('no stock') });
    // A composed reactor's steps are named by path and take an untyped mock.
    mockSteps(checkout, { 'payment.charge': { value: { anything: true } } });
    const t = createTestEngine();
    void t.run(checkout, { orderId: 'o-1' }, { mocks: { reserve: async () => ({ reservationId: 'r-3' }) } });
    void testReactor(checkout, { orderId: 'o-1' }, { mocks: { notify: { value: 1 } } });
  });

  test('a misspelt step or a wrongly shaped value does not compile', () => {
    // prettier-ignore
    // @ts-expect-error "reserv" is not a step of checkout
    mockSteps(checkout, { reserv: { value: { reservationId: 'r-2' } } });
    // prettier-ignore
    // @ts-expect-error reserve returns { reservationId: string }, not a number
    mockSteps(checkout, { reserve: { value: 42 } });
    // prettier-ignore
    // @ts-expect-error notify returns a number, not a string
    mockSteps(checkout, { notify: () => 'three' });
    const t = createTestEngine();
    // prettier-ignore
    // @ts-expect-error a typo in a test engine run's mocks
    void t.run(checkout, { orderId: 'o-1' }, { mocks: { notfy: { value: 1 } } });
    const step = defineStep({ input: { n: z.number() }, run: ({ n }) => n });
    void step;
  });
});

describe('a function mock’s args are typed by its step', () => {
  const order = reactor('order-args')
    .input({ orderId: z.string(), amountCents: z.number() })
    .step('reserve', { args: ($) => ({ id: $.input('orderId') }), run: ({ id }) => ({ reservationId: id }) })
    .step('audit', { run: (input) => input.orderId })
    .step('charge', defineStep({ input: { cents: z.number() }, run: ({ cents }) => ({ chargeId: String(cents) }) }), {
      args: ($) => ({ cents: $.input('amountCents') }),
    })
    .asyncStep('ship', { args: ($) => ({ reservation: $.result('reserve', 'reservationId') }), run: () => 'shipped' })
    .build();

  test('each mock receives what its step’s body receives', () => {
    mockSteps(order, {
      reserve: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ id: string }>();
        return { reservationId: args.id };
      },
      // Without `args` a step receives the reactor's validated input.
      audit: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ orderId: string; amountCents: number }>();
        return args.orderId;
      },
      // A placed step definition receives its contract's output.
      charge: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ cents: number }>();
        return { chargeId: 'c' };
      },
      ship: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ reservation: string }>();
        return 'mocked';
      },
    });
    const t = createTestEngine();
    void t.run(
      order,
      { orderId: 'o-1', amountCents: 1 },
      { mocks: { reserve: ({ id }) => ({ reservationId: id.toUpperCase() }) } },
    );
    // A derived reactor keeps its steps' argument types.
    const derived = order.extend('order-args-2').build();
    mockSteps(derived, { reserve: ({ id }) => ({ reservationId: id }) });
  });

  test('a mock that reads an argument its step does not have does not compile', () => {
    // prettier-ignore
    // @ts-expect-error reserve receives { id }, not { orderId }
    mockSteps(order, { reserve: ({ orderId }) => ({ reservationId: orderId }) });
    // prettier-ignore
    // @ts-expect-error charge receives { cents: number }: a string parameter does not fit
    mockSteps(order, { charge: (args: { cents: string }) => ({ chargeId: args.cents }) });
  });
});
