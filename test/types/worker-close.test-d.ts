/**
 * Types of a worker module's `close()`: a function, synchronous or returning a promise; anything
 * else does not compile.
 */
import { expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { reactor } from '../../src/index.js';
import { defineWorker, type WorkerModule } from '../../src/bullmq.js';

const ping = reactor('ping')
  .input({ n: z.number() })
  .step('pong', { run: ({ n }) => n })
  .returns('pong');

test('close is an optional function; its result is awaited whatever it is', () => {
  expectTypeOf<WorkerModule['close']>().toEqualTypeOf<(() => unknown) | undefined>();
  defineWorker({ reactors: [ping], close: async () => undefined });
  defineWorker({ reactors: [ping], close: () => undefined });
  // @ts-expect-error: close must be a function
  defineWorker({ reactors: [ping], close: 'later' });
});
