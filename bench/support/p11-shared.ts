/**
 * What P11 and its child processes share: the reactors (a linear chain of `n` steps, a map over
 * the numbers `0 … n − 1`, in process or fanned out), the child configs and the result lines.
 *
 * The map's source is built from the input `n` (a transform of `$.input('n')`), so the input
 * stays a few bytes whatever the size: what grows with the map is the engine's bookkeeping and
 * the map's result, never the input. A step after the map reduces it to a count, the reactor's
 * value.
 *
 * @module
 */
import { z } from 'zod';
import { defineStep, reactor, type AnyReactorDefinition } from '../../src/index.js';

/** The most elements P11's maps accept (their `maxElements`): its largest case. */
export const P11_MAX_ELEMENTS = 100_000;
/** Elements in flight of the fan-out maps. */
export const P11_BATCH = 100;
/** Name of the fan-out reactor (registered by the Redis workers). */
export const P11_FANOUT_REACTOR = 'p11-fanout';

type Builder = {
  step(name: string, options: object): Builder;
  returns(step: string): AnyReactorDefinition;
};

/** A chain of `n` trivial steps, step i reading the result of step i − 1; the value is the last one's (n − 1). */
export function chainReactor(n: number): AnyReactorDefinition {
  // Built dynamically (the types of a chain of n steps do not matter here).
  let builder = reactor(`p11-chain-${n}`).step('s0', { run: () => 0 }) as unknown as Builder;
  for (let i = 1; i < n; i++) {
    builder = builder.step(`s${i}`, {
      args: ($: { result(step: string): unknown }) => ({ p: $.result(`s${i - 1}`) }),
      run: ({ p }: { p: number }) => p + 1,
    });
  }
  return builder.returns(`s${n - 1}`);
}

const double = defineStep({ input: { x: z.number().int() }, run: ({ x }) => x * 2 });

/** A map over `0 … n − 1` (input `{ n }`) whose elements double their number; the value is the count of successes. */
export function mapReactor(name: string, fanOut: boolean): AnyReactorDefinition {
  return reactor(name)
    .input({ n: z.number().int().min(0) })
    .map('all', {
      source: ($) => $.input('n').transform((n) => Array.from({ length: n }, (_, i) => i)),
      each: double,
      args: (x) => ({ x }),
      maxElements: P11_MAX_ELEMENTS,
      ...(fanOut ? { fanOut: { batchSize: P11_BATCH } } : {}),
    })
    .step('count', { args: ($) => ({ all: $.result('all') }), run: ({ all }) => all.successes.length })
    .returns('count');
}

/** The in-process families P11 measures in a child process each. */
export type P11Family = 'linear' | 'inline_map' | 'embedded_fanout';

/** The JSON config of a P11 measuring child (`p11-child.ts`). */
export interface P11ChildConfig {
  readonly family: P11Family;
  /** The small and the large size (steps or elements). */
  readonly small: number;
  readonly large: number;
  /** Runs per timed sample, small and large (so both samples do about the same number of units). */
  readonly runsSmall: number;
  readonly runsLarge: number;
  /** Untimed rounds first, then timed ones; a round times one sample of each size. */
  readonly warmup: number;
  readonly rounds: number;
  /** The longest one run may take before it counts as stalled. */
  readonly runTimeoutMs: number;
}

/** The JSON config of a P11 Redis worker child (`p11-worker.ts`). */
export interface P11WorkerConfig {
  readonly url: string;
  readonly prefix: string;
  readonly concurrency: number;
}

/** One timed sample a child reports: `{"sample":…}`. */
export interface P11Sample {
  readonly size: number;
  readonly round: number;
  readonly runs: number;
  readonly wallMs: number;
  /** CPU time of the measuring process (omitted for Redis, where the work is in other processes). */
  readonly cpuMs?: number;
}

/** A size that could not be measured (it failed, threw or stalled): `{"failure":…}`. */
export interface P11Failure {
  readonly size: number;
  readonly kind: 'error' | 'stalled';
  readonly message: string;
  /** ms from the run's start to its failure. */
  readonly afterMs: number;
}

/** What one family of cases gave: its timed samples and the sizes that could not be measured. */
export interface P11Outcome {
  readonly samples: readonly P11Sample[];
  readonly failures: readonly P11Failure[];
}
