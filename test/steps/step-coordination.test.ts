/**
 * Step-scoped coordination: the shared in-process scenarios (`step-suite.ts`) on every backend of
 * the matrix, and the worker path on the embedded engine (park, wake, cap).
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { MemoryCoordinator, createEmbeddedEngine, reactor, type RunResult } from '../../src/index.js';
import '../../src/testing/vitest.js';
import { describeOnBackends } from '../support/backend-matrix.js';
import { changeHolderEvery } from '../background/helpers.js';
import { describeStepCoordination, gate, OTHER, until } from './step-suite.js';

const b = { key: (name: string): string => `${name}:${Math.random().toString(36).slice(2, 10)}` };

describeOnBackends('step-scoped coordination', (backend) => describeStepCoordination(() => backend.rig()));

// The worker path below runs on the embedded engine alone: it drives a `MemoryCoordinator` from the test.

describe('in a worker, contention at a step parks the execution (R-8)', () => {
  function contended(key: string, calls: string[]) {
    return reactor('pay-in-worker')
      .step('audit', { run: () => calls.push('audit'), undo: () => void calls.push('undo audit') })
      .step('charge', {
        waitFor: ['audit'],
        lock: { key: () => key, wait: 0 },
        run: () => calls.push('charge'),
        compensate: () => void calls.push('compensate charge'),
      })
      .step('notify', { waitFor: ['charge'], run: () => calls.push('notify') })
      .build();
  }
  const parkedOf = (r: RunResult | undefined): unknown => (r?.status === 'parked' ? r.waitingFor : undefined);

  test('parked with what it waits for, nothing compensated; after the release it completes without re-running completed steps', async () => {
    const key = b.key('worker-account');
    const coordinator = new MemoryCoordinator();
    await coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 30, workerWaitMs: 0 } });
    const calls: string[] = [];
    try {
      const started = await engine.start(contended(key, calls), {});
      await until(async () => parkedOf(await engine.result(started.executionId)) !== undefined);
      expect(parkedOf(await engine.result(started.executionId))).toMatchObject({
        primitive: 'lock',
        key,
        step: 'charge',
      });
      expect(calls).toEqual(['audit']);
      await coordinator.lockRelease(key, 'someone-else');
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done?.status).toBe('completed');
      expect(calls).toEqual(['audit', 'charge', 'notify']);
      expect(done?.steps.charge).toMatchObject({ status: 'completed', attempts: 1 });
      expect(await coordinator.lockState(key)).toBeUndefined();
    } finally {
      await engine.close();
    }
  });

  test('the step-level release of another execution wakes the parked one (the fallback is far away)', async () => {
    const key = b.key('worker-wake');
    const coordinator = new MemoryCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 60_000, workerWaitMs: 0 } });
    const inside = gate();
    const leave = gate();
    let charges = 0;
    const r = reactor('wake-on-step-release')
      .input({ n: z.number() })
      .step('charge', {
        lock: { key: () => key, wait: 0 },
        run: async ({ n }) => {
          charges++;
          if (n === 1) {
            inside.open();
            await leave.promise;
          }
        },
      })
      .build();
    try {
      const first = await engine.start(r, { n: 1 });
      await inside.promise;
      const second = await engine.start(r, { n: 2 });
      await until(async () => parkedOf(await engine.result(second.executionId)) !== undefined);
      leave.open();
      const [a, c] = await Promise.all([
        engine.wait(first.executionId, { timeoutMs: 5_000, pollMs: 5 }),
        engine.wait(second.executionId, { timeoutMs: 5_000, pollMs: 5 }),
      ]);
      expect([a?.status, c?.status]).toEqual(['completed', 'completed']);
      expect(charges).toBe(2);
      expect(c?.trace.filter((e) => e.type === 'run.woken')).toHaveLength(1);
      // park and wake name the step and the key; acquire and release are attributed to the step.
      expect(
        c?.trace
          .filter((e) => e.type === 'run.parked' || e.type === 'run.woken')
          .map((e) => [e.type, (e as { step?: string }).step, (e as { key?: string }).key]),
      ).toEqual([
        ['run.parked', 'charge', key],
        ['run.woken', 'charge', key],
      ]);
      expect(c).toHaveContendedAt('charge', key);
      const attributed = c?.trace
        .filter((e) => e.type === 'coordination.acquired' || e.type === 'coordination.released')
        .map((e) => [e.type, (e as { step?: string }).step, (e as { key?: string }).key]);
      expect(attributed).toEqual([
        ['coordination.acquired', 'charge', key],
        ['coordination.released', 'charge', key],
      ]);
    } finally {
      await engine.close();
    }
  });

  test('over the contention cap (the key changing hands between its polls) it fails at the step and rolls back like in-process (the contended step is not compensated)', async () => {
    const key = b.key('worker-capped');
    const coordinator = new MemoryCoordinator();
    await coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
    const stop = changeHolderEvery(coordinator, key, OTHER, 7);
    const engine = createEmbeddedEngine({
      coordinator,
      background: { parkFallbackMs: 20, workerWaitMs: 0, contentionCap: 2 },
    });
    const calls: string[] = [];
    try {
      const started = await engine.start(contended(key, calls), {});
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done?.status).toBe('failed');
      if (done?.status !== 'failed') return;
      expect(done.failedStep).toBe('charge');
      expect(done.error).toMatchObject({ code: 'contention', details: { primitive: 'lock', key, step: 'charge' } });
      expect(done.trace.filter((e) => e.type === 'run.parked')).toHaveLength(2);
      expect(calls).toEqual(['audit', 'undo audit']);
      stop();
      await coordinator.lockRelease(key, 'someone-else');
    } finally {
      stop();
      await engine.close();
    }
  });
});

describe('step-level ordered positions in a worker (R-15)', () => {
  test('an execution parked at an ordered step keeps its position: executions pass in arrival order and no new position is taken on resume', async () => {
    const key = b.key('ord-park');
    const coordinator = new MemoryCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 60_000, workerWaitMs: 0 } });
    const inside = gate();
    const leave = gate();
    const log: number[] = [];
    const r = reactor('ord-park')
      .input({ n: z.number() })
      .step('seq', {
        args: ($) => ({ n: $.input('n') }),
        orderedLock: { key: () => key },
        run: async ({ n }) => {
          log.push(n);
          if (n === 1) {
            inside.open();
            await leave.promise;
          }
        },
      })
      .build();
    try {
      const first = await engine.start(r, { n: 1 });
      await inside.promise;
      const second = await engine.start(r, { n: 2 });
      await until(async () => (await engine.result(second.executionId))?.status === 'parked');
      const third = await engine.start(r, { n: 3 });
      await until(async () => (await engine.result(third.executionId))?.status === 'parked');
      expect((await coordinator.orderedState(key)).issued).toBe(3);
      leave.open();
      const done = await Promise.all(
        [first, second, third].map((x) => engine.wait(x.executionId, { timeoutMs: 5_000, pollMs: 5 })),
      );
      expect(done.map((d) => d?.status)).toEqual(['completed', 'completed', 'completed']);
      expect(log).toEqual([1, 2, 3]);
      expect(done[1]).toHaveContendedAt('seq', key);
      const nonces = done.map((d) =>
        d?.trace
          .filter((e) => e.type === 'coordination.acquired' && e.primitive === 'ordered_lock')
          .map((e) => (e as { nonce?: number }).nonce),
      );
      expect(nonces).toEqual([[1], [2], [3]]);
      expect((await coordinator.orderedState(key)).drained).toBe(true);
    } finally {
      await engine.close();
    }
  });
});

describe('rollback in a worker (R-17, R-18)', () => {
  test('an undo whose key is busy waits in the worker (it never parks), then runs holding the key', async () => {
    const key = b.key('worker-undo');
    const coordinator = new MemoryCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 60_000, workerWaitMs: 0 } });
    let undoneHolding: string | undefined;
    const r = reactor('worker-undo')
      .step('charge', {
        lock: { key: () => key, wait: 0 },
        run: () => 'charged',
        undo: async () => void (undoneHolding = (await coordinator.lockState(key))?.holder.step),
      })
      .step('notify', {
        waitFor: ['charge'],
        run: async () => {
          await coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
          setTimeout(() => void coordinator.lockRelease(key, OTHER.owner), 100);
          throw new Error('notify failed');
        },
      })
      .build();
    try {
      const started = await engine.start(r, {});
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toHaveFailedAt('notify');
      expect(done).toHaveUndone(['charge']);
      expect(done?.rollbackFailures).toEqual([]);
      expect(done?.trace.some((e) => e.type === 'run.parked')).toBe(false);
      expect(undoneHolding).toBe('charge');
    } finally {
      await engine.close();
    }
  });
});
