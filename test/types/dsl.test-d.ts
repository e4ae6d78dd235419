import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  defineStep,
  reactor,
  skip,
  halt,
  type InputOf,
  type OutputOf,
  type MapResult,
  type Duration,
  type StepInvocation,
  type SleepResult,
} from '../../src/dsl/index.js';
import type { RunResult } from '../../src/index.js';

describe('reactor DSL inference', () => {
  test('a step sees its arguments typed, results flow by name and path', () => {
    const r = reactor('checkout')
      .input({
        orderId: z.string(),
        amount: z.number(),
        note: z.string().optional(),
        currency: z.string().default('EUR'),
      })
      .step('reserve', {
        args: ($) => ({ orderId: $.input('orderId') }),
        run: ({ orderId }) => {
          expectTypeOf(orderId).toEqualTypeOf<string>();
          return { reservationId: `r-${orderId}`, total: 10, lines: [{ sku: 'a' }] };
        },
      })
      .step('charge', {
        args: ($) => ({
          total: $.result('reserve', 'total'),
          sku: $.result('reserve', 'lines', 0, 'sku'),
          cents: $.input('amount').transform((a) => a * 100),
        }),
        run: async ({ total, sku, cents }) => {
          expectTypeOf(total).toEqualTypeOf<number>();
          expectTypeOf(sku).toEqualTypeOf<string>();
          expectTypeOf(cents).toEqualTypeOf<number>();
          return { chargeId: 'c1' };
        },
        undo: (charge) => {
          expectTypeOf(charge).toEqualTypeOf<{ chargeId: string }>();
        },
      })
      .returns('charge');
    expectTypeOf<OutputOf<typeof r>>().toEqualTypeOf<{ chargeId: string }>();
    expectTypeOf<InputOf<typeof r>>().toEqualTypeOf<{
      orderId: string;
      amount: number;
      note?: string | undefined;
      currency?: string | undefined;
    }>();
  });

  test('a result path that does not exist fails to compile', () => {
    reactor('r')
      .step('a', { run: () => ({ x: 1 }) })
      .step('b', {
        // prettier-ignore
        // @ts-expect-error -- 'y' is not a key of a's result
        args: ($) => ({ y: $.result('a', 'y') }),
        run: () => 1,
      });
  });

  test('forward references and duplicate names do not compile', () => {
    reactor('r')
      .step('a', { run: () => 1 })
      // prettier-ignore
      // @ts-expect-error -- "b" is not declared yet
      .step('c', { args: ($) => ({ v: $.result('b') }), run: () => 2 });
    // prettier-ignore
    // @ts-expect-error -- duplicate name
    reactor('r').step('a', { run: () => 1 }).step('a', { run: () => 2 });
  });

  test('a step without args receives the reactor input', () => {
    reactor('r')
      .input({ id: z.string() })
      .step('a', {
        run: (input) => {
          expectTypeOf(input).toEqualTypeOf<{ id: string }>();
          return 1;
        },
      });
  });

  test('signals unwrap into the step value', () => {
    const r = reactor('r')
      .step('s', { run: () => (Math.random() > 0.5 ? skip('no', 3) : 4) })
      .step('h', { run: () => halt('stop') })
      .build();
    expectTypeOf<OutputOf<typeof r>['s']>().toEqualTypeOf<number>();
    expectTypeOf<OutputOf<typeof r>['h']>().toEqualTypeOf<never>();
  });

  test('step definitions: validated args typed, wiring typed, extension adds fields', () => {
    const charge = defineStep({
      input: { account: z.string(), amount: z.number(), currency: z.string().default('EUR') },
      run: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ account: string; amount: number; currency: string }>();
        return { id: 'c' };
      },
    });
    const audited = charge.extend({ input: { auditor: z.string() } });
    reactor('r')
      .input({ account: z.string(), auditor: z.string() })
      .step('quote', { run: () => ({ total: 5 }) })
      .step('charge', audited, { args: ($) => ({ amount: $.result('quote', 'total') }) })
      .step('after', {
        args: ($) => ({ c: $.result('charge') }),
        run: ({ c }) => expectTypeOf(c).toEqualTypeOf<{ id: string }>(),
      });
    reactor('r2')
      .input({ label: z.string() })
      // prettier-ignore
      // @ts-expect-error -- amount expects a number
      .step('charge', charge, { args: ($) => ({ amount: $.input('label') }) });
  });

  test('compose and map results are typed', () => {
    const child = reactor('child')
      .input({ n: z.number() })
      .step('double', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => n * 2 })
      .returns('double');
    const parent = reactor('parent')
      .input({ items: z.array(z.number()) })
      .compose('one', child, { args: ($) => ({ n: $.value(3) }) })
      .map('all', { source: ($) => $.input('items'), each: child, args: (n) => ({ n }) })
      .build();
    expectTypeOf<OutputOf<typeof parent>['one']>().toEqualTypeOf<number>();
    expectTypeOf<OutputOf<typeof parent>['all']>().toEqualTypeOf<MapResult<number>>();
  });
});

