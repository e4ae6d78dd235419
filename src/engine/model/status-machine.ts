/**
 * The execution state machine: which persisted status may follow which (docs/decisions/064).
 * Every status write of an execution record goes through {@link RunState.checkpoint}, which
 * checks the transition here; a worker's writes are also fenced by the execution's liveness
 * lease (the store refuses a write from a worker that no longer holds it).
 *
 * @module
 */
import { LeaseLostError, StatusTransitionError, StoreUnavailableError, WorkerShutdownError } from '../../errors.js';
import type { ExecutionStatus } from '../../ports/store.js';

/**
 * Why a status is written; the table checks it with the two statuses:
 * - `run`: the execution's own work — a run in this process or a worker's job, its parks,
 *   pauses and retries, its rollback, its end, the recovery sweep;
 * - `undo`: its recorded work is rolled back from outside a run (`rollbackRecorded`): an
 *   operator's undo or cancel, a passed deadline, a superseded debounced start;
 * - `element_undone`: a completed element of a fan-out map is undone because the map rolled back.
 */
export type TransitionCause = 'run' | 'undo' | 'element_undone';

const EVERY_CAUSE: readonly TransitionCause[] = ['run', 'undo', 'element_undone'];
/** Only the execution's own work. */
const RUN: readonly TransitionCause[] = ['run'];
/** The execution's own rollback, or an undo from outside its run. */
const RUN_OR_UNDO: readonly TransitionCause[] = ['run', 'undo'];

/** The causes each status may become each other status for. */
type Row = Readonly<Partial<Record<ExecutionStatus, readonly TransitionCause[]>>>;

/** The ends the execution's own work writes: a result, a failure, a halt, a cancel (after its rollback). */
const ENDS = { completed: RUN, failed: RUN, halted: RUN, cancelled: RUN } as const;

/** A finished status: only an undo reopens it (into a rollback), or, for a fan-out element, its undo (into `cancelled`). */
const reopenedByUndo = (self: ExecutionStatus): Row => ({
  [self]: EVERY_CAUSE,
  rolling_back: ['undo'],
  cancelled: ['element_undone'],
});

/**
 * Which status may follow which, and for which {@link TransitionCause} — what the engine's
 * writes do (docs/decisions/111):
 * - `pending`, `running`, `parked`: the execution's own work goes on (`running`), hands off or
 *   comes back later (`pending`), parks (`parked`), pauses (`paused`), rolls back, or ends; an
 *   undo from outside (an operator's cancel, a passed deadline, a superseded start) only starts
 *   a rollback.
 * - `paused`: a resume goes on here (`running`) or in a worker (`pending`), a failed or rolled-back
 *   pause rolls back (its own work, or an undo), an inline resume may end without writing
 *   `running` first (a checkpoint interval); a paused execution never parks without running first.
 * - `rolling_back`: the rollback parks on a fan-out map's elements (`parked`), comes back later
 *   (`pending`) or ends; never running work again.
 * - `completed`, `halted`: only an undo reopens them (into a rollback), and an undone fan-out
 *   element ends `cancelled`; `failed`, `cancelled`, `aborted` are final.
 * No live execution becomes `aborted` through a checkpoint (only the recovery sweep ends one so),
 * and an undone fan-out element is always a finished one. Writing the status a record already has
 * is always allowed (a checkpoint within one status).
 */
export const TRANSITIONS: Readonly<Record<ExecutionStatus, Row>> = Object.freeze({
  pending: { running: RUN, parked: RUN, paused: RUN, rolling_back: RUN_OR_UNDO, ...ENDS },
  running: { pending: RUN, parked: RUN, paused: RUN, rolling_back: RUN_OR_UNDO, ...ENDS },
  parked: { running: RUN, pending: RUN, paused: RUN, rolling_back: RUN_OR_UNDO, ...ENDS },
  paused: { running: RUN, pending: RUN, rolling_back: RUN_OR_UNDO, ...ENDS },
  rolling_back: { parked: RUN, pending: RUN, failed: RUN, cancelled: RUN, halted: RUN },
  completed: reopenedByUndo('completed'),
  halted: reopenedByUndo('halted'),
  failed: { failed: EVERY_CAUSE },
  cancelled: { cancelled: EVERY_CAUSE },
  aborted: { aborted: EVERY_CAUSE },
});

/**
 * Throws {@link StatusTransitionError} unless `from` (undefined: no record yet) may become `to`
 * for `cause`.
 */
export function checkTransition(
  executionId: string,
  from: ExecutionStatus | undefined,
  to: ExecutionStatus,
  cause: TransitionCause,
): void {
  if (from === undefined || from === to || TRANSITIONS[from][to]?.includes(cause)) return;
  throw new StatusTransitionError(executionId, from, to, cause);
}

/**
 * Errors that stop a worker's job of an execution without writing its outcome: the lease is
 * gone (another worker goes on), the worker shuts down (the job is handed back), or the store
 * stayed unreachable past the outage tolerance (the job is delivered again). Nothing is rolled
 * back and no status is written for them.
 */
export function isJobStop(error: unknown): error is LeaseLostError | WorkerShutdownError | StoreUnavailableError {
  return (
    error instanceof LeaseLostError || error instanceof WorkerShutdownError || error instanceof StoreUnavailableError
  );
}
