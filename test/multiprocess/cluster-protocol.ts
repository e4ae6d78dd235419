/**
 * What `cluster.test.ts` and its worker processes (`cluster-worker-process.ts`) share: the
 * config, the reactors (same names and keys on both sides) and the guard keys the step bodies
 * write to the cluster (one single-key command each, so each works on any slot).
 */
import { z } from 'zod';
import { defineStep, reactor } from '../../src/index.js';

export interface ClusterWorkerConfig {
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  readonly prefix: string;
  readonly concurrency: number;
}

/** How many holders each guarded section allows at once. */
export const SECTION_LIMIT = { lock: 1, sem: 2 } as const;

/** A guarded section: counts who is inside `key` of `kind` and notes it when more than its limit are. */
export type Section = (kind: keyof typeof SECTION_LIMIT, key: string) => Promise<void>;

/** Guard keys under a prefix: who is inside a section, and how many times a section was overfull. */
export const guardKeys = (prefix: string) => ({
  inside: (kind: string, key: string) => `${prefix}-guard:{${kind}:${key}}`,
  overlaps: `${prefix}-guard:overlaps`,
  rateStarts: `${prefix}-guard:rate-starts`,
  elements: `${prefix}-guard:elements`,
});

/** Limit of the rate-limited step: starts per second. */
export const RATE_LIMIT = 10;

/** The reactors every process registers. */
export function clusterReactors(
  section: Section,
  onRateStart: () => Promise<void>,
  onElement: (i: number) => Promise<void>,
) {
  // A step lock over the input key: the acceptance workload (1,000 executions over 50 keys).
  const locked = reactor('cl-locked')
    .input({ key: z.string() })
    .step('prepare', { run: () => 'ready' })
    .step('work', {
      waitFor: ['prepare'],
      lock: { key: ({ key }) => `cl:${key}`, ttl: '10s' },
      run: ({ key }) => section('lock', key),
    })
    .step('after', { waitFor: ['work'], run: () => 'done' })
    .build();
  // A semaphore of 2 and a rate limit of RATE_LIMIT per second, one after the other.
  const limited = reactor('cl-limited')
    .input({ n: z.number() })
    .step('sem', { semaphore: { key: () => 'cl-sem', limit: 2 }, run: () => section('sem', 'cl-sem') })
    .step('rate', {
      waitFor: ['sem'],
      rateLimit: { key: () => 'cl-rate', limit: RATE_LIMIT, per: '1s' },
      run: () => onRateStart(),
    })
    .build();
  // A fan-out map: one job per element across the workers.
  const element = defineStep({
    input: { index: z.number().int() },
    run: async ({ index }) => (await onElement(index), index),
  });
  const fanned = reactor('cl-fanned')
    .input({ items: z.array(z.number().int()) })
    .map('items', {
      source: ($) => $.input('items'),
      each: element,
      args: (index) => ({ index }),
      fanOut: { batchSize: 8 },
    })
    .returns('items');
  return { locked, limited, fanned };
}
