/**
 * P11's limit check: a map one element over its `maxElements` (100,001 elements, limit 100,000),
 * run inline on `createEngine({ store: new MemoryStore() })`. It must fail early and clearly:
 * with `map_too_large` (naming the map), before any element body runs, and in a small fraction
 * of the time the 100,000 elements take.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { createEngine, defineStep, MemoryStore, reactor } from '../../src/index.js';
import { P11_MAX_ELEMENTS } from './p11-shared.js';

/** What the over-limit map gave. */
export interface LimitCheck {
  readonly elements: number;
  readonly status: string;
  readonly code: string | undefined;
  readonly message: string;
  readonly failedStep: string | undefined;
  /** Element bodies that ran (should be 0). */
  readonly elementsRun: number;
  readonly ms: number;
  /** Failed with `map_too_large` naming the map, no element ran. */
  readonly clear: boolean;
}

/** Runs the over-limit map once. */
export async function overLimitMap(): Promise<LimitCheck> {
  let elementsRun = 0;
  const count = defineStep({ input: { x: z.number().int() }, run: ({ x }) => (elementsRun++, x) });
  const definition = reactor('p11-over-limit')
    .input({ n: z.number().int() })
    .map('all', {
      source: ($) => $.input('n').transform((n) => Array.from({ length: n }, (_, i) => i)),
      each: count,
      args: (x) => ({ x }),
      maxElements: P11_MAX_ELEMENTS,
    })
    .build();
  const elements = P11_MAX_ELEMENTS + 1;
  const engine = createEngine({ store: new MemoryStore() });
  const start = performance.now();
  const result = await engine.run(definition, { n: elements });
  const ms = performance.now() - start;
  const error = result.status === 'failed' ? result.error : undefined;
  const code = (error as { code?: unknown } | undefined)?.code;
  return {
    elements,
    status: result.status,
    code: typeof code === 'string' ? code : undefined,
    message: error?.message ?? '',
    failedStep: result.status === 'failed' ? result.failedStep : undefined,
    elementsRun,
    ms,
    clear: code === 'map_too_large' && elementsRun === 0 && (error?.message.includes('all') ?? false),
  };
}
