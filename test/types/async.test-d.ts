import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { defineStep, reactor, type OutputOf, type StepsOf } from '../../src/dsl/index.js';

describe('asyncStep and asyncReactor inference', () => {
  test('an inline asyncStep: arguments typed from the sources, its result flows to readers by name and path', () => {
    const r = reactor('order')
      .input({ orderId: z.string() })
      .step('reserve', { run: () => ({ sku: 'x', qty: 2 }) })
      .asyncStep('ship', {
        args: ($) => ({ sku: $.result('reserve', 'sku'), orderId: $.input('orderId') }),
        lock: {
          key: ({ orderId }) => {
            expectTypeOf(orderId).toEqualTypeOf<string>();
            return `ship:${orderId}`;
          },
        },
        run: async ({ sku }) => {
          expectTypeOf(sku).toEqualTypeOf<string>();
          return { tracking: `T-${sku}` };
        },
        compensate: (reason, { orderId }) => {
          expectTypeOf(reason).toEqualTypeOf<Error>();
          expectTypeOf(orderId).toEqualTypeOf<string>();
        },
      })
      .step('mail', {
        args: ($) => ({ tracking: $.result('ship', 'tracking') }),
        run: ({ tracking }) => {
          expectTypeOf(tracking).toEqualTypeOf<string>();
          return tracking.length;
        },
      })
      .returns('ship');
    expectTypeOf<OutputOf<typeof r>>().toEqualTypeOf<{ tracking: string }>();
  });

  test('a promise-returning body unwraps to its value type; a step definition placed async keeps its output type', () => {
    const label = defineStep({ input: { sku: z.string() }, run: ({ sku }) => ({ label: sku }) });
    const r = reactor('r')
      .input({ sku: z.string() })
      .asyncStep('flaky', { run: async (): Promise<number> => 7 })
      .asyncStep('label', label)
      .build();
    expectTypeOf<StepsOf<typeof r>>().toEqualTypeOf<{ flaky: number; label: { label: string } }>();
  });

  test('an inline asyncStep has no undo', () => {
    // prettier-ignore
    // @ts-expect-error -- an async unit is never undone by its dispatcher: undo is not accepted
    reactor('r').asyncStep('x', { run: () => 1, undo: () => undefined });
  });

  test('asyncReactor: the child input is wired and checked like compose; readers see the child output', () => {
    const child = reactor('child')
      .input({ n: z.number() })
      .step('double', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => ({ twice: n * 2 }) })
      .returns('double');
    const r = reactor('parent')
      .input({ n: z.number() })
      .asyncReactor('child', child, { args: ($) => ({ n: $.input('n') }) })
      .step('read', { args: ($) => ({ t: $.result('child', 'twice') }), run: ({ t }) => t })
      .returns('read');
    expectTypeOf<OutputOf<typeof r>>().toEqualTypeOf<number>();
    // prettier-ignore
    // @ts-expect-error -- the child's input `n` is a number
    reactor('bad').input({ s: z.string() }).asyncReactor('child', child, { args: ($) => ({ n: $.input('s') }) });
  });
});
