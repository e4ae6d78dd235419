/**
 * Types of execution tags and `engine.list` (docs/decisions/103): tags are a string map on
 * `run`, `start` and `startMany` entries, carried by results; `list` takes a typed query and
 * returns typed summaries with an optional cursor.
 */
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  reactor,
  type Engine,
  type ListPage,
  type ExecutionStatus,
  type StatusName,
  type ListedExecution,
  type ListQuery,
  type RunOptions,
  type RunResult,
  type StartOptions,
} from '../../src/index.js';

const order = reactor('order')
  .input({ orderId: z.string() })
  .step('charge', { args: ($) => ({ id: $.input('orderId') }), run: ({ id }) => id })
  .returns('charge');

declare const engine: Engine;

describe('tags', () => {
  test('a string map on run, start and startMany entries', () => {
    expectTypeOf<{ tags: { orderId: '42' } }>().toExtend<RunOptions>();
    expectTypeOf<{ tags: { orderId: '42' }; priority: 1 }>().toExtend<StartOptions>();
    expectTypeOf<{ tags: { orderId: 42 } }>().not.toExtend<RunOptions>();
    expectTypeOf<{ tags: string[] }>().not.toExtend<StartOptions>();
    void engine.run(order, { orderId: 'o-1' }, { tags: { orderId: 'o-1' } });
    void engine.startMany([{ reactor: order, input: { orderId: 'o-1' }, options: { tags: { orderId: 'o-1' } } }]);
    // @ts-expect-error a tag value is a string
    void engine.start(order, { orderId: 'o-1' }, { tags: { orderId: 1 } });
  });

  test('results carry them, read-only and optional', () => {
    expectTypeOf<RunResult['tags']>().toEqualTypeOf<Readonly<Record<string, string>> | undefined>();
  });
});

describe('engine.list', () => {
  test('a typed query, typed summaries, an optional cursor', () => {
    expectTypeOf(engine.list).parameter(0).toEqualTypeOf<ListQuery | undefined>();
    expectTypeOf(engine.list).returns.resolves.toEqualTypeOf<ListPage>();
    expectTypeOf<ListPage['executions'][number]>().toEqualTypeOf<ListedExecution>();
    expectTypeOf<ListPage['cursor']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ListedExecution['status']>().toEqualTypeOf<StatusName>();
    expectTypeOf<ListedExecution['tags']>().toEqualTypeOf<Readonly<Record<string, string>>>();
    expectTypeOf<{ from: Date; to: number; tags: { orderId: '1' }; limit: 100 }>().toExtend<ListQuery>();
    // @ts-expect-error an unknown status
    void engine.list({ status: 'done' });
    // @ts-expect-error from is a Date or epoch ms
    void engine.list({ from: '2026-01-01' });
  });
});
