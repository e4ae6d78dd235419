/**
 * Types of the typed result by id: `engine.start`'s result carries `result()` and `wait()` typed
 * by the reactor; `engine.result(id, reactor)` and `engine.wait(id, reactor)` are typed by the
 * reactor given, and stay `unknown`-valued without one.
 */
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { reactor, type Engine, type ResultOf, type RunResult, type StepsOf } from '../../src/index.js';
import { createTestEngine } from '../../src/testing/index.js';

const order = reactor('order')
  .input({ orderId: z.string() })
  .step('charge', { args: ($) => ({ id: $.input('orderId') }), run: ({ id }) => ({ chargeId: id }) })
  .returns('charge');

declare const engine: Engine;

describe('a typed result by id', () => {
  test('start resolves with a result whose result() and wait() are typed by the reactor', async () => {
    const started = await engine.start(order, { orderId: 'o-1' });
    expectTypeOf(started.executionId).toEqualTypeOf<string>();
    expectTypeOf(started).toExtend<RunResult<{ chargeId: string }, StepsOf<typeof order>>>();
    const done = await started.wait({ timeoutMs: 1_000 });
    expectTypeOf(done).toEqualTypeOf<ResultOf<typeof order>>();
    if (done.status === 'completed') expectTypeOf(done.value).toEqualTypeOf<{ chargeId: string }>();
    const current = await started.result();
    expectTypeOf(current).toEqualTypeOf<ResultOf<typeof order> | undefined>();
  });

  test('engine.result and engine.wait with a reactor are typed by it', async () => {
    const current = await engine.result('x-1', order);
    if (current?.status === 'completed') expectTypeOf(current.value).toEqualTypeOf<{ chargeId: string }>();
    const done = await engine.wait('x-1', order, { timeoutMs: 5_000 });
    expectTypeOf(done).toEqualTypeOf<RunResult<{ chargeId: string }, StepsOf<typeof order>>>();
    // The test engine's engine has the same overloads.
    const t = createTestEngine();
    const viaTest = await t.engine.result('x-1', order);
    expectTypeOf(viaTest).toEqualTypeOf<ResultOf<typeof order> | undefined>();
  });

  test('without a reactor the value is unknown', async () => {
    const current = await engine.result('x-1');
    if (current?.status === 'completed') expectTypeOf(current.value).toBeUnknown();
    const done = await engine.wait('x-1', { timeoutMs: 1_000 });
    expectTypeOf(done).toEqualTypeOf<RunResult>();
  });

  test('a second argument that is neither a reactor nor wait options does not compile', () => {
    // @ts-expect-error a string is not a reactor
    void engine.result('x-1', 'order');
    // @ts-expect-error wait options have no `reactor` field: pass the reactor second
    void engine.wait('x-1', { reactor: order });
  });
});
