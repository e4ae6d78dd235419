import { describe, expectTypeOf, test } from 'vitest';
import type { EngineOptions, ReactorEvent } from '../../src/index.js';

type Parked = Extract<ReactorEvent, { type: 'run.parked' }>;

describe('contention types', () => {
  test('a park event carries its attempt and, for re-parks behind the same holder, their count', () => {
    expectTypeOf<Parked['attempt']>().toEqualTypeOf<number>();
    expectTypeOf<Parked['repeats']>().toEqualTypeOf<number | undefined>();
  });

  test('contentionCap takes any number, Infinity included', () => {
    const options = { contentionCap: Infinity, parkFallbackMs: 5_000 } satisfies NonNullable<
      EngineOptions['background']
    >;
    expectTypeOf(options.contentionCap).toEqualTypeOf<number>();
  });
});
