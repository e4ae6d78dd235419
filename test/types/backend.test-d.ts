/**
 * Types of the backend bundle (docs/decisions/124): both shipped backends are `Backend`s,
 * `createRuntime` takes one with the engine's options but the backend's parts, and the engine
 * takes interrupt claims explicitly.
 */
import { describe, expectTypeOf, test } from 'vitest';
import { createRedisBullmqBackend, type RedisBullmqBackend, type RedisRuntime } from '../../src/bullmq.js';
import type { MemoryStore } from '../../src/index.js';
import {
  createMemoryBackend,
  createRuntime,
  type Backend,
  type BackendHealth,
  type EngineOptions,
  type InterruptClaims,
  type MemoryBackend,
  type Runtime,
  type RuntimeOptions,
} from '../../src/index.js';

describe('the backend bundle', () => {
  test('the memory and Redis backends are Backends; createRuntime returns a Runtime', () => {
    expectTypeOf<MemoryBackend>().toExtend<Backend>();
    expectTypeOf<RedisBullmqBackend>().toExtend<Backend>();
    expectTypeOf(createMemoryBackend()).toEqualTypeOf<MemoryBackend>();
    expectTypeOf(createRedisBullmqBackend).returns.toEqualTypeOf<RedisBullmqBackend>();
    expectTypeOf(createRuntime).returns.toEqualTypeOf<Runtime>();
    expectTypeOf<Runtime['health']>().returns.toEqualTypeOf<BackendHealth>();
    expectTypeOf<ReturnType<RedisRuntime['health']>>().toEqualTypeOf<BackendHealth>();
  });

  test("createRuntime's options leave the backend's parts out", () => {
    expectTypeOf<RuntimeOptions>().not.toHaveProperty('store');
    expectTypeOf<RuntimeOptions>().not.toHaveProperty('jobLeases');
    expectTypeOf<RuntimeOptions>().not.toHaveProperty('interruptClaims');
    expectTypeOf<RuntimeOptions>().toHaveProperty('scheduleInputs');
  });

  test('createEngine takes interrupt claims explicitly; a MemoryStore is one', () => {
    expectTypeOf<EngineOptions['interruptClaims']>().toEqualTypeOf<InterruptClaims | undefined>();
    expectTypeOf<MemoryStore>().toExtend<InterruptClaims>();
  });
});
