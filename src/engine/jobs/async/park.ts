/**
 * A worker reader parks on the unit it reads (its execution is re-enqueued with a fallback delay
 * and registered on the unit's wait list); the unit's terminal record wakes it at once.
 *
 * @module
 */
import type { BackgroundDeps } from '../deps.js';
import { nextJob } from '../../execution/next-job.js';
import { backgroundOf } from '../../model/background.js';
import { waitListKey } from '../../model/keys.js';
import type { JobQueue } from '../../../ports/queue.js';
import type { WaitList } from '../../../ports/wait-list.js';
import { TERMINAL_STATUSES } from '../../../ports/store.js';
import type { RunState } from '../../run/run-state.js';
import type { AsyncPendingError } from '../../model/async/pending.js';

/** The wait-list key of a unit's readers. */
export const readersKey = (unitId: string): string => waitListKey('async', unitId);

/**
 * Parks the reader's execution until the unit finishes (or the fallback job is due, or the park
 * timeout passes). Returns the check to run once the execution's liveness lock is released.
 */
export async function parkReader(
  deps: BackgroundDeps,
  state: RunState,
  pending: AsyncPendingError,
): Promise<() => Promise<void>> {
  const delayMs = Math.max(1, Math.min(deps.options.parkFallbackMs, pending.deadline - state.clock.now()));
  // Counted per unit across re-parks (the waiting state itself is cleared when a job resumes the reader).
  const parks = backgroundOf(state).asyncParks;
  const attempt = parks?.unitId === pending.unitId ? parks.count + 1 : 1;
  // Enqueue first, then register: a wake that finds the reader always finds its delayed job.
  const { jobId } = await nextJob(deps, state, {
    status: 'parked',
    reason: 'park',
    delayMs,
    update: (background, { jobId }) => ({
      ...background,
      waitingFor: { primitive: 'async', key: pending.unitId, attempt, jobId, dueAt: state.clock.now() + delayMs },
      asyncParks: { unitId: pending.unitId, count: attempt },
    }),
  });
  await deps.waitList?.add(readersKey(pending.unitId), jobId);
  // The unit may have finished between the read and the registration.
  return async () => {
    const unit = await deps.store.get(pending.unitId);
    if (unit && TERMINAL_STATUSES.has(unit.status)) await wakeReaders(deps, pending.unitId);
  };
}

/** Wakes every execution parked on the unit. */
export async function wakeReaders(
  deps: { readonly waitList: WaitList | undefined; readonly queue: JobQueue },
  unitId: string,
): Promise<void> {
  if (!deps.waitList) return;
  for (;;) {
    const jobId = await deps.waitList.shift(readersKey(unitId));
    if (jobId === undefined) return;
    await deps.queue.promote(jobId);
  }
}
