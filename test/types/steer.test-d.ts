/**
 * Types of failures an operator steers: `onFailure` on a reactor and a step, `skippable` typed
 * by the step's result, the engine's actions and their options, the paused result's `pausedOn`.
 */
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  createEngine,
  MemoryStore,
  reactor,
  type Engine,
  type FailureActionError,
  type ForkOptions,
  type OnFailure,
  type PauseCause,
  type RunResult,
  type SkipStepOptions,
  type StepsOf,
} from '../../src/index.js';

const order = reactor('typed-steer', { onFailure: 'pause' })
  .input({ orderId: z.string() })
  .step('charge', {
    onFailure: 'pause',
    skippable: z.object({ id: z.string() }),
    run: () => ({ id: 'ch-1' }),
  })
  .step('ship', { args: ($) => ({ id: $.result('charge', 'id') }), onFailure: 'rollback', run: ({ id }) => id })
  .build();

describe('onFailure and skippable', () => {
  test('onFailure is rollback or pause, on a reactor and on a step', () => {
    expectTypeOf(order.onFailure).toEqualTypeOf<OnFailure>();
    expectTypeOf<OnFailure>().toEqualTypeOf<'rollback' | 'pause'>();
    // @ts-expect-error -- not a policy
    reactor('bad-policy', { onFailure: 'retry' });
    reactor('bad-step-policy').step('a', {
      // @ts-expect-error -- not a policy
      onFailure: 'ignore',
      run: () => 1,
    });
  });

  test("skippable takes true or a schema of the step's result", () => {
    reactor('skip-true').step('a', { skippable: true, run: () => 1 });
    reactor('skip-schema').step('a', { skippable: z.number(), run: () => 1 });
    reactor('skip-wrong').step('a', {
      // @ts-expect-error -- the schema's values are strings; the step returns numbers
      skippable: z.string(),
      run: (): number => 1,
    });
  });
});

describe('the engine actions', () => {
  const engine: Engine = createEngine({ store: new MemoryStore() });

  test('retryStep, skipStep, rollback and fork resolve to a run result', () => {
    expectTypeOf(engine.retryStep('id')).toEqualTypeOf<Promise<RunResult>>();
    expectTypeOf(engine.retryStep('id', { args: { cents: 5 } })).toEqualTypeOf<Promise<RunResult>>();
    expectTypeOf(engine.rollback('id')).toEqualTypeOf<Promise<RunResult>>();
    expectTypeOf(engine.fork('id', { fromStep: 'charge' })).toEqualTypeOf<Promise<RunResult>>();
    expectTypeOf<ForkOptions>().toHaveProperty('fromStep').toEqualTypeOf<string>();
    // @ts-expect-error -- fork needs the step it runs from
    void engine.fork('id', {});
    // @ts-expect-error -- retryStep's arguments are an object of values
    void engine.retryStep('id', { args: 5 });
  });

  test("skipStep's value is typed by the step's result when asked", () => {
    type Charge = StepsOf<typeof order>['charge'];
    expectTypeOf<Charge>().toEqualTypeOf<{ id: string }>();
    expectTypeOf(engine.skipStep<Charge>('id', { value: { id: 'manual' } })).toEqualTypeOf<Promise<RunResult>>();
    // @ts-expect-error -- the charge step's result has a string id
    void engine.skipStep<Charge>('id', { value: { id: 7 } });
    expectTypeOf<SkipStepOptions<Charge>['value']>().toEqualTypeOf<{ id: string }>();
    // @ts-expect-error -- a value is required
    void engine.skipStep('id', {});
  });

  test('a paused result says why it is paused', () => {
    expectTypeOf<Extract<RunResult, { status: 'paused' }>['pausedOn']>().toEqualTypeOf<PauseCause>();
    expectTypeOf<Extract<PauseCause, { kind: 'failure' }>>().toEqualTypeOf<{
      readonly kind: 'failure';
      readonly step: string;
      readonly error: Error;
      readonly at: number;
    }>();
    expectTypeOf<FailureActionError['details']['reason']>().toEqualTypeOf<
      | 'not_paused_on_failure'
      | 'already_claimed'
      | 'busy'
      | 'not_skippable'
      | 'invalid_value'
      | 'invalid_args'
      | 'unknown_step'
      | 'invalid_input'
      | 'unsupported'
    >();
  });
});
