import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  defineStep,
  reactor,
  type MapFailure,
  type MapResult,
  type MapSuccess,
  type OutputOf,
} from '../../src/index.js';

describe('fan-out maps', () => {
  const charge = defineStep({
    input: { sku: z.string(), qty: z.number() },
    run: ({ sku, qty }) => ({ sku, total: qty * 2 }),
  });

  test('a fan-out map is typed like an in-process one: a MapResult of the element output, read by later steps', () => {
    const order = reactor('order')
      .input({ lines: z.array(z.object({ sku: z.string(), qty: z.number() })) })
      .map('charged', {
        source: ($) => $.input('lines'),
        each: charge,
        args: (line) => ({ sku: line.sku, qty: line.qty }),
        fanOut: { batchSize: 10 },
        atomic: false,
      })
      .step('sum', {
        args: ($) => ({ charged: $.result('charged') }),
        run: ({ charged }) => {
          expectTypeOf(charged.successes).toEqualTypeOf<readonly { sku: string; total: number }[]>();
          expectTypeOf(charged.failures).toEqualTypeOf<readonly MapFailure[]>();
          expectTypeOf(charged.succeeded).toEqualTypeOf<readonly MapSuccess<{ sku: string; total: number }>[]>();
          return charged.successes.reduce((n, c) => n + c.total, 0);
        },
      })
      .build();
    expectTypeOf<OutputOf<typeof order>['charged']>().toEqualTypeOf<MapResult<{ sku: string; total: number }>>();
    expectTypeOf<OutputOf<typeof order>['sum']>().toEqualTypeOf<number>();
  });

  test('fanOut takes an optional numeric batchSize and nothing else', () => {
    const base = reactor('r').input({ items: z.array(z.number()) });
    base.map('a', {
      source: ($) => $.input('items'),
      each: charge,
      args: (n) => ({ sku: String(n), qty: n }),
      fanOut: {},
    });
    // prettier-ignore
    // @ts-expect-error -- batchSize is a number
    base.map('b', { source: ($) => $.input('items'), each: charge, args: (n) => ({ sku: String(n), qty: n }), fanOut: { batchSize: '10' } });
    // prettier-ignore
    // @ts-expect-error -- unknown option
    base.map('c', { source: ($) => $.input('items'), each: charge, args: (n) => ({ sku: String(n), qty: n }), fanOut: { size: 10 } });
  });
});
