/**
 * The FanOutLedger contract: one suite every fan-out ledger must pass (memory and Redis). Each
 * test gets a fresh ledger from the factory.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FanOutError } from '../../src/errors.js';
import type { FanOutLedger } from '../../src/ports/fanout.js';

/** A fresh ledger under test. */
export interface LedgerHarness {
  readonly ledger: FanOutLedger;
  close(): Promise<void>;
}

export function describeFanOutLedgerContract(name: string, make: () => Promise<LedgerHarness>): void {
  describe(`FanOutLedger contract: ${name}`, () => {
    let harness: LedgerHarness;
    let ledger: FanOutLedger;
    beforeEach(async () => {
      harness = await make();
      ledger = harness.ledger;
    });
    afterEach(async () => harness.close());

    it('opens once: the first batch is dispatched, a second open changes nothing', async () => {
      expect(await ledger.open('m', { total: 5, batchSize: 2, atomic: true })).toEqual({ next: 2, created: true });
      expect(await ledger.open('m', { total: 9, batchSize: 9, atomic: false })).toEqual({ next: 2, created: false });
      expect(await ledger.snapshot('m')).toEqual({
        total: 5,
        next: 2,
        settled: 0,
        failed: 0,
        stopped: false,
        done: false,
        phase: 'collect',
        target: -1,
        statuses: ['pending', 'pending', 'pending', 'pending', 'pending'],
      });
      expect(await ledger.open('small', { total: 1, batchSize: 50, atomic: true })).toEqual({ next: 1, created: true });
      expect(await ledger.snapshot('nothing')).toBeUndefined();
    });

    it('an empty map is done at once', async () => {
      await ledger.open('m', { total: 0, batchSize: 3, atomic: true });
      expect(await ledger.snapshot('m')).toMatchObject({ total: 0, next: 0, done: true, statuses: [] });
    });

    it('each settlement is counted once and claims the next element; a repeat answers the same claim', async () => {
      await ledger.open('m', { total: 3, batchSize: 1, atomic: false });
      expect(await ledger.settle('m', 0, 'completed')).toEqual({
        first: true,
        claim: 1,
        done: false,
        wakeJob: undefined,
        rollback: false,
      });
      expect(await ledger.settle('m', 0, 'failed')).toEqual({
        first: false,
        claim: 1,
        done: false,
        wakeJob: undefined,
        rollback: false,
      });
      expect(await ledger.settle('m', 1, 'failed')).toMatchObject({ first: true, claim: 2, done: false });
      expect(await ledger.settle('m', 2, 'skipped')).toMatchObject({ first: true, claim: -1, done: true });
      expect(await ledger.snapshot('m')).toMatchObject({
        settled: 3,
        failed: 1,
        stopped: false,
        done: true,
        statuses: ['completed', 'failed', 'skipped'],
      });
    });

    it('atomic: the first failure stops dispatching; dispatched elements settle (not started ones too), then it is done', async () => {
      await ledger.open('m', { total: 6, batchSize: 3, atomic: true });
      expect(await ledger.settle('m', 1, 'failed')).toMatchObject({ claim: -1, done: false });
      expect(await ledger.settle('m', 0, 'completed')).toMatchObject({ claim: -1, done: false });
      expect(await ledger.settle('m', 2, 'not_started')).toMatchObject({ claim: -1, done: true });
      expect(await ledger.snapshot('m')).toMatchObject({
        next: 3,
        settled: 3,
        stopped: true,
        done: true,
        statuses: ['completed', 'failed', 'not_started', 'pending', 'pending', 'pending'],
      });
    });

    it('a settlement that completes the map answers the wake job registered before it', async () => {
      await ledger.open('m', { total: 2, batchSize: 2, atomic: true });
      expect(await ledger.register('m', 'parent:2', 'collect')).toMatchObject({
        done: false,
        settled: 0,
        phase: 'collect',
      });
      await ledger.settle('m', 0, 'completed');
      expect(await ledger.settle('m', 1, 'completed')).toEqual({
        first: true,
        claim: -1,
        done: true,
        wakeJob: 'parent:2',
        rollback: false,
      });
      // A registration after the last settlement sees the map done.
      expect(await ledger.register('m', 'parent:3', 'collect')).toMatchObject({ done: true });
    });

    it('rollback: the target is the highest completed element; undone passes the turn down, once', async () => {
      await ledger.open('m', { total: 5, batchSize: 5, atomic: true });
      for (const [i, s] of [
        [0, 'completed'],
        [1, 'completed'],
        [2, 'failed'],
        [3, 'completed'],
        [4, 'skipped'],
      ] as const)
        await ledger.settle('m', i, s);
      expect(await ledger.register('m', 'parent:4', 'rollback')).toMatchObject({ phase: 'rollback', target: 3 });
      expect(await ledger.undone('m', 3)).toEqual({ target: 1, wakeJob: 'parent:4' });
      expect(await ledger.undone('m', 3)).toEqual({ target: 1, wakeJob: 'parent:4' });
      expect(await ledger.undone('m', 1)).toEqual({ target: 0, wakeJob: 'parent:4' });
      expect(await ledger.undone('m', 0)).toEqual({ target: -1, wakeJob: 'parent:4' });
      expect((await ledger.snapshot('m'))?.statuses).toEqual(['undone', 'undone', 'failed', 'undone', 'skipped']);
      // The phase never goes back.
      expect(await ledger.register('m', 'parent:5', 'collect')).toMatchObject({ phase: 'rollback', target: -1 });
    });

    it('rollback: an element completing after the rollback began (a cancel) is the turn until undone', async () => {
      await ledger.open('m', { total: 6, batchSize: 6, atomic: false });
      for (const i of [0, 1, 3]) await ledger.settle('m', i, 'completed');
      expect(await ledger.register('m', 'p:2', 'rollback')).toMatchObject({ target: 3 });
      expect(await ledger.undone('m', 3)).toEqual({ target: 1, wakeJob: 'p:2' });
      await ledger.settle('m', 5, 'completed'); // above the turn: it undoes itself
      expect(await ledger.element('m', 5)).toMatchObject({ status: 'completed', target: 5 });
      expect((await ledger.snapshot('m'))?.target).toBe(5);
      expect(await ledger.undone('m', 5)).toEqual({ target: 1, wakeJob: 'p:2' });
      expect(await ledger.undone('m', 1)).toEqual({ target: 0, wakeJob: 'p:2' });
      await ledger.settle('m', 4, 'completed');
      expect(await ledger.element('m', 2)).toMatchObject({ status: 'pending', target: 4 });
      expect(await ledger.undone('m', 4)).toEqual({ target: 0, wakeJob: 'p:2' });
      expect(await ledger.undone('m', 0)).toEqual({ target: -1, wakeJob: 'p:2' });
      expect(await ledger.element('m', 0)).toMatchObject({ status: 'undone', target: -1 });
    });

    it('element reads one element cheaply: phase, stop, its status and, when rolling back, the turn', async () => {
      expect(await ledger.element('m', 0)).toBeUndefined();
      await ledger.open('m', { total: 4, batchSize: 4, atomic: true });
      await ledger.settle('m', 0, 'completed');
      await ledger.settle('m', 2, 'completed');
      expect(await ledger.element('m', 0)).toEqual({
        phase: 'collect',
        stopped: false,
        status: 'completed',
        target: -1,
      });
      await ledger.settle('m', 1, 'failed');
      expect(await ledger.element('m', 3)).toEqual({ phase: 'collect', stopped: true, status: 'pending', target: -1 });
      await ledger.register('m', 'p:2', 'rollback');
      expect(await ledger.element('m', 1)).toEqual({ phase: 'rollback', stopped: true, status: 'failed', target: 2 });
    });

    it('a rollback started while elements run (a cancel): later settlements claim nothing and say so', async () => {
      await ledger.open('m', { total: 5, batchSize: 2, atomic: false });
      await ledger.register('m', '', 'rollback');
      expect(await ledger.settle('m', 0, 'completed')).toEqual({
        first: true,
        claim: -1,
        done: false,
        wakeJob: undefined,
        rollback: true,
      });
    });

    it('an unknown map or element is a FanOutError (fan_out_unknown)', async () => {
      await expect(ledger.settle('nope', 0, 'completed')).rejects.toSatisfy(
        (e) => e instanceof FanOutError && e.code === 'fan_out_unknown',
      );
      await expect(ledger.register('nope', 'j', 'collect')).rejects.toBeInstanceOf(FanOutError);
      await ledger.open('m', { total: 2, batchSize: 1, atomic: true });
      await expect(ledger.settle('m', 2, 'completed')).rejects.toBeInstanceOf(FanOutError);
      await expect(ledger.undone('m', -1)).rejects.toBeInstanceOf(FanOutError);
    });

    it('concurrent settlements of distinct elements claim distinct elements and count every one', async () => {
      await ledger.open('m', { total: 40, batchSize: 10, atomic: false });
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => ledger.settle('m', i, 'completed')));
      const claims = replies.map((r) => r.claim).sort((a, b) => a - b);
      expect(claims).toEqual(Array.from({ length: 10 }, (_, i) => 10 + i));
      expect(await ledger.snapshot('m')).toMatchObject({ next: 20, settled: 10 });
    });
  });
}
