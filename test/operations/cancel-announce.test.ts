/**
 * A cancel asked of an engine that does not run the execution reaches the engine that does
 * (decision 053): over a shared memory coordinator, and over Redis between two engines on their
 * own connections. The run stops at its next step boundary, rolls back, and ends `cancelled` with
 * the reason the cancel was asked with (decision 106).
 */
import { describe, expect, test } from 'vitest';
import {
  createEngine,
  MemoryCoordinator,
  MemoryStore,
  reactor,
  type Coordinator,
  type Store,
} from '../../src/index.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Runs a two-step reactor inline on `runner`, cancels it from `operator`, and checks the outcome. */
async function cancelAcross(
  runner: { store: Store; coordinator: Coordinator },
  operator: { store: Store; coordinator: Coordinator },
): Promise<void> {
  const log: string[] = [];
  const inStep = gate();
  const release = gate();
  const r = reactor('long-inline')
    .step('first', {
      run: async () => (inStep.open(), await release.promise, 1),
      undo: () => void log.push('undo first'),
    })
    .step('second', { waitFor: ['first'], run: () => void log.push('second ran') })
    .build();
  const engine = createEngine(runner);
  const other = createEngine({ ...operator, reactors: [r] });
  const running = engine.run(r, {});
  await inStep.promise;
  const executionId = (await operator.store.list()).records[0]!.id;
  expect((await other.cancel(executionId, { reason: 'from elsewhere' })).status).toBe('running'); // not ours: a request
  // The announcement travels while the first step still runs; only then does the step end.
  for (let i = 0; i < 200 && !(await runner.coordinator.periodIsMarked(`cancel:${executionId}`, 'requested')); i++)
    await new Promise((resolve) => setTimeout(resolve, 5));
  await new Promise((resolve) => setTimeout(resolve, 50));
  release.open();
  const result = await running;
  // The reason travels with the request (decision 106).
  expect(result).toMatchObject({ status: 'cancelled', reason: 'from elsewhere' });
  expect(log).toEqual(['undo first']);
}

describe('cancel announced to the engine running the execution', () => {
  test('two engines over one memory coordinator and store', async () => {
    const store = new MemoryStore();
    const coordinator = new MemoryCoordinator();
    await cancelAcross({ store, coordinator }, { store, coordinator });
  });

  describe('over Redis', () => {
    const server = useRedisServer();

    test('two engines on their own connections (a pub/sub announcement)', async () => {
      const prefix = `ca-${crypto.randomUUID().slice(0, 8)}`;
      const a = createRedisBackend({ url: server.url, prefix });
      const b = createRedisBackend({ url: server.url, prefix });
      try {
        await cancelAcross(a, b);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
  });
});
