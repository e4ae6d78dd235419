/**
 * The background demo's reactor: posting a transfer holds the account's lock for the whole run
 * and takes about 300 ms, so transfers on one account queue up behind each other.
 *
 * This module is also what the demo's worker processes load (`ts-reactor worker --module
 * <this file>`): it exports the reactor and a `reactors` array, and builds nothing at import
 * time but the definition.
 *
 * @module
 */
import { reactor } from '../dsl/reactor.js';
import { positiveInt, text } from './demo-schema.js';

/** The environment variable a demo worker process reads its name from. */
export const WORKER_NAME_ENV = 'TS_REACTOR_DEMO_WORKER';
/** How long posting one transfer takes, ms. */
export const POST_MS = 300;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The worker this step runs in: the name the demo gave the process, else its pid. */
function workerName(): string {
  return process.env[WORKER_NAME_ENV] ?? `pid ${process.pid}`;
}

/** One transfer at a time per account (a reactor-level lock); each takes ~{@link POST_MS} ms. */
export const transfer = reactor('demo-transfer')
  .input({ transferId: text(), account: text(), amountCents: positiveInt() })
  .withLock({ key: ({ account }) => `account:${account}`, ttl: '10s', wait: '30s' })
  .step('post-transfer', {
    run: async ({ transferId, account, amountCents }) => {
      const startedAt = Date.now();
      await sleep(POST_MS);
      return { transferId, account, amountCents, worker: workerName(), startedAt, finishedAt: Date.now() };
    },
  })
  .returns('post-transfer');

/** Every reactor of this module (what `ts-reactor worker --module` collects). */
export const reactors = [transfer];
