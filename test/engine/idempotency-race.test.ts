/**
 * Concurrent `run` / `start` calls with one idempotency key, on the memory backend and on Redis:
 * one execution, every other call a replay of it — also when the winner's claim answers late
 * (an extra await between the claim and everything after it), which once let a replay find
 * neither an in-flight entry nor a record (docs/decisions/047).
 */
import { describe, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import {
  createEmbeddedEngine,
  createEngine,
  MemoryStore,
  reactor,
  type Engine,
  type RunResult,
} from '../../src/index.js';
import type { IdempotencyClaim } from '../../src/ports/store.js';
import { useRedisServer } from '../support/use-redis-server.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A memory store whose winning claims answer a few macrotasks late: the losers' replays arrive first. */
class LateWinnerStore extends MemoryStore {
  override async claimIdempotency(reactorName: string, key: string, executionId: string): Promise<IdempotencyClaim> {
    const claim = await super.claimIdempotency(reactorName, key, executionId);
    if (claim.claimed) for (let i = 0; i < 5; i++) await tick();
    return claim;
  }
}

/** A late-winner store that cannot save records. */
class BrokenStore extends LateWinnerStore {
  override save(): Promise<void> {
    return Promise.reject(new Error('store down'));
  }
}

function counting(name: string) {
  const calls = { runs: 0 };
  const def = reactor(name)
    .step('s', { run: async () => (await tick(), ++calls.runs) })
    .returns('s');
  return { def, calls };
}

function expectOneExecution(results: readonly RunResult[]): void {
  expect(new Set(results.map((r) => r.executionId)).size).toBe(1);
  expect(results.filter((r) => !r.replay)).toHaveLength(1);
}

async function concurrentRuns(engine: Engine, name: string): Promise<void> {
  const { def, calls } = counting(name);
  const results = await Promise.all(Array.from({ length: 10 }, () => engine.run(def, {}, { idempotencyKey: 'same' })));
  expect(calls.runs).toBe(1);
  expectOneExecution(results);
  expect(results.every((r) => r.status === 'completed' && r.value === 1)).toBe(true);
}

describe('idempotency keys under concurrency, memory backend', () => {
  test('concurrent runs with one key execute once; a late-answering winning claim changes nothing', async () => {
    await concurrentRuns(createEngine({ store: new MemoryStore() }), 'pay-mem');
    await concurrentRuns(createEngine({ store: new LateWinnerStore() }), 'pay-mem-late');
  });

  test('concurrent starts with one key queue one execution; the others replay its queued result', async () => {
    for (const late of [false, true]) {
      const engine = createEmbeddedEngine({ ...(late ? { store: new LateWinnerStore() } : {}) });
      try {
        const { def, calls } = counting(`start-mem-${late}`);
        const results = await Promise.all(
          Array.from({ length: 10 }, () => engine.start(def, {}, { idempotencyKey: 'k' })),
        );
        expectOneExecution(results);
        expect(results.every((r) => r.status === 'queued')).toBe(true);
        expect((await engine.wait(results[0]!.executionId, { timeoutMs: 5_000 }))?.status).toBe('completed');
        expect(calls.runs).toBe(1);
      } finally {
        await engine.close();
      }
    }
  });

  test('a run that cannot write its record: its concurrent replay ends the same way (no unobserved rejection)', async () => {
    const engine = createEngine({ store: new BrokenStore() });
    const def = reactor('throws')
      .step('s', { run: () => 1 })
      .build();
    const [first, second] = await Promise.allSettled([
      engine.run(def, {}, { idempotencyKey: 'x' }),
      engine.run(def, {}, { idempotencyKey: 'x' }),
    ]);
    // The replay ends exactly like the original (whatever the engine makes of a store that cannot save).
    expect(second?.status).toBe(first?.status);
    if (first?.status === 'fulfilled' && second?.status === 'fulfilled')
      expect(second.value).toEqual({ ...first.value, replay: true });
    if (first?.status === 'rejected' && second?.status === 'rejected') expect(second.reason).toBe(first.reason);
  });
});

describe('idempotency keys under concurrency, Redis', () => {
  const server = useRedisServer();

  test('concurrent runs and starts with one key: one execution, the rest replays', async () => {
    const runtime = createRedisRuntime({ url: server.url, prefix: 'idem1', reactors: [] });
    try {
      await concurrentRuns(runtime.engine, 'pay-redis');
      const { def } = counting('start-redis');
      const results = await Promise.all(
        Array.from({ length: 10 }, () => runtime.engine.start(def, {}, { idempotencyKey: 'k' })),
      );
      expectOneExecution(results);
      expect(results.every((r) => r.status === 'queued')).toBe(true);
    } finally {
      await runtime.close();
    }
  });
});
