/** Regression tests for background-execution fixes (cancel picked up by a later job, semaphore parks, wake events). */
import { expect, test } from 'vitest';
import { createEmbeddedEngine, MemoryCoordinator, reactor, type Store } from '../../src/index.js';

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

test('a cancel requested while a worker runs the execution is picked up by its next job, which rolls back what completed', async () => {
  const log: string[] = [];
  const inB = gate();
  const failB = gate();
  const r = reactor('cancel-later')
    .step('a', { run: () => 'A', undo: () => void log.push('undo a') })
    .step('b', {
      waitFor: ['a'],
      retry: { maxAttempts: 3, baseDelay: 50 },
      run: async () => (inB.open(), await failB.promise, Promise.reject(new Error('retry me'))),
    })
    .build();
  const engine = createEmbeddedEngine();
  const queued = await engine.start(r, {});
  await inB.promise;
  expect((await engine.cancel(queued.executionId, { reason: 'stop it' })).status).toBe('running'); // a request: a worker holds it
  failB.open();
  const done = await engine.wait(queued.executionId, { timeoutMs: 5_000 });
  expect(done).toMatchObject({ status: 'cancelled' });
  expect(log).toEqual(['undo a']);
  await engine.close();
});

test('a parked semaphore waiter sleeps until a release or its fallback: it does not wake itself and burn its contention cap', async () => {
  const coordinator = new MemoryCoordinator();
  await coordinator.semaphoreAcquire({ key: 'pool', holder: { owner: 'other' }, limit: 1, ttlMs: 60_000 });
  const engine = createEmbeddedEngine({
    coordinator,
    background: { contentionCap: 2, parkFallbackMs: 60_000, workerWaitMs: 0 },
  });
  const r = reactor('sem')
    .withSemaphore({ key: () => 'pool', limit: 1 })
    .step('s', { run: () => 1 })
    .build();
  const queued = await engine.start(r, {});
  await new Promise((resolve) => setTimeout(resolve, 400));
  expect((await engine.result(queued.executionId))?.status).toBe('parked');
  await engine.cancel(queued.executionId);
  await engine.close();
});

test('an execution woken by a release records run.woken with the key; one resumed by its fallback does not', async () => {
  const engine = createEmbeddedEngine({ background: { parkFallbackMs: 60_000, workerWaitMs: 0 } });
  const hold = gate();
  const holder = reactor('holder')
    .withLock({ key: () => 'W' })
    .step('s', { run: () => hold.promise })
    .build();
  const waiter = reactor('waiter')
    .withLock({ key: () => 'W' })
    .step('s', { run: () => 1 })
    .build();
  const first = await engine.start(holder, {});
  await new Promise((resolve) => setTimeout(resolve, 50));
  const second = await engine.start(waiter, {});
  await expect.poll(async () => (await engine.result(second.executionId))?.status).toBe('parked');
  hold.open();
  const done = await engine.wait(second.executionId, { timeoutMs: 5_000 });
  expect(done?.status).toBe('completed');
  expect(done?.trace.find((e) => e.type === 'run.woken')).toMatchObject({ primitive: 'lock', key: 'W' });
  expect((await engine.wait(first.executionId))?.trace.some((e) => e.type === 'run.woken')).toBe(false);
  await engine.close();
});

test('a long step shows its execution as running within one checkpoint interval, and fast runs write only their start and end', async () => {
  const { MemoryStore } = await import('../../src/index.js');
  const store = new MemoryStore();
  let saves = 0;
  const counting: Store = {
    maxRecordBytes: store.maxRecordBytes,
    save: (record) => (saves++, store.save(record)),
    get: (id) => store.get(id),
    list: (filter) => store.list(filter),
    claimIdempotency: (reactor, key, id) => store.claimIdempotency(reactor, key, id),
  };
  const engine = createEmbeddedEngine({ store: counting, checkpointIntervalMs: 50 });
  const release = gate();
  const slow = reactor('slow')
    .step('wait', { run: () => release.promise })
    .build();
  const queued = await engine.start(slow, {});
  await expect.poll(async () => (await engine.result(queued.executionId))?.status, { timeout: 2_000 }).toBe('running');
  release.open();
  expect((await engine.wait(queued.executionId))?.status).toBe('completed');

  const fast = reactor('fast')
    .step('a', { run: () => 1 })
    .step('b', { waitFor: ['a'], run: () => 2 })
    .step('c', { waitFor: ['b'], run: () => 3 })
    .build();
  saves = 0;
  const done = await engine.run(fast, {});
  expect(done.status).toBe('completed');
  expect(saves).toBe(2); // running, completed
  await engine.close();
});
