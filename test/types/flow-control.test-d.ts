/**
 * Types of the debounce start option, the superseded result and `asyncReactor`'s
 * `cancelChildren` (docs/decisions/086, 087).
 */
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  createEmbeddedEngine,
  reactor,
  SupersededError,
  type DebounceOptions,
  type RunResult,
  type StartOptions,
} from '../../src/index.js';

const child = reactor('flow-child')
  .input({ id: z.string() })
  .step('work', { args: ($) => ({ id: $.input('id') }), run: ({ id }) => id.length })
  .returns('work');

describe('flow control types', () => {
  test('debounce takes a key and a window; delay and at stay beside it in the type', () => {
    expectTypeOf<StartOptions['debounce']>().toEqualTypeOf<DebounceOptions | undefined>();
    expectTypeOf<DebounceOptions['key']>().toEqualTypeOf<string>();
    const engine = createEmbeddedEngine();
    void engine.start(child, { id: 'a' }, { debounce: { key: 'a', window: '5s' } });
    void engine.start(child, { id: 'a' }, { debounce: { key: 'a', window: 5_000 }, priority: 1 });
    // @ts-expect-error a window is a duration
    void engine.start(child, { id: 'a' }, { debounce: { key: 'a', window: 'soon' } });
    // @ts-expect-error the key is required
    void engine.start(child, { id: 'a' }, { debounce: { window: 5_000 } });
  });

  test('a cancelled result may say what superseded it; the cause narrows to SupersededError', () => {
    const result = {} as RunResult;
    if (result.status === 'cancelled') {
      expectTypeOf(result.supersededBy).toEqualTypeOf<string | undefined>();
      if (result.cause instanceof SupersededError) {
        expectTypeOf(result.cause.code).toEqualTypeOf<'superseded'>();
        expectTypeOf(result.cause.details.supersededBy).toEqualTypeOf<string>();
        expectTypeOf(result.cause.details.debounceKey).toEqualTypeOf<string>();
      }
    }
  });

  test('asyncReactor takes cancelChildren beside its placement; the result type is unchanged', () => {
    const parent = reactor('flow-parent')
      .input({ id: z.string() })
      .asyncReactor('audit', child, { args: ($) => ({ id: $.input('id') }), cancelChildren: false })
      .step('after', { args: ($) => ({ n: $.result('audit') }), run: ({ n }) => n })
      .returns('after');
    expectTypeOf(parent).not.toBeNever();
    // @ts-expect-error cancelChildren is a boolean
    reactor('flow-bad').asyncReactor('audit', child, { cancelChildren: 'no' });
  });
});
