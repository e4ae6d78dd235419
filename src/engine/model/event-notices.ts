/**
 * What the engine tells about sent events: a typed notice per `send` outcome, on a stream of its
 * own (`engine.subscribeEvents`), apart from the execution events of `engine.subscribe`, which
 * are each about one execution (docs/decisions/143).
 *
 * @module
 */

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
  /** An event with this id is kept already: nothing was stored, the kept one (sent at `receivedAt`) stands. */
  | {
      readonly type: 'event.duplicate';
      readonly eventId: string;
      readonly name: string;
      readonly receivedAt: number;
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
