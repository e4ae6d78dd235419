/**
 * Types of the retention options (docs/decisions/117): `recordTtlMs` and `jobRetention` on
 * `createRedisRuntime` and a worker module's options, `recordTtlMs` on `createEmbeddedEngine` and
 * `createTestEngine`; `jobRetention` takes either outcome and either field.
 */
import { describe, expectTypeOf, test } from 'vitest';
import {
  createRedisRuntime,
  defineWorker,
  DEFAULT_JOB_RETENTION,
  type JobRetention,
  type JobRetentionOptions,
  type KeepJobs,
  type RedisRuntimeOptions,
  type WorkerModuleOptions,
} from '../../src/bullmq.js';
import type { RuntimeOptionError } from '../../src/index.js';
import { createEmbeddedEngine, type EmbeddedEngineOptions } from '../../src/index.js';
import { createTestEngine, type TestEngineOptions } from '../../src/testing/index.js';

describe('retention options', () => {
  test('createRedisRuntime and worker modules take recordTtlMs and jobRetention', () => {
    expectTypeOf<RedisRuntimeOptions['recordTtlMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<RedisRuntimeOptions['jobRetention']>().toEqualTypeOf<JobRetentionOptions | undefined>();
    expectTypeOf<WorkerModuleOptions['recordTtlMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<WorkerModuleOptions['jobRetention']>().toEqualTypeOf<JobRetentionOptions | undefined>();
    expectTypeOf(createRedisRuntime).toBeCallableWith({
      url: 'redis://127.0.0.1:6379',
      recordTtlMs: 60_000,
      jobRetention: { completed: { count: 0 }, failed: { ageMs: 86_400_000 } },
    });
    defineWorker({ options: { recordTtlMs: Infinity, jobRetention: { completed: { ageMs: 60_000 } } } });
    // @ts-expect-error a count is a number
    defineWorker({ options: { jobRetention: { completed: { count: '10' } } } });
  });

  test('the defaults are a full retention of both outcomes', () => {
    expectTypeOf(DEFAULT_JOB_RETENTION).toEqualTypeOf<JobRetention>();
    expectTypeOf<JobRetention['completed']>().toEqualTypeOf<KeepJobs>();
    expectTypeOf<KeepJobs>().toEqualTypeOf<{ readonly ageMs: number; readonly count: number }>();
  });

  test('the in-process factories take recordTtlMs', () => {
    expectTypeOf<EmbeddedEngineOptions['recordTtlMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<TestEngineOptions['recordTtlMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf(createEmbeddedEngine).toBeCallableWith({ recordTtlMs: 60_000 });
    expectTypeOf(createTestEngine).toBeCallableWith({ recordTtlMs: Infinity });
  });

  test('the refusal is a typed error with its details', () => {
    expectTypeOf<RuntimeOptionError['code']>().toEqualTypeOf<'runtime_option_invalid'>();
    expectTypeOf<RuntimeOptionError['details']>().toEqualTypeOf<
      Readonly<{ readonly factory: string; readonly option: string; readonly value: string }>
    >();
  });
});
