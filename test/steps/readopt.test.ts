/**
 * R-10 / reference scenario 13: a step that parks in a worker releases only what it took; the
 * execution's reactor-level holds are kept across the park and re-adopted on resume without a
 * second acquisition (one `coordination.acquired` per key over the run, the rate limit charged
 * once) — or re-competed if they lapsed meanwhile. Over the contention cap the run fails and
 * the reactor-level lock is released. Embedded engine (memory backend, in-process worker pool).
 */
import { describe, expect, test } from 'vitest';
import { MemoryCoordinator, createEmbeddedEngine, reactor, type RunResult } from '../../src/index.js';
import '../../src/testing/vitest.js';
import { changeHolderEvery } from '../background/helpers.js';
import { OTHER, until } from './step-suite.js';

const unique = (name: string): string => `${name}:${Math.random().toString(36).slice(2, 10)}`;

function parent(parentKey: string, childKey: string, parentTtl: number) {
  return reactor('park-parent')
    .withLock({ key: () => parentKey, ttl: parentTtl })
    .withRateLimit({ key: () => `${parentKey}:rate`, limit: 100, per: '1h' })
    .step('prepare', { run: () => 'ready' })
    .step('child', { waitFor: ['prepare'], lock: { key: () => childKey, wait: 0 }, run: () => 'charged' })
    .build();
}

const acquiredOn = (r: RunResult | undefined, key: string): number =>
  r?.trace.filter((e) => e.type === 'coordination.acquired' && e.key === key).length ?? 0;

describe('reactor-level holds across a step park (R-10)', () => {
  test('kept while parked, re-adopted on resume: one acquisition, the rate limit charged once, the key free at the end', async () => {
    const [parentKey, childKey] = [unique('park:parent'), unique('park:child')];
    const coordinator = new MemoryCoordinator();
    await coordinator.lockAcquire({ key: childKey, holder: OTHER, ttlMs: 30_000 });
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 50, workerWaitMs: 0 } }); // an outside release wakes nobody: the fallback resumes it
    try {
      const started = await engine.start(parent(parentKey, childKey, 10_000), {});
      await until(async () => (await engine.result(started.executionId))?.status === 'parked');
      // Parked at the child step: the parent lock is still held by this execution.
      expect((await coordinator.lockState(parentKey))?.holder.executionId).toBe(started.executionId);
      expect((await coordinator.lockState(childKey))?.holder.owner).toBe(OTHER.owner);
      await coordinator.lockRelease(childKey, OTHER.owner);
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toHaveCompleted();
      expect(done).toHaveContendedAt('child', childKey);
      expect(acquiredOn(done, parentKey)).toBe(1);
      expect((await coordinator.rateState(`${parentKey}:rate`, 3_600_000)).count).toBe(1);
      expect(await coordinator.lockState(parentKey)).toBeUndefined();
      expect(await coordinator.lockState(childKey)).toBeUndefined();
    } finally {
      await engine.close();
    }
  });

  test('a parent lock that lapsed during the park is re-acquired; the rate limit is still charged once', async () => {
    const [parentKey, childKey] = [unique('park:parent'), unique('park:child')];
    const coordinator = new MemoryCoordinator();
    await coordinator.lockAcquire({ key: childKey, holder: OTHER, ttlMs: 30_000 });
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 400, workerWaitMs: 0 } }); // resumed by the fallback, after the parent lock's TTL
    try {
      const started = await engine.start(parent(parentKey, childKey, 100), {});
      await until(async () => (await engine.result(started.executionId))?.status === 'parked');
      await until(async () => (await coordinator.lockState(parentKey)) === undefined); // its TTL ran out while parked
      await coordinator.lockRelease(childKey, OTHER.owner);
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toHaveCompleted();
      expect(acquiredOn(done, parentKey)).toBe(2);
      expect((await coordinator.rateState(`${parentKey}:rate`, 3_600_000)).count).toBe(1);
      expect(await coordinator.lockState(parentKey)).toBeUndefined();
    } finally {
      await engine.close();
    }
  });

  test('over the contention cap (the child key changing hands between its polls) the run fails and the parent lock is released', async () => {
    const [parentKey, childKey] = [unique('park:parent'), unique('park:child')];
    const coordinator = new MemoryCoordinator();
    await coordinator.lockAcquire({ key: childKey, holder: OTHER, ttlMs: 30_000 });
    const stop = changeHolderEvery(coordinator, childKey, OTHER, 7);
    const engine = createEmbeddedEngine({
      coordinator,
      background: { parkFallbackMs: 20, workerWaitMs: 0, contentionCap: 1 },
    });
    try {
      const started = await engine.start(parent(parentKey, childKey, 10_000), {});
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toHaveFailedAt('child');
      expect(done?.trace.filter((e) => e.type === 'run.parked')).toHaveLength(1);
      expect(acquiredOn(done, parentKey)).toBe(1);
      expect(await coordinator.lockState(parentKey)).toBeUndefined();
      stop();
      await coordinator.lockRelease(childKey, OTHER.owner);
    } finally {
      stop();
      await engine.close();
    }
  });
});
