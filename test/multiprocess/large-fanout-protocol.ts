/** What `large-fanout.test.ts` and its worker processes (`large-fanout-worker-process.ts`) share. */
import { z } from 'zod';
import { defineStep, reactor } from '../../src/index.js';

export interface LargeFanOutWorkerConfig {
  readonly url: string;
  /** Key prefix of the runtime (store, ledger, queue). */
  readonly prefix: string;
  readonly concurrency: number;
  readonly batchSize: number;
}

/** The reactor name both sides register. */
export const LARGE_FANOUT_REACTOR = 'large-fanout-mp';

/** The most elements a run of the reactor may have. */
export const LARGE_FANOUT_MAX = 100_000;

const double = defineStep({ input: { n: z.number().int() }, run: ({ n }) => n * 2 });

/**
 * `n → m: fan-out map of i => i * 2 over 0 .. n-1 → sum: { count, sum }` (returns `sum`, not the
 * map). The input is a count, not the items: 100,000 numbers would take 590 KB of the record.
 */
export function buildLargeFanOut(batchSize: number) {
  return reactor(LARGE_FANOUT_REACTOR)
    .input({ n: z.number().int().min(0).max(LARGE_FANOUT_MAX) })
    .map('m', {
      source: ($) => $.input('n').transform((n) => Array.from({ length: n }, (_, i) => i)),
      each: double,
      args: (i) => ({ n: i }),
      fanOut: { batchSize },
      maxElements: LARGE_FANOUT_MAX,
    })
    .step('sum', {
      args: ($) => ({ m: $.result('m') }),
      run: ({ m }) => ({ count: m.successes.length, sum: m.successes.reduce((a, b) => a + b, 0) }),
    })
    .returns('sum');
}
