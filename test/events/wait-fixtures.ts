/**
 * Shared fixtures of the `.waitForEvent` tests: the `payment.settled` event, a checkout reactor
 * that waits for the settlement of its own order and finishes with its amount, and helpers to
 * wait for executions to reach a status (polling the store; never a timed assert).
 */
import { z } from 'zod';
import { event, reactor, type Engine } from '../../src/index.js';

export const paymentSettled = event('payment.settled', { orderId: z.string(), amount: z.number() });

/** payment (waits for `payment.settled` of its `orderId`) → done (`<orderId>:<amount>`). */
export const checkout = reactor('wfe-checkout')
  .input({ orderId: z.string() })
  .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'] })
  .step('done', {
    args: ($) => ({ orderId: $.input('orderId'), amount: $.result('payment', 'amount') }),
    run: ({ orderId, amount }) => `${orderId}:${amount}`,
  })
  .returns('done');

/** Waits for an event of `orderId` whose amount is at least `min` (a `match` predicate), failing at its timeout. */
export const bigPayment = reactor('wfe-big-payment')
  .input({ orderId: z.string(), min: z.number() })
  .waitForEvent('payment', {
    event: paymentSettled,
    matchOn: ['orderId'],
    match: (e, args) => e.amount >= args.min,
    timeout: '1h',
  })
  .returns('payment');

/** Waits up to `timeout` for its order's settlement; on timeout the step's result is `{ orderId, amount: 0 }`. */
export function withDefault(timeoutMs: number) {
  return reactor('wfe-default')
    .input({ orderId: z.string() })
    .waitForEvent('payment', {
      event: paymentSettled,
      matchOn: ['orderId'],
      timeout: timeoutMs,
      onTimeout: ({ orderId }) => ({ orderId, amount: 0 }),
    })
    .returns('payment');
}

/** Waits up to `timeout` for its order's settlement, after a step with an undo; on timeout the run rolls back and fails. */
export function failing(timeoutMs: number, log: string[]) {
  return reactor('wfe-failing')
    .input({ orderId: z.string() })
    .step('reserve', { run: ({ orderId }) => `R-${orderId}`, undo: (r) => void log.push(`undo ${r}`) })
    .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'], waitFor: ['reserve'], timeout: timeoutMs })
    .returns('payment');
}

export const parcelReady = event('parcel.ready', { orderId: z.string(), parcel: z.string() });

/** Two waits side by side (payment and parcel of its order): it completes once both events came, whichever first. */
export const both = reactor('wfe-both')
  .input({ orderId: z.string() })
  .waitForEvent('payment', { event: paymentSettled, matchOn: ['orderId'] })
  .waitForEvent('parcel', { event: parcelReady, matchOn: ['orderId'] })
  .step('done', {
    args: ($) => ({ amount: $.result('payment', 'amount'), parcel: $.result('parcel', 'parcel') }),
    run: ({ amount, parcel }) => `${parcel}:${amount}`,
  })
  .returns('done');

/** Resolves once every execution of `ids` has `status` (polling; past the bound, within a test's 120 s, throws naming one that did not and its status). */
export async function allReach(
  engine: Engine,
  ids: readonly string[],
  status: string,
  boundMs = 100_000,
): Promise<void> {
  const started = Date.now();
  let left = [...ids];
  while (left.length > 0) {
    const next: string[] = [];
    for (let i = 0; i < left.length; i += 100) {
      const batch = left.slice(i, i + 100);
      const results = await Promise.all(batch.map((id) => engine.result(id)));
      results.forEach((r, j) => {
        if (r?.status !== status) next.push(batch[j]!);
      });
    }
    left = next;
    if (left.length === 0) return;
    if (Date.now() - started > boundMs) {
      const stuck = await engine.result(left[0]!);
      const waits = stuck?.status === 'paused' ? ` waiting at ${stuck.interrupts.map((w) => w.step).join(', ')}` : '';
      throw new Error(
        `${left.length} of ${ids.length} executions did not reach ${status} (e.g. ${left[0]}: ${stuck?.status ?? 'no record'}${waits})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
