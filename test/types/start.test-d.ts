/**
 * Types of the start options and of `engine.startMany` (docs/decisions/078, 079): each entry's
 * input is checked against its own reactor, and the results are a tuple typed per entry.
 */
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  reactor,
  type Engine,
  type RunResult,
  type Started,
  type StartOptions,
  type StepsOf,
} from '../../src/index.js';

const invoice = reactor('invoice')
  .input({ orderId: z.string(), amountCents: z.number() })
  .step('charge', { args: ($) => ({ id: $.input('orderId') }), run: ({ id }) => ({ chargeId: id }) })
  .returns('charge');
const ping = reactor('ping')
  .input({ n: z.number() })
  .step('pong', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => n * 2 })
  .returns('pong');

declare const engine: Engine;

describe('start options', () => {
  test('delay takes ms or a duration string, at a Date or epoch ms, priority a number', () => {
    expectTypeOf<{ delay: '5m' }>().toExtend<StartOptions>();
    expectTypeOf<{ delay: 1_000 }>().toExtend<StartOptions>();
    expectTypeOf<{ at: Date; priority: 1 }>().toExtend<StartOptions>();
    expectTypeOf<{ delay: 'soon' }>().not.toExtend<StartOptions>();
    expectTypeOf<{ delay: '400d'; allowFarFuture: true }>().toExtend<StartOptions>();
    expectTypeOf<{ allowFarFuture: 'yes' }>().not.toExtend<StartOptions>();
    expectTypeOf(engine.start).parameter(2).toEqualTypeOf<StartOptions | undefined>();
  });
});

describe('startMany', () => {
  test('infers each entry from its reactor: a tuple of results in order', async () => {
    const results = await engine.startMany([
      { reactor: invoice, input: { orderId: 'o-1', amountCents: 100 } },
      { reactor: ping, input: { n: 1 }, options: { priority: 1, delay: '1m' } },
    ]);
    expectTypeOf(results).toEqualTypeOf<[Started<typeof invoice>, Started<typeof ping>]>();
    const [first, second] = results;
    expectTypeOf(first).toMatchTypeOf<RunResult<{ chargeId: string }, StepsOf<typeof invoice>>>();
    if (first.status === 'completed') expectTypeOf(first.value).toEqualTypeOf<{ chargeId: string }>();
    if (second.status === 'completed') expectTypeOf(second.value).toEqualTypeOf<number>();
  });

  test('each result has result() and wait() typed by its own entry, as a start handle', async () => {
    const [first, second] = await engine.startMany([
      { reactor: invoice, input: { orderId: 'o-1', amountCents: 100 } },
      { reactor: ping, input: { n: 1 } },
    ]);
    const paid = await first.wait({ timeoutMs: 1_000 });
    expectTypeOf(paid).toEqualTypeOf<RunResult<{ chargeId: string }, StepsOf<typeof invoice>>>();
    if (paid.status === 'completed') expectTypeOf(paid.value).toEqualTypeOf<{ chargeId: string }>();
    const now = await second.result();
    expectTypeOf(now).toEqualTypeOf<RunResult<number, StepsOf<typeof ping>> | undefined>();
    if (now?.status === 'completed') expectTypeOf(now.value).toEqualTypeOf<number>();
    // @ts-expect-error ping's value is a number, not invoice's output
    if (now?.status === 'completed') expectTypeOf(now.value).toEqualTypeOf<{ chargeId: string }>();
  });

  test("an entry's input is checked against its own reactor", () => {
    void engine.startMany([
      { reactor: invoice, input: { orderId: 'o-1', amountCents: 100 } },
      // @ts-expect-error ping takes { n: number }, not invoice's input
      { reactor: ping, input: { orderId: 'o-1', amountCents: 100 } },
    ]);
    // @ts-expect-error a bad start option type
    void engine.startMany([{ reactor: ping, input: { n: 1 }, options: { delay: 'soon' } }]);
  });

  test('an array of one reactor gives an array of its results', async () => {
    const inputs = [{ n: 1 }, { n: 2 }];
    const results = await engine.startMany(inputs.map((input) => ({ reactor: ping, input })));
    expectTypeOf(results[0]!).toEqualTypeOf<Started<typeof ping>>();
    expectTypeOf(await results[0]!.wait()).toEqualTypeOf<RunResult<number, StepsOf<typeof ping>>>();
  });
});
