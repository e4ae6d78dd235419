/**
 * {@link JobLeases} composed from plain `Store` and `Coordinator` calls: what the engine uses
 * when the backend has no single-round-trip version (the memory backend, a third-party one).
 *
 * @module
 */
import { LeaseLostError } from '../../errors.js';
import type { Coordinator } from '../../ports/coordinator.js';
import type { JobLeases } from '../../ports/job-lease.js';
import type { Store } from '../../ports/store.js';

/** The liveness lease of a job over separate store and coordinator calls (docs/decisions/040). */
export function composeJobLeases(
  store: Pick<Store, 'get' | 'save'>,
  coordinator: Pick<Coordinator, 'lockAcquire' | 'lockRelease' | 'lockState' | 'periodIsMarked'>,
): JobLeases {
  const fence = async (record: { readonly id: string }, key: string, owner: string): Promise<void> => {
    if ((await coordinator.lockState(key))?.holder.owner !== owner) throw new LeaseLostError(record.id, 'taken_over');
  };
  return {
    async enterJob(request) {
      const live = await coordinator.lockAcquire(request.lease);
      if (!live.acquired) return live;
      const [record, cancelRequested] = await Promise.all([
        store.get(request.executionId),
        coordinator.periodIsMarked(request.cancel.key, request.cancel.bucket),
      ]);
      return { acquired: true, record, cancelRequested };
    },
    async saveAndRelease(record, key, owner) {
      await fence(record, key, owner);
      await store.save(record);
      await coordinator.lockRelease(key, owner);
    },
    async saveFenced(record, key, owner) {
      await fence(record, key, owner);
      await store.save(record);
    },
  };
}
