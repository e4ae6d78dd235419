/**
 * Errors of sent events: an event that is not valid, a payload that fails its declaration's
 * schema (both thrown by `engine.send` and `engine.sendMany` before anything is stored), and a
 * reactor's start on an event that failed (reported, never thrown: the event is stored).
 *
 * @module
 */

import { ErrorCode, type FieldIssue } from '../error-codes.js';
import { issuesOf, ReactorError, registerRevival } from './base.js';

/**
 * An event given to `engine.send` or `engine.sendMany` is not valid (code `event_invalid`): a
 * name that is empty, too long or holds white space; an `id` that is not a non-empty string of at
 * most 256 characters; a `ts` that is not a valid `Date` or epoch ms; options that are not an
 * object; a payload that is not JSON (a function, a `bigint`, a cycle, a non-finite number), nests
 * more than 100 levels deep or is larger than 256 KiB as JSON. `details.field` names what is at
 * fault, `details.entry` the `sendMany` entry. Nothing was stored (of a `sendMany`, no entry).
 */
export class EventInvalidError extends ReactorError<'event_invalid'> {
  constructor(info: { field: string; value: string; entry?: number }, problem: string) {
    super(
      ErrorCode.EventInvalid,
      `${info.entry === undefined ? '' : `sendMany entry ${info.entry}: `}event ${info.field} ${problem}; got ${info.value}`,
      { details: { ...info } },
    );
    this.name = 'EventInvalidError';
  }
}
registerRevival('EventInvalidError', EventInvalidError, [ErrorCode.EventInvalid]);

/**
 * An event's payload failed the schema of the declaration it was sent with (code
 * `event_payload_invalid`; `details.issues` says which fields and why). Nothing was stored (of a
 * `sendMany`, no entry).
 */
export class EventPayloadError extends ReactorError<'event_payload_invalid'> {
  readonly issues: readonly FieldIssue[];
  constructor(info: { event: string; entry?: number }, issues: readonly FieldIssue[]) {
    const summary = issues.map((i) => `${i.path || '(payload)'}: ${i.message}`).join('; ');
    super(
      ErrorCode.EventPayloadInvalid,
      `${info.entry === undefined ? '' : `sendMany entry ${info.entry}: `}event "${info.event}": invalid payload (${summary})`,
      { details: { ...info, issues } },
    );
    this.name = 'EventPayloadError';
    this.issues = issues;
  }
}
registerRevival('EventPayloadError', EventPayloadError, [ErrorCode.EventPayloadInvalid], issuesOf);

/** The stage of a start by event that failed (see {@link EventTriggerError}). */
export type EventTriggerStage = 'match' | 'input' | 'idempotencyKey' | 'start' | 'effect';

/**
 * A reactor's start on a sent event (`.on(event, …)`) failed (code `event_trigger_failed`). It is
 * not thrown: `engine.send` resolves with it in `triggerFailures` and tells it on the
 * `event.trigger_failed` notice; the event stays stored and the event's other triggers run.
 * `details.stage` says what failed: `match`, `input` or `idempotencyKey` threw (or the key was not
 * a non-empty string); `input` also when the input failed the reactor's contract (`issues`);
 * `start` when the start itself failed (no queue, the store); `effect` when the execution
 * started (`executionId`) but the event log could not record it. `cause` is the original error.
 */
export class EventTriggerError extends ReactorError<'event_trigger_failed'> {
  constructor(
    info: {
      eventId: string;
      event: string;
      reactor: string;
      stage: EventTriggerStage;
      executionId?: string;
      issues?: readonly FieldIssue[];
    },
    cause: unknown,
  ) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      ErrorCode.EventTriggerFailed,
      `event "${info.event}" (${info.eventId}) could not start reactor "${info.reactor}" (${info.stage}): ${why}`,
      { details: { ...info }, cause },
    );
    this.name = 'EventTriggerError';
  }
}
registerRevival('EventTriggerError', EventTriggerError, [ErrorCode.EventTriggerFailed]);
