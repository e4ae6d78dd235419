/**
 * A cancel cascading to an `asyncReactor` child (docs/decisions/087): the dispatcher, being
 * cancelled, cancels each unfinished child it dispatched and waits for the child's rollback
 * before its own undos. The child's cancel is an operator's cancel (a queued or parked child is
 * rolled back here, a running one is asked through its cancel marker), so it cascades in turn.
 *
 * @module
 */
import { ExecutionStateError } from '../../../errors.js';
import { cancelExecution, type OperationsDeps } from '../../execution/operations.js';
import { waitTerminal } from '../../graph/async/read-unit.js';
import type { Clock } from '../../../ports/clock.js';
import { TERMINAL_STATUSES } from '../../../ports/store.js';
import type { UnitSignals } from '../../run/async/port.js';

/** What {@link cancelChild} needs: the engine's operations, and how to wait for the child's end. */
export interface CancelChildDeps {
  readonly operations: OperationsDeps;
  readonly signals: UnitSignals;
  readonly clock: Clock;
  /** How long to wait for a running child's end. */
  readonly waitMs: number;
  /** A test engine's pool: run what it can before waiting on the clock. */
  readonly settled?: ((until: number) => Promise<void>) | undefined;
}

/**
 * Cancels `childId` unless it has ended, and waits for its end: resolves with `cancelled`, the
 * status it ended with meanwhile, or `timed_out` (still going after `waitMs`); undefined when
 * there was nothing to cancel (no record, or it had ended).
 */
export async function cancelChild(deps: CancelChildDeps, childId: string, reason: string): Promise<string | undefined> {
  const { store } = deps.operations;
  const record = await store.get(childId);
  if (!record || TERMINAL_STATUSES.has(record.status)) return undefined;
  try {
    const result = await cancelExecution(deps.operations, childId, reason);
    if (result.status === 'cancelled') return 'cancelled';
  } catch (error) {
    if (!(error instanceof ExecutionStateError)) throw error;
    return (await store.get(childId))?.status; // it ended meanwhile
  }
  // Running in a worker: it rolls back there once it reads its cancel marker.
  const ended = await waitTerminal(store, deps.signals, childId, deps.waitMs, deps.clock, undefined, deps.settled);
  return ended?.status ?? 'timed_out';
}