describe('step-scoped coordination', () => {
  test("the key function's parameter is the step's own arguments (inline, definition, extend)", () => {
    const charge = defineStep({
      input: { accountId: z.string(), amount: z.number(), currency: z.string().default('EUR') },
      lock: {
        key: (args) => {
          expectTypeOf(args).toEqualTypeOf<{ accountId: string; amount: number; currency: string }>();
          return `account:${args.accountId}`;
        },
        wait: '1s',
      },
      rateLimit: { key: (args) => args.currency, limit: 10, per: '1s' },
      run: ({ amount }) => amount,
    });
    charge.extend({
      input: { note: z.string() },
      semaphore: {
        key: (args) => {
          expectTypeOf(args).toEqualTypeOf<{ accountId: string; amount: number; currency: string; note: string }>();
          return args.note;
        },
        limit: 2,
      },
    });
    reactor('typed-step-lock')
      .input({ accountId: z.string(), day: z.string() })
      .step('audit', {
        args: ($) => ({ account: $.input('accountId'), n: $.input('day').transform((d) => d.length) }),
        lock: {
          key: (args) => {
            expectTypeOf(args).toEqualTypeOf<{ account: string; n: number }>();
            return args.account;
          },
        },
        period: { key: (args) => `${args.account}:${args.n}`, every: 'day' },
        orderedLock: { key: (args) => args.account, strict: true },
        run: ({ account }) => account,
      })
      .step('whole-input', {
        semaphore: {
          key: (input) => {
            expectTypeOf(input).toEqualTypeOf<{ accountId: string; day: string }>();
            return input.accountId;
          },
          limit: 1,
        },
        run: () => 1,
      })
      .build();
  });

  test("invoke takes the definition's input (defaults optional) and yields its typed result; rollbackWait is a step option", () => {
    const charge = defineStep({
      input: { accountId: z.string(), currency: z.string().default('EUR') },
      lock: { key: ({ accountId }) => accountId, rollbackWait: '2s' },
      semaphore: { key: () => 'psp', limit: 2, rollbackWait: 0 },
      run: ({ accountId, currency }) => ({ id: accountId, currency }),
    });
    expectTypeOf(charge.invoke).parameter(0).toEqualTypeOf<{ accountId: string; currency?: string | undefined }>();
    expectTypeOf<Awaited<ReturnType<typeof charge.invoke>>>().toEqualTypeOf<
      StepInvocation<{ id: string; currency: string }>
    >();
    // prettier-ignore
    // @ts-expect-error -- a missing required argument
    void charge.invoke({}, { engine: undefined as never });
    // prettier-ignore
    // @ts-expect-error -- rollbackWait is not a reactor-level option
    reactor('r').withLock({ key: () => 'k', rollbackWait: '1s' });
  });

  test('timeout is a duration on inline steps, asyncStep and defineStep; the result types do not change', () => {
    const r = reactor('timed')
      .step('a', { timeout: '30s', run: (_args, ctx) => ({ aborted: ctx.signal.aborted }) })
      .asyncStep('b', { timeout: 500, run: () => 'x' })
      .build();
    expectTypeOf<OutputOf<typeof r>>().toEqualTypeOf<{ a: { aborted: boolean }; b: string }>();
    const slow = defineStep({ input: { id: z.string() }, timeout: '2m', run: ({ id }) => id });
    expectTypeOf(slow.timeoutMs).toEqualTypeOf<number | undefined>();
    expectTypeOf<Parameters<typeof defineStep>[0]['timeout']>().toEqualTypeOf<Duration | undefined>();
    // prettier-ignore
    // @ts-expect-error -- not a duration
    reactor('r').step('a', { timeout: '30 seconds', run: () => 1 });
    // prettier-ignore
    // @ts-expect-error -- a timeout is a step option, not a placement option
    reactor('r').step('a', slow, { timeout: '1s' });
  });

  test('sleep: for a duration or until an argument giving a Date or epoch ms, checked against the input and results', () => {
    const r = reactor('sleepy')
      .input({ orderId: z.string(), dueAt: z.number() })
      .step('order', { run: () => ({ createdAt: new Date() }) })
      .sleep('cool', { for: '3d', waitFor: ['order'] })
      .sleep('day', { until: ($) => $.result('order', 'createdAt').transform((at) => at.getTime() + 86_400_000) })
      .sleep('due', { until: ($) => $.input('dueAt') })
      .step('after', { args: ($) => ({ woke: $.result('cool', 'wokeAt') }), run: ({ woke }) => woke })
      .build();
    expectTypeOf<OutputOf<typeof r>['cool']>().toEqualTypeOf<SleepResult>();
    expectTypeOf<OutputOf<typeof r>['after']>().toEqualTypeOf<number>();
    // prettier-ignore
    // @ts-expect-error -- until must produce a Date or a number
    reactor('r').input({ id: z.string() }).sleep('s', { until: ($) => $.input('id') });
    // prettier-ignore
    // @ts-expect-error -- until reads a step that does not exist
    reactor('r').sleep('s', { until: ($) => $.result('nope') });
    // prettier-ignore
    // @ts-expect-error -- not a duration
    reactor('r').sleep('s', { for: '3 days' });
    // prettier-ignore
    // @ts-expect-error -- waitFor names a step that does not exist
    reactor('r').sleep('s', { for: '1s', waitFor: ['nope'] });
    // prettier-ignore
    // @ts-expect-error -- not both
    reactor('r').sleep('s', { for: '1s', until: ($) => $.value(1) });
  });

  test('deadline is a duration option of reactor(); a cancelled result may carry its cause', () => {
    const r = reactor('bounded', { deadline: '10m' })
      .step('a', { run: () => 1 })
      .build();
    expectTypeOf(r.deadlineMs).toEqualTypeOf<number | undefined>();
    expectTypeOf<NonNullable<Parameters<typeof reactor>[1]>['deadline']>().toEqualTypeOf<Duration | undefined>();
    expectTypeOf<Extract<RunResult, { status: 'cancelled' }>['cause']>().toEqualTypeOf<Error | undefined>();
    // prettier-ignore
    // @ts-expect-error -- not a duration
    reactor('r', { deadline: '10 minutes' });
    // prettier-ignore
    // @ts-expect-error -- a deadline is a reactor option, not a step option
    reactor('r').step('a', { deadline: '1s', run: () => 1 });
  });
});

describe('versioned definitions', () => {
  test('a definition has a fingerprint and an optional version; migrateFrom names one version or fingerprint', () => {
    const def = reactor('v', {
      version: '2',
      migrateFrom: [{ version: '1', renamed: { a: 'a2' } }, { fingerprint: 'abc' }],
    })
      .step('a2', { run: () => 1 })
      .build();
    expectTypeOf(def.fingerprint).toEqualTypeOf<string>();
    expectTypeOf(def.version).toEqualTypeOf<string | undefined>();
    // prettier-ignore
    // @ts-expect-error -- not both a version and a fingerprint
    reactor('v', { migrateFrom: [{ version: '1', fingerprint: 'abc' }] });
    // prettier-ignore
    // @ts-expect-error -- a version is a string
    reactor('v', { version: 2 });
  });
});
