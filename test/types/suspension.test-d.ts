import { describe, expectTypeOf, test } from 'vitest';
import type { GraphOutcome } from '../../src/engine/graph/frame.js';
import type { NodeOutcome } from '../../src/engine/model/outcome.js';
import {
  onSuspension,
  type HandlerMap,
  type Suspension,
  type SuspensionHandlers,
} from '../../src/engine/model/suspension.js';

/** The union with one more kind, as a change that adds a way of waiting would write it. */
type Widened = Suspension | { readonly kind: 'approval'; readonly by: string };

/** A handler for each kind the union has today. */
const today: SuspensionHandlers<string> = {
  retry: (s) => `retry in ${s.delayMs}`,
  contention: (s) => s.error.message,
  awaitUnit: (s) => s.error.unitId,
  fanOut: (s) => s.park.mapId,
  pause: (s) => `${s.waits.length}`,
  sleep: (s) => s.wait.step,
  failurePause: (s) => `${s.step}: ${s.error.message}`,
};

describe('suspension handler maps', () => {
  test('a handler map has exactly one handler per kind, each given its own member', () => {
    expectTypeOf<keyof SuspensionHandlers<void>>().toEqualTypeOf<Suspension['kind']>();
    expectTypeOf<SuspensionHandlers<number>['sleep']>()
      .parameter(0)
      .toEqualTypeOf<Extract<Suspension, { kind: 'sleep' }>>();
    expectTypeOf(onSuspension({ kind: 'retry', delayMs: 5 }, today)).toEqualTypeOf<string>();
  });

  test('a new kind without a handler does not compile', () => {
    // @ts-expect-error -- the handler of 'approval' is missing: every driver must say what it does with a new kind
    const missing: HandlerMap<Widened, string> = { ...today };
    const complete: HandlerMap<Widened, string> = { ...today, approval: (s) => s.by };
    expectTypeOf(missing).toEqualTypeOf(complete);
  });

  test('a handler map missing a kind of today does not compile', () => {
    const { sleep: _sleep, ...withoutSleep } = today;
    // @ts-expect-error -- the handler of 'sleep' is missing
    const missing: SuspensionHandlers<string> = withoutSleep;
    expectTypeOf(missing).toEqualTypeOf<SuspensionHandlers<string>>();
  });

  test('a yield carries one suspension, not optional fields', () => {
    expectTypeOf<Extract<NodeOutcome, { kind: 'yield' }>['suspension']>().toEqualTypeOf<Suspension>();
    expectTypeOf<Extract<GraphOutcome, { status: 'yielded' }>['suspension']>().toEqualTypeOf<Suspension>();
    expectTypeOf<keyof Extract<NodeOutcome, { kind: 'yield' }>>().toEqualTypeOf<'kind' | 'step' | 'suspension'>();
  });
});
