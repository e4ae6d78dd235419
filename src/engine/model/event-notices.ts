/**
 * What the engine tells about sent events: a typed notice per `send` outcome and per reactor an
 * event started (or failed to start), on a stream of its own (`engine.subscribeEvents`), apart
 * from the execution events of `engine.subscribe`, which are each about one execution
 * (docs/decisions/143, 145).
 *
 * @module
 */
import type { ErrorJSON } from '../../errors.js';

/** A notice about a sent event. Discriminated on `type`. */
export type EventNotice =
  /** The event was stored: `id`, `name`, its time `ts` and its receipt time `receivedAt` (epoch ms). */
  | {
      readonly type: 'event.received';
      readonly eventId: string;
      readonly name: string;
      readonly ts: number;
      readonly receivedAt: number;
      /** Engine clock time, ms. */
      readonly at: number;
    }
  /**
   * The event cancelled an execution of a reactor that declares `cancelOn` for it (recorded in
   * the event's `effects.cancelled`): `outcome` `cancelled` when it was rolled back here and now
   * (queued, parked, sleeping, paused), `requested` when a run was asked to stop (an inline run
   * of this engine, or one running in a worker or another process), which rolls back at its next
   * step boundary; either ends it `cancelled` with the reason `cancelled by event <name> <id>`.
   */
  | {
      readonly type: 'event.cancelled';
      readonly eventId: string;
      readonly name: string;
      readonly executionId: string;
      readonly reactor: string;
      readonly outcome: 'cancelled' | 'requested';
      /** Engine clock time, ms. */
      readonly at: number;
    }
  /** An event with this id is kept already: nothing was stored, the kept one (sent at `receivedAt`) stands. */
  | {
      readonly type: 'event.duplicate';
      readonly eventId: string;
      readonly name: string;
      readonly receivedAt: number;
      /** Engine clock time, ms. */
      readonly at: number;
    }
  /**
   * The event started `reactor` (a trigger declared with `.on`): `executionId` is the execution,
   * `replay` true when that start had happened already (the event sent again, or sent by another
   * process at once) and this send found it.
   */
  | {
      readonly type: 'event.started';
      readonly eventId: string;
      readonly name: string;
      readonly reactor: string;
      readonly executionId: string;
      readonly replay: boolean;
      /** Engine clock time, ms. */
      readonly at: number;
    }
  /**
   * A trigger of the event failed (`EventTriggerError`, code `event_trigger_failed`, as JSON in
   * `error`; `details.stage` says where). The event stays stored; the other triggers ran.
   */
  | {
      readonly type: 'event.trigger_failed';
      readonly eventId: string;
      readonly name: string;
      readonly reactor: string;
      readonly error: ErrorJSON;
      /** Engine clock time, ms. */
      readonly at: number;
    }
  /** The event resumed the `.waitForEvent` step `step` of execution `executionId` (told by the process that delivered it). */
  | {
      readonly type: 'event.resumed';
      readonly eventId: string;
      readonly name: string;
      readonly executionId: string;
      readonly step: string;
      /** Engine clock time, ms. */
      readonly at: number;
    };

/** A listener of {@link EventNotice}s. */
export type EventNoticeListener = (notice: EventNotice) => void;

/** Listeners of event notices, each isolated from the others' failures. */
export class EventNotices {
  readonly #listeners = new Set<EventNoticeListener>();

  /** Adds `listener`; returns the function that removes it. */
  subscribe(listener: EventNoticeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Sends `notice` to every listener; a listener that throws is passed over. */
  emit(notice: EventNotice): void {
    for (const listener of this.#listeners) {
      try {
        listener(notice);
      } catch {
        // a listener's failure is its own
      }
    }
  }
}
