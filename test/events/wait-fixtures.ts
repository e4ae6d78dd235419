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

/** Resolves once every execution of `ids` has `status` (polling, generous bound; throws past it). */
export async function allReach(
  engine: Engine,
  ids: readonly string[],
  status: string,
  boundMs = 180_000,
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
    if (Date.now() - started > boundMs)
      throw new Error(`${left.length} of ${ids.length} executions did not reach ${status} (e.g. ${left[0]})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
