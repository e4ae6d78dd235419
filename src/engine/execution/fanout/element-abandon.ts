/**
 * Elements a rolled-back map will never run. When a run is cancelled (or fails) while some of
 * its fan-out elements are still pending or parked on a busy key, the rollback undoes the
 * completed ones; the others must not stay `pending` / `parked` for ever, nor wake up on the
 * key's release. Their records end `cancelled` ("not started"), and a parked one leaves the
 * key's wait list. Done by the element's own late job (its fallback or wake job finds the map
 * in the rollback phase) and, at once, by an operator's cancel (decision 051).
 *
 * @module
 */
import { cleared } from '../../model/background.js';
import { waitListKey } from '../../model/keys.js';
import { operatorHold } from '../operator-lock.js';
import type { WaitList } from '../../../ports/wait-list.js';
import { TERMINAL_STATUSES, type ExecutionRecord, type Store } from '../../../ports/store.js';
import type { CoordinationDeps } from '../execute.js';
import type { RunState } from '../../run/run-state.js';

/** True when the element never got past its body: nothing of it completed, nothing to undo. */
export function neverCompleted(record: ExecutionRecord): boolean {
  return !TERMINAL_STATUSES.has(record.status) && Object.values(record.steps).every((s) => s.status !== 'completed');
}

/** Ends `state`'s element record `cancelled` as not started, and takes it off the wait list it was parked on. */
export async function abandonElement(
  deps: { readonly waitList?: WaitList | undefined },
  state: RunState,
): Promise<void> {
  const link = state.element!;
  const waiting = state.background?.waitingFor;
  if (state.background) state.setBackground(cleared(state.background, 'waitingFor', 'retryAt'));
  state.emit({ type: 'map.element_skipped', step: link.step, index: link.index, reason: 'not_started' });
  await state.checkpoint('cancelled', { cancelReason: 'not started: the map rolled back' });
  if (waiting) await deps.waitList?.remove(waitListKey(waiting.primitive, waiting.key), waiting.jobId);
}

/**
 * An operator's rollback: abandons every pending or parked element of the map now, each under
 * its liveness lock (an element a worker is running right now is left to settle itself).
 */
export async function abandonElementsInline(
  deps: {
    readonly store: Store;
    readonly waitList?: WaitList | undefined;
    readonly coordination?: CoordinationDeps;
  },
  elementIds: readonly string[],
  stateOf: (record: ExecutionRecord) => RunState,
): Promise<void> {
  const coordinator = deps.coordination?.coordinator;
  for (const id of elementIds) {
    const record = await deps.store.get(id);
    if (!record || !neverCompleted(record) || record.status === 'running') continue;
    // A worker that parked it (or queued its retry) may still hold its lock for that job's tail: wait for it (decision 144).
    const hold = coordinator
      ? await operatorHold(coordinator, id, async () => {
          const current = await deps.store.get(id);
          // Parked, or pending for a retry: written last by the job that holds it. A plain pending
          // record may be a job running the element's body before its first checkpoint: not waited for.
          return (
            current !== undefined &&
            neverCompleted(current) &&
            (current.status === 'parked' || current.background?.retryAt !== undefined)
          );
        })
      : { release: async () => undefined };
    if (!hold) continue; // a worker runs it: its job sees the rollback phase
    try {
      const fresh = await deps.store.get(id);
      if (fresh && neverCompleted(fresh)) await abandonElement(deps, stateOf(fresh));
    } finally {
      await hold.release();
    }
  }
}
