/**
 * Errors of the execution record: too large, of another schema version, missing, of another
 * reactor, a status write the state machine does not allow.
 *
 * @module
 */

import { ErrorCode } from '../error-codes.js';
import { ReactorError, registerRevival } from './base.js';

/** A persisted execution record is larger than the configured limit. */
export class RecordTooLargeError extends ReactorError<'record_too_large'> {
  /**
   * `mapStates`: the map whose element states (kept apart from the record) were too large.
   * `entry`: the index of the `startMany` entry whose first record it is.
   */
  constructor(executionId: string, bytes: number, limit: number, mapStates?: string, entry?: number) {
    super(
      ErrorCode.RecordTooLarge,
      mapStates === undefined
        ? `${entry === undefined ? '' : `startMany entry ${entry}: `}execution ${executionId}: record is ${bytes} bytes, over the ${limit}-byte limit; keep step results small (store blobs elsewhere and return ids)`
        : `execution ${executionId}: the element states of map "${mapStates}" are ${bytes} bytes, over the ${limit}-byte limit (maxMapStateBytes); return smaller element results or split the map`,
      {
        details: {
          executionId,
          bytes,
          limit,
          ...(mapStates === undefined ? {} : { mapStates }),
          ...(entry === undefined ? {} : { entry }),
        },
      },
    );
    this.name = 'RecordTooLargeError';
  }
}
registerRevival('RecordTooLargeError', RecordTooLargeError, [ErrorCode.RecordTooLarge]);

/** A persisted record carries a schema version this code does not read. */
export class RecordVersionError extends ReactorError<'record_version_mismatch'> {
  constructor(found: unknown, expected: number) {
    super(
      ErrorCode.RecordVersion,
      `persisted record has schema version ${String(found)}, this version of ts-reactor reads ${expected}`,
      {
        details: { found, expected },
      },
    );
    this.name = 'RecordVersionError';
  }
}
registerRevival('RecordVersionError', RecordVersionError, [ErrorCode.RecordVersion]);

/** No record of the execution exists (never started, expired, or lost by a Redis restart without persistence). */
export class ExecutionNotFoundError extends ReactorError<'execution_not_found'> {
  constructor(executionId: string) {
    super(
      'execution_not_found',
      `execution ${executionId} has no record (never started, expired, or lost by a store without persistence)`,
      { details: { executionId } },
    );
    this.name = 'ExecutionNotFoundError';
  }
}
registerRevival('ExecutionNotFoundError', ExecutionNotFoundError, ['execution_not_found']);

/**
 * `engine.result(id, reactor)` or `engine.wait(id, reactor)` was given a reactor the execution
 * does not belong to: its record names another one. `details.expected` is the reactor given,
 * `details.actual` the record's.
 */
export class ExecutionReactorMismatchError extends ReactorError<'execution_reactor_mismatch'> {
  constructor(executionId: string, expected: string, actual: string) {
    super('execution_reactor_mismatch', `execution ${executionId} belongs to reactor "${actual}", not "${expected}"`, {
      details: { executionId, expected, actual },
    });
    this.name = 'ExecutionReactorMismatchError';
  }
}
registerRevival('ExecutionReactorMismatchError', ExecutionReactorMismatchError, ['execution_reactor_mismatch']);

/** A status write the execution state machine does not allow (e.g. a finished execution set running again). */
export class StatusTransitionError extends ReactorError<'status_transition_invalid'> {
  /** `cause`: why the write was made (the status machine's transition cause), named in the message. */
  constructor(executionId: string, from: string, to: string, cause?: string) {
    const why = cause === undefined ? '' : ` (written by ${cause})`;
    super('status_transition_invalid', `execution ${executionId}: status ${from} cannot become ${to}${why}`, {
      details: { executionId, from, to },
    });
    this.name = 'StatusTransitionError';
  }
}
registerRevival('StatusTransitionError', StatusTransitionError, ['status_transition_invalid']);
