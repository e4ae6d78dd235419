import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { reactor } from '../../src/dsl/index.js';
import { createTestEngine, testReactor, type TestEngine } from '../../src/testing/index.js';

describe('the test engine with async units', () => {
  test('drain and close resolve to nothing; a run with an asyncStep is typed by its returns step', async () => {
    const t = createTestEngine();
    expectTypeOf(t.drain).toEqualTypeOf<() => Promise<void>>();
    expectTypeOf(t.close).toEqualTypeOf<() => Promise<void>>();
    expectTypeOf<TestEngine['drain']>().returns.resolves.toBeVoid();
    const r = reactor('typed-async')
      .input({ id: z.string() })
      .asyncStep('ship', { args: ($) => ({ id: $.input('id') }), run: ({ id }) => ({ label: `L-${id}` }) })
      .returns('ship');
    const result = await testReactor(r, { id: 'x' });
    if (result.status === 'completed') expectTypeOf(result.value).toEqualTypeOf<{ label: string }>();
  });
});
