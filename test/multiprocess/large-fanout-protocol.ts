/** What `large-fanout.test.ts` and its worker processes (`large-fanout-worker-process.ts`) share. */
import { z } from 'zod';
import { defineStep, reactor } from '../../src/index.js';

export interface LargeFanOutWorkerConfig {
  readonly url: string;
  /** Key prefix of the runtime (store, ledger, queue). */
  readonly prefix: string;
  readonly concurrency: number;
  readonly batchSize: number;
  /** The record limit: the collected map of 100,000 numbers is over the default 512 KiB. */
  readonly maxRecordBytes: number;
}

/** The reactor name both sides register. */
export const LARGE_FANOUT_REACTOR = 'large-fanout-mp';

/** The most elements a run of the reactor may have. */
export const LARGE_FANOUT_MAX = 100_000;

const double = defineStep({ input: { n: z.number().int() }, run: ({ n }) => n * 2 });

/** `xs → m: fan-out map of n => n * 2 → sum: { count, sum }` (returns `sum`, not the map). */
export function buildLargeFanOut(batchSize: number) {
  return reactor(LARGE_FANOUT_REACTOR)
    .input({ xs: z.array(z.number().int()) })
    .map('m', {
      source: ($) => $.input('xs'),
      each: double,
      args: (n) => ({ n }),
      fanOut: { batchSize },
      maxElements: LARGE_FANOUT_MAX,
    })
    .step('sum', {
      args: ($) => ({ m: $.result('m') }),
      run: ({ m }) => ({ count: m.successes.length, sum: m.successes.reduce((a, b) => a + b, 0) }),
    })
    .returns('sum');
}
