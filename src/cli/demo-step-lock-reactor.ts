/**
 * The step-lock demo's reactor: audit → charge (locked on the account, at step level) →
 * notify. Only `charge` serializes per account; audit and notify of every execution overlap.
 * `charge`'s undo (the refund) re-takes the account's lock when a later step fails.
 *
 * Also what the demo's worker processes load (`ts-reactor worker --module <this file>`): it
 * exports the reactor and a `reactors` array, and builds nothing at import time but the
 * definition.
 *
 * @module
 */
import type { StepContext } from '../dsl/context.js';
import { reactor } from '../dsl/reactor.js';
import { NonRetryableError } from '../errors.js';
import { WORKER_NAME_ENV } from './demo-background-reactor.js';
import { positiveInt, text, withDefault } from './demo-schema.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => (ms <= 0 ? resolve() : setTimeout(resolve, ms)));

/** What each step body reports: where and when it ran. */
export interface Span {
  readonly worker: string;
  readonly startedAt: number;
  readonly finishedAt: number;
}

async function work(ms: number): Promise<Span> {
  const startedAt = Date.now();
  await sleep(ms);
  return { worker: process.env[WORKER_NAME_ENV] ?? `pid ${process.pid}`, startedAt, finishedAt: Date.now() };
}

/** `account:<account>`: the key `charge` locks. */
export const accountKey = (account: string): string => `account:${account}`;

/** Whether the refund ran holding the account's lock (read from the hook's context). */
const refundHeld = (ctx: StepContext, account: string): boolean => ctx.heldKeys.has(`lock:${accountKey(account)}`);

/** audit → charge (step-level lock on the account) → notify (fails on request, to show the refund). */
export const stepLockPayment = reactor('demo-step-lock')
  .input({
    paymentId: text(),
    account: text(),
    amountCents: positiveInt(),
    workMs: withDefault(positiveInt(), 200),
    failAt: withDefault(text(), 'none'),
  })
  .step('audit', { args: ($) => ({ ms: $.input('workMs') }), run: ({ ms }) => work(ms) })
  .step('charge', {
    args: ($) => ({ account: $.input('account'), amountCents: $.input('amountCents'), ms: $.input('workMs') }),
    waitFor: ['audit'],
    lock: { key: ({ account }) => accountKey(account), ttl: '10s', wait: '30s' },
    run: ({ ms }) => work(ms),
    undo: (_charged, { account }, ctx) => {
      if (!refundHeld(ctx, account)) throw new Error(`refund ran without holding ${accountKey(account)}`);
    },
  })
  .step('notify', {
    args: ($) => ({ ms: $.input('workMs'), failAt: $.input('failAt') }),
    waitFor: ['charge'],
    run: async ({ ms, failAt }) => {
      if (failAt === 'notify') throw new NonRetryableError('the mail service refused the receipt');
      return work(ms);
    },
  })
  .build();

/** Every reactor of this module (what `ts-reactor worker --module` collects). */
export const reactors = [stepLockPayment];
