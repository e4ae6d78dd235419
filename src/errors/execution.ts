/**
 * Errors of an execution's operations and ends: cancelled, superseded by a debounced start, an
 * operation that does not apply in its state, an operator's action on a failed step refused.
 *
 * @module
 */

import { ErrorCode, type FieldIssue, type FailureAction, type FailureActionRefusal } from '../error-codes.js';
import { ReactorError, registerRevival } from './base.js';

/** The execution was cancelled by an operator; completed work was rolled back. */
export class CancelledError extends ReactorError<'cancelled'> {
  constructor(executionId: string, reason: string) {
    super('cancelled', `execution ${executionId} was cancelled: ${reason}`, { details: { executionId, reason } });
    this.name = 'CancelledError';
  }
}
registerRevival('CancelledError', CancelledError, ['cancelled']);

/**
 * A later start of the same reactor with the same `debounce` key came within the window
 * (code `superseded`): the execution ended `cancelled` before it ran, with this error as its
 * `cause`. `details.supersededBy` is the execution of that later start (it may in turn be
 * superseded), `details.debounceKey` the key.
 */
export class SupersededError extends ReactorError<'superseded'> {
  constructor(info: { executionId: string; supersededBy: string; debounceKey: string }) {
    super(
      ErrorCode.Superseded,
      `execution ${info.executionId} was superseded by ${info.supersededBy}, a later start with debounce key "${info.debounceKey}"; it never ran`,
      { details: { ...info } },
    );
    this.name = 'SupersededError';
  }
}
registerRevival('SupersededError', SupersededError, ['superseded']);

/** An operation does not apply to the execution in its current state (e.g. cancelling a finished run). */
export class ExecutionStateError extends ReactorError<'execution_state'> {
  constructor(executionId: string, operation: string, stored: string, hint: string) {
    const status = stored === 'pending' ? 'queued' : stored; // the name users see (decision 107)
    super('execution_state', `cannot ${operation} execution ${executionId}: it is ${status}; ${hint}`, {
      details: { executionId, operation, status },
    });
    this.name = 'ExecutionStateError';
  }
}
registerRevival('ExecutionStateError', ExecutionStateError, ['execution_state']);

/**
 * An operator's action on a failed step was refused before anything changed: `engine.retryStep`,
 * `skipStep` and `rollback` need an execution paused on a step's failure, `fork` a finished one or
 * one paused on a failure; `details.reason` says why (see {@link FailureActionRefusal}).
 */
export class FailureActionError extends ReactorError<'failure_action_refused'> {
  constructor(
    info: {
      executionId: string;
      action: FailureAction;
      reason: FailureActionRefusal;
      step?: string | undefined;
      status?: string | undefined;
      issues?: readonly FieldIssue[] | undefined;
    },
    hint: string,
  ) {
    super('failure_action_refused', `cannot ${info.action} execution ${info.executionId}: ${hint}`, {
      details: { ...info },
    });
    this.name = 'FailureActionError';
  }
}
registerRevival('FailureActionError', FailureActionError, ['failure_action_refused']);

/**
 * `engine.watch` on an engine that has no execution stream (code `watch_unavailable`): an engine
 * built with `createEngine` and no `executionStream` option. Every runtime (`createEmbeddedEngine`,
 * `createRedisRuntime`, `createPostgresRuntime`, `createRuntime` over a bundled backend) has one.
 */
export class WatchUnavailableError extends ReactorError<'watch_unavailable'> {
  constructor(executionId: string) {
    super(
      ErrorCode.WatchUnavailable,
      `cannot watch execution ${executionId}: this engine has no execution stream; give createEngine an executionStream, or build the engine with a runtime`,
      { details: { executionId } },
    );
    this.name = 'WatchUnavailableError';
  }
}
registerRevival('WatchUnavailableError', WatchUnavailableError, [ErrorCode.WatchUnavailable]);
