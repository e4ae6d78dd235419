/**
 * The JobLeases contract (docs/decisions/040): the Redis backend's one-script version and the
 * composition of Store + Coordinator calls must behave the same. Each test gets a fresh store,
 * coordinator and leases from the factory.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Coordinator } from '../../src/ports/coordinator.js';
import type { JobEnterRequest, JobLeases } from '../../src/ports/job-lease.js';
import { RECORD_VERSION, type ExecutionRecord, type Store } from '../../src/ports/store.js';

/** What one test works on. */
export interface JobLeaseHarness {
  readonly leases: JobLeases;
  readonly store: Store;
  readonly coordinator: Coordinator;
  close(): Promise<void>;
}

const T0 = Date.UTC(2026, 0, 1);
const record = (id: string, status: ExecutionRecord['status']): ExecutionRecord => ({
  v: RECORD_VERSION,
  id,
  rootId: id,
  reactor: 'R',
  status,
  input: { n: 1 },
  steps: {},
  rollbackFailures: [],
  createdAt: T0,
  updatedAt: T0,
});
const enter = (id: string, owner: string): JobEnterRequest => ({
  lease: { key: `execution:${id}`, holder: { owner, executionId: id }, ttlMs: 30_000 },
  executionId: id,
  cancel: { key: `cancel:${id}`, bucket: 'requested' },
});

