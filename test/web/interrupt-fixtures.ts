/**
 * Reactors for the dashboard's interrupt and async-unit tests: an approval that pauses (two
 * invalid payloads allowed, a correlation id, a timeout), an order whose async unit waits for the
 * test while a reader step parks on it, a step-level semaphore, and a checkout that waits for
 * its payment event.
 */
import { z } from 'zod';
import { event, reactor } from '../../src/index.js';

/** Pauses at `approve` until resumed with `{ approved, approver }`; then `pay` reads it. */
export function approvalReactor() {
  return reactor('approval')
    .input({ orderId: z.string() })
    .step('hold', { args: ($) => ({ orderId: $.input('orderId') }), run: ({ orderId }) => `hold-${orderId}` })
    .interrupt('approve', {
      waitFor: ['hold'],
      args: ($) => ({ orderId: $.input('orderId') }),
      payload: { approved: z.boolean(), approver: z.string() },
      correlationId: ({ orderId }) => `approval:${orderId}`,
      timeout: '2d',
      maxAttempts: 2,
    })
    .step('pay', {
      args: ($) => ({ approved: $.result('approve', 'approved'), approver: $.result('approve', 'approver') }),
      run: ({ approved, approver }) => (approved ? `paid, approved by ${approver}` : 'refused'),
    })
    .returns('pay');
}

/** Dispatches `charge` as an async unit whose body waits for `held`; `receipt` reads it (and parks on it in a worker). */
export function asyncOrderReactor(held: Promise<void>) {
  return reactor('async-order')
    .input({ orderId: z.string() })
    .asyncStep('charge', {
      args: ($) => ({ orderId: $.input('orderId') }),
      run: async ({ orderId }) => (await held, `ch-${orderId}`),
    })
    .step('receipt', {
      args: ($) => ({ chargeId: $.result('charge') }),
      run: ({ chargeId }) => `receipt for ${chargeId}`,
    })
    .returns('receipt');
}

/** One slot of `exports`, taken by the step `export` (not the reactor); the body waits for `held`. */
export function stepSemaphoreReactor(held: Promise<void>) {
  return reactor('exporter')
    .step('prepare', { run: () => 'ready' })
    .step('export', {
      waitFor: ['prepare'],
      semaphore: { key: () => 'exports', limit: 1 },
      run: async () => (await held, 'exported'),
    })
    .build();
}

/** The event {@link paymentWaitReactor} waits for. */
export const paymentSettled = event('payment.settled', { orderId: z.string(), amount: z.number() });

/**
 * Waits at `payment` for the `payment.settled` event of its order, then returns its amount. No
 * timeout: its job would stay delayed in the queue and keep the test's drain waiting.
 */
export function paymentWaitReactor() {
  return reactor('payment-wait')
    .input({ orderId: z.string() })
    .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'] })
    .step('done', { args: ($) => ({ amount: $.result('payment', 'amount') }), run: ({ amount }) => amount })
    .returns('done');
}
