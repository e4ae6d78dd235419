/**
 * The execution state machine: which persisted status may follow which (docs/decisions/064).
 * Every status write of an execution record goes through {@link RunState.checkpoint}, which
 * checks the transition here; a worker's writes are also fenced by the execution's liveness
 * lease (the store refuses a write from a worker that no longer holds it).
 *
 * @module
 */
import { LeaseLostError, StatusTransitionError, StoreUnavailableError, WorkerShutdownError } from '../../errors.js';
import type { ExecutionStatus } from '../ports/store.js';

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
const STATUSES: readonly ExecutionStatus[] = [
  'pending',
  'running',
  'parked',
  'paused',
  'rolling_back',
  'completed',
  'failed',
  'halted',
  'cancelled',
  'aborted',
];

/** The causes each status may become each other status for. */
type Row = Readonly<Partial<Record<ExecutionStatus, readonly TransitionCause[]>>>;

/** A row where every listed status may follow, for any cause. */
const anyCause = (to: readonly ExecutionStatus[]): Row => Object.fromEntries(to.map((s) => [s, EVERY_CAUSE]));

/** A finished status: only an undo reopens it (into a rollback), or, for a fan-out element, its undo (into `cancelled`). */
const reopenedByUndo = (self: ExecutionStatus): Row => ({
  [self]: EVERY_CAUSE,
  rolling_back: ['undo'],
  cancelled: ['element_undone'],
});

/**
 * Which status may follow which, and for which {@link TransitionCause}. An execution that is not
 * finished may go anywhere but back from a rollback to running work; a finished one only into
 * the rollback an undo starts (completed, halted) or the `cancelled` an undone element of a
 * fan-out map ends in. Writing the status it already has is always allowed (a checkpoint within
 * one status).
 */
export const TRANSITIONS: Readonly<Record<ExecutionStatus, Row>> = Object.freeze({
  pending: anyCause(STATUSES),
  running: anyCause(STATUSES),
  parked: anyCause(STATUSES),
  paused: anyCause(STATUSES),
  rolling_back: anyCause(['rolling_back', 'parked', 'pending', 'failed', 'cancelled', 'halted', 'aborted']),
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
