import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { reactor, type OutputOf } from '../../src/dsl/index.js';
import type { PausedRun, RunResult } from '../../src/engine/model/results.js';

describe('interrupt inference', () => {
  test('a field-map payload: the step result is the validated payload (defaults applied), usable by later steps', () => {
    const r = reactor('approval')
      .input({ orderId: z.string() })
      .interrupt('approve', {
        args: ($) => ({ id: $.input('orderId') }),
        payload: { approved: z.boolean(), by: z.string().default('ops'), note: z.string().optional() },
        correlationId: (args) => {
          expectTypeOf(args).toEqualTypeOf<{ id: string }>();
          return `order:${args.id}`;
        },
      })
      .step('ship', {
        args: ($) => ({ ok: $.result('approve', 'approved'), by: $.result('approve', 'by') }),
        run: ({ ok, by }) => {
          expectTypeOf(ok).toEqualTypeOf<boolean>();
          expectTypeOf(by).toEqualTypeOf<string>();
          return ok;
        },
      })
      .returns('approve');
    expectTypeOf<OutputOf<typeof r>>().toEqualTypeOf<{ approved: boolean; by: string; note: string | undefined }>();
  });

  test('a schema payload: its output type; without args, correlationId receives the reactor input', () => {
    const r = reactor('review')
      .input({ ticket: z.number() })
      .interrupt('decide', {
        payload: z.object({ verdict: z.enum(['yes', 'no']) }),
        correlationId: (input) => {
          expectTypeOf(input).toEqualTypeOf<{ ticket: number }>();
          return String(input.ticket);
        },
        timeout: '2d',
        timeoutStrategy: 'active',
        maxAttempts: Infinity,
        resume: 'background',
      })
      .returns('decide');
    expectTypeOf<OutputOf<typeof r>>().toEqualTypeOf<{ verdict: 'yes' | 'no' }>();
  });

  test('coordination options, a duplicate name and a bad strategy do not compile', () => {
    const base = reactor('r')
      .input({ id: z.string() })
      .step('a', { run: () => 1 });
    // @ts-expect-error an interrupt step takes no lock (declare it on the reactor)
    base.interrupt('x', { payload: { ok: z.boolean() }, lock: { key: () => 'k' } });
    // @ts-expect-error step "a" is already defined
    base.interrupt('a', { payload: { ok: z.boolean() } });
    // @ts-expect-error 'soon' is not a strategy
    base.interrupt('y', { payload: { ok: z.boolean() }, timeoutStrategy: 'soon' });
  });

  test('a paused result narrows to what it waits for', () => {
    const result = {} as RunResult;
    if (result.status === 'paused') expectTypeOf(result).toEqualTypeOf<PausedRun>();
    if (result.status === 'paused') expectTypeOf(result.interrupts[0]!.step).toEqualTypeOf<string>();
  });
});
