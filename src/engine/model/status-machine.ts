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

const ACTIVE: readonly ExecutionStatus[] = [
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

/**
 * The statuses each status may become. An execution that is not finished may go anywhere but
 * back from a rollback to running work; a finished one only into the rollback an operator's
 * undo starts (completed, halted) or the `cancelled` an undone element of a fan-out map ends in.
 * Writing the status it already has is always allowed (a checkpoint within one status).
 */
export const TRANSITIONS: Readonly<Record<ExecutionStatus, ReadonlySet<ExecutionStatus>>> = Object.freeze({
  pending: new Set(ACTIVE),
  running: new Set(ACTIVE),
  parked: new Set(ACTIVE),
  paused: new Set(ACTIVE),
  rolling_back: new Set<ExecutionStatus>([
    'rolling_back',
    'parked',
    'pending',
    'failed',
    'cancelled',
    'halted',
    'aborted',
  ]),
  completed: new Set<ExecutionStatus>(['completed', 'rolling_back', 'cancelled']),
  halted: new Set<ExecutionStatus>(['halted', 'rolling_back', 'cancelled']),
  failed: new Set<ExecutionStatus>(['failed']),
  cancelled: new Set<ExecutionStatus>(['cancelled']),
  aborted: new Set<ExecutionStatus>(['aborted']),
});

/** Throws {@link StatusTransitionError} unless `from` (undefined: no record yet) may become `to`. */
export function checkTransition(executionId: string, from: ExecutionStatus | undefined, to: ExecutionStatus): void {
  if (from === undefined || from === to || TRANSITIONS[from].has(to)) return;
  throw new StatusTransitionError(executionId, from, to);
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
