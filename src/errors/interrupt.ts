/**
 * Errors of interrupts: a resume refused, a resume payload that fails the schema, an interrupt
 * timed out, a correlation id taken.
 *
 * @module
 */

import { type FieldIssue, type ResumeRefusal } from '../error-codes.js';
import { issuesOf, ReactorError, registerRevival } from './base.js';

/**
 * `engine.resume` was refused: another resume was accepted first (`already_resumed`), the
 * execution is not paused (finished, cancelled, rolling back, running), it has no such interrupt,
 * or no execution waits on the correlation id. Nothing changed.
 */
export class ResumeRefusedError extends ReactorError<'resume_refused'> {
  constructor(
    info: {
      executionId: string | undefined;
      step?: string | undefined;
      reason: ResumeRefusal;
      status?: string | undefined;
      correlationId?: string | undefined;
    },
    hint: string,
  ) {
    const what =
      info.executionId === undefined
        ? `correlation id "${info.correlationId ?? ''}"`
        : `execution ${info.executionId}${info.step === undefined ? '' : ` at "${info.step}"`}`;
    super('resume_refused', `cannot resume ${what}: ${hint}`, { details: { ...info } });
    this.name = 'ResumeRefusedError';
  }
}
registerRevival('ResumeRefusedError', ResumeRefusedError, ['resume_refused']);

/**
 * A resume payload failed the interrupt's schema. It counts toward the interrupt's `maxAttempts`;
 * `details.exhausted` is true when this one used the last attempt (the run rolled back and ended failed).
 */
export class ResumePayloadError extends ReactorError<'resume_payload_invalid'> {
  readonly issues: readonly FieldIssue[];
  constructor(
    info: { executionId: string; step: string; attempt: number; maxAttempts: number; exhausted: boolean },
    issues: readonly FieldIssue[],
  ) {
    const summary = issues.map((i) => `${i.path || '(payload)'}: ${i.message}`).join('; ');
    const left = info.exhausted
      ? 'no attempts left: the run was rolled back and ended failed'
      : info.maxAttempts === 0
        ? 'send a valid payload'
        : `${info.maxAttempts - info.attempt} attempt(s) left`;
    super(
      'resume_payload_invalid',
      `execution ${info.executionId}, interrupt "${info.step}": invalid payload (${summary}); invalid attempt ${info.attempt}${info.maxAttempts === 0 ? '' : ` of ${info.maxAttempts}`}, ${left}`,
      {
        details: { ...info, issues },
      },
    );
    this.name = 'ResumePayloadError';
    this.issues = issues;
  }
}
registerRevival('ResumePayloadError', ResumePayloadError, ['resume_payload_invalid'], issuesOf);

/** An interrupt's timeout passed before an accepted resume: the run rolled back and ended failed. */
export class InterruptTimeoutError extends ReactorError<'interrupt_timed_out'> {
  constructor(info: { executionId: string; step: string; timeoutAt: number; strategy: 'lazy' | 'active' }) {
    super(
      'interrupt_timed_out',
      `execution ${info.executionId}, interrupt "${info.step}": timed out at ${new Date(info.timeoutAt).toISOString()} (${info.strategy}); the run was rolled back`,
      { details: { ...info } },
    );
    this.name = 'InterruptTimeoutError';
  }
}
registerRevival('InterruptTimeoutError', InterruptTimeoutError, ['interrupt_timed_out']);

/**
 * A `.waitForEvent` step's timeout passed before a matching event was sent, and its `onTimeout`
 * is `'fail'`: the run was rolled back and ended failed.
 */
export class EventWaitTimeoutError extends ReactorError<'event_wait_timed_out'> {
  constructor(info: { executionId: string; step: string; event: string; timeoutAt: number }) {
    super(
      'event_wait_timed_out',
      `execution ${info.executionId}, waitForEvent "${info.step}": no matching "${info.event}" event before ${new Date(info.timeoutAt).toISOString()}; the run was rolled back`,
      { details: { ...info } },
    );
    this.name = 'EventWaitTimeoutError';
  }
}
registerRevival('EventWaitTimeoutError', EventWaitTimeoutError, ['event_wait_timed_out']);

/** Another paused execution holds the interrupt's correlation id: the interrupt step fails before pausing. */
export class CorrelationTakenError extends ReactorError<'correlation_id_taken'> {
  constructor(info: { correlationId: string; step: string; holder: string }) {
    super(
      'correlation_id_taken',
      `interrupt "${info.step}": correlation id "${info.correlationId}" is held by paused execution ${info.holder}; correlation ids must be unique (include the business id in it)`,
      {
        details: { ...info },
      },
    );
    this.name = 'CorrelationTakenError';
  }
}
registerRevival('CorrelationTakenError', CorrelationTakenError, ['correlation_id_taken']);
