/**
 * Errors of time: a step attempt past its timeout, a sleep too long for an inline run, a reactor's
 * deadline passed.
 *
 * @module
 */

import { ErrorCode } from '../error-codes.js';
import { ReactorError, registerRevival } from './base.js';

/**
 * An attempt of a step body ran past the step's `timeout` (code `step_timed_out`): the body's
 * `ctx.signal` was aborted with this error and the attempt failed at the deadline. Retryable:
 * the step's retry policy decides whether another attempt runs; after the last one the step
 * fails and is compensated like any failure.
 */
export class StepTimeoutError extends ReactorError<'step_timed_out'> {
  constructor(info: { step: string; attempt: number; timeoutMs: number }) {
    super(
      ErrorCode.StepTimedOut,
      `step "${info.step}": attempt ${info.attempt} timed out after ${info.timeoutMs} ms; raise the step's timeout, or make the body finish sooner`,
      { details: { ...info } },
    );
    this.name = 'StepTimeoutError';
  }
}
registerRevival('StepTimeoutError', StepTimeoutError, [ErrorCode.StepTimedOut]);

/**
 * A sleep step of an inline run would wait longer than the engine's `maxInlineSleepMs`, and the
 * run cannot hand off to a worker (code `sleep_needs_worker`): the engine has no queue, or the run
 * is an inline resume. The step fails; the steps before it are undone (docs/time.md#sleeps).
 */
export class SleepNeedsWorkerError extends ReactorError<'sleep_needs_worker'> {
  constructor(info: { step: string; sleepMs: number; maxInlineSleepMs: number }) {
    super(
      ErrorCode.SleepNeedsWorker,
      `sleep "${info.step}": ${info.sleepMs} ms is longer than an inline run waits (maxInlineSleepMs ${info.maxInlineSleepMs}); give the engine a queue so a worker sleeps it, run the reactor in the background, or raise maxInlineSleepMs`,
      { details: { ...info } },
    );
    this.name = 'SleepNeedsWorkerError';
  }
}
registerRevival('SleepNeedsWorkerError', SleepNeedsWorkerError, [ErrorCode.SleepNeedsWorker]);

/**
 * The reactor's `deadline` passed before the execution finished (code `deadline_exceeded`): it was
 * cancelled and rolled back like an operator's cancel — completed steps undone, the running
 * step's `ctx.signal` aborted with this error — and ended `cancelled` with this error as its
 * `cause`. `details.deadlineAt` is the instant (engine clock, ms), `details.deadlineMs` the option.
 */
export class DeadlineExceededError extends ReactorError<'deadline_exceeded'> {
  constructor(info: { executionId: string; deadlineAt: number; deadlineMs: number }) {
    super(
      ErrorCode.DeadlineExceeded,
      `execution ${info.executionId} passed its reactor's deadline (${info.deadlineMs} ms, due at ${info.deadlineAt} on the engine clock); it was cancelled and rolled back`,
      { details: { ...info } },
    );
    this.name = 'DeadlineExceededError';
  }
}
registerRevival('DeadlineExceededError', DeadlineExceededError, ['deadline_exceeded']);
