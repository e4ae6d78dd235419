/**
 * The reference's scenario 21 as a fan-out map: `a → items (map) → b`. Every side effect goes
 * through hooks, so the memory tests log in memory and the multi-process test logs in Redis
 * (worker processes and the test process build the same reactor).
 */
import { z } from 'zod';
import { defineStep, NonRetryableError, reactor, type RetryOptions } from '../../src/index.js';

/** Side effects of the scenario's steps. */
export interface FanOutHooks {
  /** The element's body (before it fails when `fail`). */
  element(index: number, fail: boolean): void | Promise<void>;
  compensate(index: number): void | Promise<void>;
  /** Undo of a completed element; a throw is a rollback failure. */
  undo(index: number): void | Promise<void>;
  a(): void | Promise<void>;
  undoA(): void | Promise<void>;
  b(): void | Promise<void>;
}

/** Options of {@link buildFanOut}. */
export interface FanOutShape {
  readonly name?: string;
  readonly batchSize?: number;
  readonly atomic?: boolean;
  /** Retry policy of the element step (default: one attempt). */
  readonly retry?: RetryOptions;
}

/** `a → items (one element per boolean of `fails`: true fails it) → b (fails when `failB`)`. */
export function buildFanOut(hooks: FanOutHooks, shape: FanOutShape = {}) {
  const element = defineStep({
    input: { index: z.number().int(), fail: z.boolean() },
    run: async ({ index, fail }) => {
      await hooks.element(index, fail);
      if (fail) throw new NonRetryableError(`element ${index} failed`);
      return index * 10;
    },
    compensate: (_error, { index }) => hooks.compensate(index),
    undo: (_value, { index }) => hooks.undo(index),
    ...(shape.retry === undefined ? {} : { retry: shape.retry }),
  });
  return reactor(shape.name ?? 'fan-21')
    .input({ fails: z.array(z.boolean()), failB: z.boolean().default(false) })
    .step('a', { run: async () => (await hooks.a(), 'a'), undo: () => hooks.undoA() })
    .map('items', {
      source: ($) => $.input('fails'),
      each: element,
      args: (fail, index) => ({ index, fail }),
      atomic: shape.atomic ?? true,
      fanOut: { batchSize: shape.batchSize ?? 4 },
      waitFor: ['a'],
    })
    .step('b', {
      args: ($) => ({ map: $.result('items'), failB: $.input('failB') }),
      run: async ({ map, failB }) => {
        await hooks.b();
        if (failB) throw new NonRetryableError('b failed');
        return { successes: map.successes, failures: map.failures.map((f) => f.index) };
      },
    })
    .returns('b');
}

/** Hooks that append to `log` (`run 3`, `compensate 2`, `undo 1`, `run a`, `undo a`, `run b`). */
export function loggingHooks(log: string[], overrides: Partial<FanOutHooks> = {}): FanOutHooks {
  return {
    element: (index) => void log.push(`run ${index}`),
    compensate: (index) => void log.push(`compensate ${index}`),
    undo: (index) => void log.push(`undo ${index}`),
    a: () => void log.push('run a'),
    undoA: () => void log.push('undo a'),
    b: () => void log.push('run b'),
    ...overrides,
  };
}

/** `size` booleans, true at `failAt`. */
export const failsAt = (size: number, failAt?: number): boolean[] =>
  Array.from({ length: size }, (_, i) => i === failAt);
