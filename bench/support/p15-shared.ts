/**
 * What P15 and its worker process share: the child config, the event, the waiting reactor, the
 * lines the child prints.
 *
 * @module
 */
import { z } from 'zod';
import { event, reactor } from '../../src/index.js';
import { now } from './children.js';

/** The event the executions wait for. */
export const paymentSettled = event('payment.settled', { orderId: z.string(), amount: z.number() });

/** The JSON config of a P15 child. */
export interface P15ChildConfig {
  readonly url: string;
  /** Key prefix of the ts-reactor runtime. */
  readonly prefix: string;
  /** Worker concurrency. */
  readonly concurrency: number;
}

/**
 * A line a P15 child prints: `waiting` when an execution has reached its wait (its order id),
 * `resumed` when the step after the wait starts (`t`: the child's clock, see `children.ts`).
 */
export type P15Line =
  | { readonly p15: 'waiting'; readonly orderId: string }
  | { readonly p15: 'resumed'; readonly orderId: string; readonly t: number };

/** Prints `line` on stdout. */
export function print(line: P15Line | Readonly<Record<string, unknown>>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/**
 * The subject: an execution per order waits for `payment.settled` with its order id, then runs
 * one step, which prints when it starts (the latency's end).
 */
export function awaitingPayment() {
  return reactor('p15-awaiting-payment')
    .input({ orderId: z.string() })
    .waitForEvent('payment', {
      event: paymentSettled,
      args: ($) => ({ orderId: $.input('orderId') }),
      matchOn: ['orderId'],
    })
    .step('after', {
      waitFor: ['payment'],
      args: ($) => ({ orderId: $.input('orderId') }),
      run: ({ orderId }) => (print({ p15: 'resumed', orderId, t: now() }), orderId),
    })
    .build();
}
