/**
 * {@link EventWaits} in this process: one map per (event, match key), holding its registrations
 * by member (kind, execution id, ref). Each method is one synchronous block between awaits — the
 * role a script plays on Redis. A lookup reads the one map of its key, never another.
 *
 * @module
 */
import { systemClock, type Clock } from '../../ports/clock.js';
import {
  checkEventWaitCursor,
  checkEventWaitLimit,
  eventWaitMember,
  EVENT_WAIT_SEPARATOR,
  type EventWait,
  type EventWaitEntry,
  type EventWaitKey,
  type EventWaitKind,
  type EventWaitLookup,
  type EventWaitPage,
  type EventWaits,
} from '../../ports/event-waits.js';

/** Options of {@link MemoryEventWaits}. */
export interface MemoryEventWaitsOptions {
  /** The clock of `since`: give it the event log's clock, so the two compare. Default: the system clock. */
  readonly clock?: Clock | undefined;
}

/** The event-wait index of the memory backend. */
export class MemoryEventWaits implements EventWaits {
  readonly #clock: Clock;
  readonly #keys = new Map<string, Map<string, EventWait>>();

  constructor(options: MemoryEventWaitsOptions = {}) {
    this.#clock = options.clock ?? systemClock;
  }

  async add(entry: EventWaitEntry): Promise<EventWait> {
    const key = keyOf(entry);
    const member = eventWaitMember(entry);
    let waits = this.#keys.get(key);
    const kept = waits?.get(member);
    if (kept !== undefined) return kept;
    if (waits === undefined) this.#keys.set(key, (waits = new Map()));
    const wait: EventWait = Object.freeze({
      event: entry.event,
      matchKey: entry.matchKey,
      kind: entry.kind,
      executionId: entry.executionId,
      ref: entry.ref,
      since: this.#clock.now(),
    });
    waits.set(member, wait);
    return wait;
  }

  async remove(entry: EventWaitEntry): Promise<boolean> {
    const key = keyOf(entry);
    const waits = this.#keys.get(key);
    if (waits === undefined || !waits.delete(eventWaitMember(entry))) return false;
    if (waits.size === 0) this.#keys.delete(key);
    return true;
  }

  async lookup(key: EventWaitKey, kind: EventWaitKind, page: EventWaitLookup): Promise<EventWaitPage> {
    checkEventWaitLimit(page.limit);
    checkEventWaitCursor(kind, page.after);
    const waits = this.#keys.get(keyOf(key));
    if (waits === undefined) return { waits: [] };
    const prefix = kind + EVENT_WAIT_SEPARATOR;
    const members = [...waits.keys()]
      .filter((member) => member.startsWith(prefix) && (page.after === undefined || member > page.after))
      .sort();
    const taken = members.slice(0, page.limit);
    const result = taken.map((member) => waits.get(member)!);
    const last = taken[taken.length - 1];
    return members.length > page.limit && last !== undefined ? { waits: result, cursor: last } : { waits: result };
  }
}

/** The map key of an (event, match key) pair. */
function keyOf(key: EventWaitKey): string {
  return key.event + EVENT_WAIT_SEPARATOR + key.matchKey;
}
