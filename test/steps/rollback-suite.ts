/**
 * Rollback under a step's own keys (R-17, R-18, SC-009, reference scenario 14), run against
 * every backend: compensate and undo re-take the step's lock and semaphore, never its rate
 * limit / period / ordered lock, and report `coordination_unavailable` when they cannot.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { reactor, type RollbackFailure } from '../../src/index.js';
import '../../src/testing/vitest.js';
import type { EngineRig as Backend } from '../support/backend-matrix.js';

const OTHER = { owner: 'someone-else' };

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

export function describeStepRollback(makeBackend: () => Promise<Backend>): void {
  let b: Backend;
  beforeAll(async () => {
    b = await makeBackend();
  });
  afterAll(async () => b.close());

  /** audit → charge (locked on the account) → notify (fails when told to). */
  function payment(
    key: string,
    hooks: {
      undo?: () => Promise<void> | void;
      compensate?: () => Promise<void> | void;
      chargeBody?: () => Promise<void> | void;
      notify?: () => Promise<void> | void;
      rollbackWait?: number;
      ttl?: number;
      rate?: boolean;
    },
  ) {
    return reactor('rbc')
      .input({ accountId: z.string() })
      .step('charge', {
        args: ($) => ({ accountId: $.input('accountId') }),
        lock: {
          key: () => key,
          wait: '10s',
          ...(hooks.ttl === undefined ? {} : { ttl: hooks.ttl }),
          ...(hooks.rollbackWait === undefined ? {} : { rollbackWait: hooks.rollbackWait }),
        },
        ...(hooks.rate ? { rateLimit: { key: () => `${key}:rate`, limit: 1, per: '1h' } } : {}),
        run: async () => {
          await hooks.chargeBody?.();
          return 'charged';
        },
        ...(hooks.undo ? { undo: hooks.undo } : {}),
        ...(hooks.compensate ? { compensate: hooks.compensate } : {}),
      })
      .step('notify', { waitFor: ['charge'], run: async () => hooks.notify?.() })
      .build();
  }

  describe('14. rollback waits for the key', () => {
    test('another owner holds the key briefly: the undo waits for it, runs holding it, and nothing is reported', async () => {
      const key = b.key('rbc:acct');
      let undoneWhileHeldBy: string | undefined;
      const r = payment(key, {
        ttl: 2_000,
        notify: async () => {
          await b.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
          setTimeout(() => void b.coordinator.lockRelease(key, OTHER.owner), 150);
          throw new Error('notify failed');
        },
        undo: async () => {
          undoneWhileHeldBy = (await b.coordinator.lockState(key))?.holder.step;
        },
      });
      const { engine } = b.engine();
      const result = await engine.run(r, { accountId: 'a' });
      expect(result).toHaveFailedAt('notify');
      expect(result).toHaveUndone(['charge']);
      expect(result.rollbackFailures).toEqual([]);
      expect(undoneWhileHeldBy).toBe('charge');
      expect(await b.coordinator.lockState(key)).toBeUndefined();
    });

    test('held past the rollback wait: the undo does not run and is reported as coordination_unavailable (JSON round trip)', async () => {
      const key = b.key('rbc:acct');
      let undone = 0;
      const r = payment(key, {
        rollbackWait: 200,
        notify: async () => {
          await b.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
          throw new Error('notify failed');
        },
        undo: () => void undone++,
      });
      const { engine, events } = b.engine();
      const started = Date.now();
      const result = await engine.run(r, { accountId: 'a' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(undone).toBe(0);
      expect(result).toHaveRollbackFailure({ step: 'charge', kind: 'undo', key, reason: 'coordination_unavailable' });
      const failure = result.rollbackFailures[0]!;
      expect(failure.message).toContain('within 200 ms');
      expect(JSON.parse(JSON.stringify(result.rollbackFailures)) as RollbackFailure[]).toEqual(result.rollbackFailures);
      expect((await b.store.get(result.executionId))?.rollbackFailures).toEqual(result.rollbackFailures);
      expect(
        events.some((e) => e.type === 'step.undo_failed' && e.reason === 'coordination_unavailable' && e.key === key),
      ).toBe(true);
      expect(events.some((e) => e.type === 'step.undone')).toBe(false);
      expect((await b.coordinator.lockState(key))?.holder.owner).toBe(OTHER.owner);
      await b.coordinator.lockRelease(key, OTHER.owner);
    });

    test('a compensate that cannot take the key is reported the same way (kind compensate)', async () => {
      const key = b.key('rbc:acct');
      let compensated = 0;
      const r = reactor('rbc-comp')
        .step('charge', {
          lock: { key: () => key, wait: 0, rollbackWait: 50 },
          retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 80 },
          run: () => {
            // Between this attempt and the retry, another owner takes the key and keeps it.
            setTimeout(() => void b.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 }), 20);
            throw new Error('transient');
          },
          compensate: () => void compensated++,
        })
        .build();
      const { engine } = b.engine();
      const result = await engine.run(r, {});
      expect(result).toHaveFailedAt('charge');
      expect(compensated).toBe(0);
      expect(result).toHaveRollbackFailure({
        step: 'charge',
        kind: 'compensate',
        key,
        reason: 'coordination_unavailable',
      });
      expect(result.rollbackFailures[0]?.message).toContain('within 50 ms');
      await b.coordinator.lockRelease(key, OTHER.owner);
    });
  });

  test('SC-009: while a compensation runs under the step lock, a concurrent execution cannot enter the forward body', async () => {
    const key = b.key('rbc:acct');
    const inCompensation = gate();
    const finishCompensation = gate();
    const log: string[] = [];
    let failFirst = true;
    const r = reactor('rbc-sc009')
      .step('charge', {
        lock: { key: () => key, wait: '10s' },
        run: () => {
          log.push('charge');
          if (failFirst) {
            failFirst = false;
            throw new Error('psp down');
          }
          return 'ok';
        },
        compensate: async () => {
          log.push('compensate:start');
          inCompensation.open();
          await finishCompensation.promise;
          log.push('compensate:end');
        },
      })
      .build();
    const { engine } = b.engine();
    const first = engine.run(r, {});
    await inCompensation.promise;
    await expect(b.coordinator).toHaveHoldAttributedTo(key, 'charge');
    const second = engine.run(r, {});
    await b.pass(100);
    expect(log).toEqual(['charge', 'compensate:start']);
    finishCompensation.open();
    const [a, c] = await Promise.all([first, second]);
    expect(a).toHaveFailedAt('charge');
    expect(a).toHaveCompensated(['charge']);
    expect(c).toHaveCompleted();
    expect(log).toEqual(['charge', 'compensate:start', 'compensate:end', 'charge']);
  });

  test('rollback never re-takes the rate limit (or period / ordered lock): the undo runs with the window full', async () => {
    const key = b.key('rbc:acct');
    let undone = 0;
    const r = payment(key, {
      rate: true,
      notify: () => {
        throw new Error('notify failed');
      },
      undo: () => void undone++,
    });
    const { engine } = b.engine();
    const result = await engine.run(r, { accountId: 'a' });
    expect(result).toHaveUndone(['charge']);
    expect(undone).toBe(1);
    expect(result.rollbackFailures).toEqual([]);
    await expect(b.coordinator).toHaveRateCount(`${key}:rate`, 3_600_000, 1);
  });

  test('a step whose body ran, then whose retry lost contention, is compensated (it started)', async () => {
    const key = b.key('rbc:retry');
    const calls: string[] = [];
    const r = reactor('rbc-retry')
      .step('charge', {
        lock: { key: () => key, wait: 0 },
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 80 },
        run: () => {
          calls.push('charge');
          // Between this attempt and the retry, another owner takes the key for a moment.
          setTimeout(() => void b.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 300 }), 20);
          throw new Error('transient');
        },
        compensate: () => void calls.push('compensate'),
      })
      .build();
    const { engine } = b.engine();
    const result = await engine.run(r, {});
    expect(result).toHaveFailedAt('charge');
    expect(result).toHaveContendedAt('charge', key);
    expect(calls).toEqual(['charge', 'compensate']);
    expect(result.steps.charge?.attempts).toBe(1);
    expect(result.trace.some((e) => e.type === 'step.failed' && e.started)).toBe(true);
    expect(result.rollbackFailures).toEqual([]);
  });
}
