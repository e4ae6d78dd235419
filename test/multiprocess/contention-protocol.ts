/**
 * What `contention-bound.test.ts` and its worker process (`contention-worker-process.ts`) share:
 * the config and the reactors (same names and key functions on both sides). Every hook counts
 * itself in Redis (`HINCRBY <prefix>:hooks <hook> 1`), so the test reads what ran in the worker.
 */
import { reactor } from '../../src/index.js';

/** The worker process's config (its one JSON argument). */
export interface ContentionWorkerConfig {
  readonly url: string;
  readonly prefix: string;
  readonly concurrency: number;
  readonly background: { readonly contentionCap: number; readonly parkFallbackMs: number };
}

/** The hash the hooks count themselves in. */
export const hooksKey = (prefix: string): string => `${prefix}:hooks`;

/** Counts one run of `hook` (e.g. `run:reserve`, `undo:reserve`, `compensate:charge`). */
export type Count = (hook: string) => Promise<void>;

/** The keys the reactors contend on; the test holds them with a live holder of its own. */
export const KEYS = { reactor: 'cb:acct:reactor', compose: 'cb:acct:compose', step: 'cb:acct:step' } as const;

/** The reactors both sides register: a reactor-level lock, the same inside a compose, a step-level lock. */
export function buildContentionReactors(count: Count) {
  const hooks = (name: string) => ({
    run: async () => (await count(`run:${name}`), name),
    undo: () => count(`undo:${name}`),
    compensate: () => count(`compensate:${name}`),
  });
  const reactorLock = reactor('cb-reactor-lock')
    .withLock({ key: () => KEYS.reactor })
    .step('work', hooks('work'))
    .background('all')
    .returns('work');
  const child = reactor('cb-child')
    .withLock({ key: () => KEYS.compose })
    .step('pay', hooks('pay'))
    .returns('pay');
  const composed = reactor('cb-compose')
    .step('reserve', hooks('reserve'))
    .compose('payment', child, { waitFor: ['reserve'] })
    .background('all')
    .returns('payment');
  const stepLock = reactor('cb-step-lock')
    .step('reserve', hooks('reserve'))
    .step('audit', { waitFor: ['reserve'], ...hooks('audit') })
    .step('charge', { waitFor: ['audit'], lock: { key: () => KEYS.step }, ...hooks('charge') })
    .background('all')
    .build();
  return { reactorLock, composed, stepLock };
}
