import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { defineStep, reactor, type StepContext } from '../../src/dsl/index.js';
import type { Engine, EventOf, ReactorEvent, WatchItem } from '../../src/index.js';

describe('ctx.progress and engine.watch types', () => {
  test('a step types its progress by annotating its context; the default takes any data', () => {
    reactor('typed-progress')
      .input({ rows: z.number() })
      .step('load', {
        args: ($) => ({ rows: $.input('rows') }),
        run: ({ rows }, ctx: StepContext<{ done: number; total: number }>) => {
          expectTypeOf(ctx.progress).parameter(0).toEqualTypeOf<{ done: number; total: number }>();
          ctx.progress({ done: 1, total: rows });
          // @ts-expect-error -- not the declared progress type
          ctx.progress({ done: '1' });
          return rows;
        },
      })
      .step('free', {
        run: (_args, ctx) => {
          expectTypeOf(ctx.progress).parameter(0).toEqualTypeOf<unknown>();
          ctx.progress('anything');
          return 1;
        },
      });
    defineStep({
      input: { id: z.string() },
      run: ({ id }, ctx: StepContext<{ id: string; pct: number }>) => {
        ctx.progress({ id, pct: 50 });
        return id;
      },
    });
  });

  test('engine.watch yields positions and engine events; step.progress narrows', async () => {
    const engine = null as unknown as Engine;
    expectTypeOf(engine.watch).returns.toEqualTypeOf<AsyncIterable<WatchItem>>();
    for await (const item of engine.watch('id', { from: '0-1' })) {
      expectTypeOf(item.position).toEqualTypeOf<string>();
      expectTypeOf(item.event).toEqualTypeOf<ReactorEvent>();
      if (item.event.type === 'step.progress') {
        expectTypeOf(item.event).toEqualTypeOf<EventOf<'step.progress'>>();
        expectTypeOf(item.event.attempt).toEqualTypeOf<number>();
        expectTypeOf(item.event.data).toEqualTypeOf<unknown>();
      }
    }
  });
});