export function describeJobLeaseContract(name: string, make: () => Promise<JobLeaseHarness>): void {
  describe(`JobLeases contract: ${name}`, () => {
    let h: JobLeaseHarness;
    beforeEach(async () => {
      h = await make();
    });
    afterEach(async () => {
      await h.close();
    });

    it('enterJob takes the liveness lock and reads the record and the cancel marker under it', async () => {
      await h.store.save(record('e1', 'pending'));
      const entered = await h.leases.enterJob(enter('e1', 'w1'));
      expect(entered).toEqual({ acquired: true, record: record('e1', 'pending'), cancelRequested: false });
      expect((await h.coordinator.lockState('execution:e1'))?.holder).toMatchObject({ owner: 'w1', executionId: 'e1' });

      await h.coordinator.periodMark({ key: 'cancel:e2', bucket: 'requested', ttlMs: 60_000 });
      expect(await h.leases.enterJob(enter('e2', 'w1'))).toEqual({
        acquired: true,
        record: undefined,
        cancelRequested: true,
      });
    });

    it('a second owner is refused with the holder and the lease left, and reads nothing', async () => {
      await h.store.save(record('e1', 'pending'));
      await h.leases.enterJob(enter('e1', 'w1'));
      const refused = await h.leases.enterJob(enter('e1', 'w2'));
      expect(refused.acquired).toBe(false);
      if (refused.acquired) return;
      expect(refused.holder).toMatchObject({ owner: 'w1', executionId: 'e1' });
      expect(refused.ttlMs).toBeGreaterThan(0);
      expect(refused.ttlMs).toBeLessThanOrEqual(30_000);
      expect('record' in refused).toBe(false);
    });

    it('the lock is the coordinator lock: a lockAcquire holder keeps enterJob out, and the other way round', async () => {
      const op = await h.coordinator.lockAcquire({
        key: 'execution:e1',
        holder: { owner: 'operator', executionId: 'e1' },
        ttlMs: 30_000,
      });
      expect(op.acquired).toBe(true);
      expect((await h.leases.enterJob(enter('e1', 'w1'))).acquired).toBe(false);
      await h.coordinator.lockRelease('execution:e1', 'operator');
      expect((await h.leases.enterJob(enter('e1', 'w1'))).acquired).toBe(true);
      expect(
        (await h.coordinator.lockAcquire({ key: 'execution:e1', holder: { owner: 'operator' }, ttlMs: 30_000 }))
          .acquired,
      ).toBe(false);
    });

    it('saveAndRelease writes the record (indexed under its new status), then frees the lock', async () => {
      await h.store.save(record('e1', 'pending'));
      await h.leases.enterJob(enter('e1', 'w1'));
      await h.leases.saveAndRelease(record('e1', 'completed'), 'execution:e1', 'w1');
      expect((await h.store.get('e1'))?.status).toBe('completed');
      expect((await h.store.list({ status: 'completed' })).records.map((r) => r.id)).toEqual(['e1']);
      expect(await h.coordinator.lockState('execution:e1')).toBeUndefined();
      const next = await h.leases.enterJob(enter('e1', 'w2'));
      expect(next.acquired && next.record?.status).toBe('completed');
    });

    it('saveAndRelease by an owner that lost the lock writes nothing, throws lease_lost, and leaves the holder alone', async () => {
      await h.store.save(record('e1', 'running'));
      await h.leases.enterJob(enter('e1', 'w1'));
      await expect(h.leases.saveAndRelease(record('e1', 'failed'), 'execution:e1', 'w2')).rejects.toMatchObject({
        code: 'lease_lost',
        details: { executionId: 'e1' },
      });
      expect((await h.store.get('e1'))?.status).toBe('running');
      expect((await h.store.list({ status: 'failed' })).records).toEqual([]);
      expect((await h.coordinator.lockState('execution:e1'))?.holder.owner).toBe('w1');
    });

    it('saveFenced writes (and indexes) while the owner holds the lease, and keeps the lease', async () => {
      await h.store.save(record('e1', 'pending'));
      await h.leases.enterJob(enter('e1', 'w1'));
      await h.leases.saveFenced(record('e1', 'running'), 'execution:e1', 'w1');
      await h.leases.saveFenced(
        { ...record('e1', 'running'), steps: { a: { status: 'completed', attempts: 1 } } },
        'execution:e1',
        'w1',
      );
      expect((await h.store.get('e1'))?.steps).toEqual({ a: { status: 'completed', attempts: 1 } });
      expect((await h.store.list({ status: 'running' })).records.map((r) => r.id)).toEqual(['e1']);
      expect((await h.coordinator.lockState('execution:e1'))?.holder.owner).toBe('w1');
    });

    it('saveFenced by an owner that lost the lease (expired or taken over) writes nothing and throws lease_lost', async () => {
      await h.store.save(record('e1', 'running'));
      await expect(h.leases.saveFenced(record('e1', 'failed'), 'execution:e1', 'w1')).rejects.toMatchObject({
        code: 'lease_lost',
      });
      await h.leases.enterJob(enter('e1', 'w2'));
      await expect(h.leases.saveFenced(record('e1', 'failed'), 'execution:e1', 'w1')).rejects.toMatchObject({
        code: 'lease_lost',
      });
      expect((await h.store.get('e1'))?.status).toBe('running');
      expect((await h.store.list({ status: 'failed' })).records).toEqual([]);
    });

    it('re-entry by the same owner is counted like lockAcquire; saveAndRelease takes one level', async () => {
      await h.leases.enterJob(enter('e1', 'w1'));
      await h.leases.enterJob(enter('e1', 'w1'));
      expect((await h.coordinator.lockState('execution:e1'))?.nesting).toBe(2);
      await h.leases.saveAndRelease(record('e1', 'running'), 'execution:e1', 'w1');
      expect((await h.coordinator.lockState('execution:e1'))?.nesting).toBe(1);
    });

    it('a record over the size limit is refused and nothing is released', async () => {
      await h.leases.enterJob(enter('e1', 'w1'));
      const huge = { ...record('e1', 'completed'), value: 'x'.repeat(600 * 1024) };
      await expect(h.leases.saveAndRelease(huge, 'execution:e1', 'w1')).rejects.toMatchObject({
        code: 'record_too_large',
      });
      expect((await h.coordinator.lockState('execution:e1'))?.holder.owner).toBe('w1');
    });
  });
}
