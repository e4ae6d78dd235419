/**
 * Why a worker's reader of an async unit suspends: the unit it reads has not finished.
 *
 * @module
 */
import { ReactorError } from '../../../errors.js';

/**
 * Carried by an `awaitUnit` suspension when a reader must park: the worker parks the execution
 * on the unit (its wait list) instead of on a coordination key. Used inside a worker, never an
 * execution's error.
 */
export class AsyncPendingError extends ReactorError {
  /** The unit waited for. */
  readonly unitId: string;
  /** When the reader stops waiting (engine clock, ms). */
  readonly deadline: number;

  constructor(unitId: string, step: string, deadline: number) {
    super('async_pending', `step "${step}" waits for async unit ${unitId}`, { details: { unitId, step, deadline } });
    this.name = 'AsyncPendingError';
    this.unitId = unitId;
    this.deadline = deadline;
  }
}
