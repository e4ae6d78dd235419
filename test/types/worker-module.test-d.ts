/**
 * Types of the worker module contract: `defineWorker` type-checks what a `--module` app gives
 * `ts-reactor worker` (reactors, named rate limits, middleware, logger, prefix, options), and
 * its options are a subset of `createRedisRuntime`'s.
 */
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { reactor } from '../../src/index.js';
import {
  defineWorker,
  type RedisRuntimeOptions,
  type WorkerContext,
  type WorkerDefinition,
  type WorkerModule,
  type WorkerModuleOptions,
} from '../../src/bullmq.js';
import { otel, otelMetrics } from '../../src/otel/index.js';

const ping = reactor('ping')
  .input({ n: z.number() })
  .step('pong', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => n * 2 })
  .returns('pong');

describe('defineWorker', () => {
  test('takes the contract and returns a worker definition', () => {
    const worker = defineWorker({
      reactors: [ping],
      rateLimits: { api: [{ limit: 10, per: '1s' }] },
      middleware: [otel()],
      prefix: 'shop',
      options: { queueName: 'jobs', background: { workerWaitMs: 0 }, maxConcurrency: 4 },
    });
    expectTypeOf(worker).toEqualTypeOf<WorkerDefinition>();
    expectTypeOf(worker).toMatchTypeOf<WorkerModule>();
  });

  test('middleware may be a function of the worker, whose gauges otelMetrics takes', () => {
    const worker = defineWorker({
      reactors: [ping],
      middleware: (w) => {
        expectTypeOf(w).toEqualTypeOf<WorkerContext>();
        return [otel(), otelMetrics({ gauges: w.gauges })];
      },
    });
    expectTypeOf(worker).toMatchTypeOf<WorkerModule>();
    // @ts-expect-error -- the function returns middleware, not a promise of them
    defineWorker({ middleware: async () => [otel()] });
  });

  test('its options are options of createRedisRuntime', () => {
    expectTypeOf<WorkerModuleOptions>().toMatchTypeOf<Partial<RedisRuntimeOptions>>();
  });

  test('a misspelt field, a window without per, a wrong option do not compile', () => {
    // @ts-expect-error -- rateLimit is not a field (rateLimits is)
    defineWorker({ reactors: [ping], rateLimit: {} });
    // @ts-expect-error -- a window needs per
    defineWorker({ rateLimits: { api: [{ limit: 10 }] } });
    // @ts-expect-error -- maxConcurrency is a number
    defineWorker({ options: { maxConcurrency: 'many' } });
    // @ts-expect-error -- a reactor definition, not its name
    defineWorker({ reactors: ['ping'] });
  });
});
