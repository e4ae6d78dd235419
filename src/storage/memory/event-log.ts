/**
 * {@link EventLog} in this process: one map entry per kept event, on an injected clock. Each
 * method is one synchronous block between awaits, so two appends of one id never both win — the
 * role a script plays on Redis. An event expires `ttlMs` after it was received; expired events
 * are passed over by every read and dropped by a sweep at most once per second of clock time.
 *
 * @module
 */
import { systemClock, type Clock } from '../../ports/clock.js';
import {
  NO_EFFECTS,
  type AppendOutcome,
  type EventEffectKind,
  type EventFilter,
  type EventLog,
  type EventPage,
  type NewEvent,
  type StoredEvent,
} from '../../ports/event-log.js';
import { decodeListCursor, encodeListCursor, isAfter, newestFirst } from '../list-cursor.js';

/** Default retention of the memory event log: 24 hours, the memory store's record TTL. */
export const DEFAULT_MEMORY_EVENT_TTL_MS = 86_400_000;

/** Options of {@link MemoryEventLog}. */
export interface MemoryEventLogOptions {
  /** The clock of `receivedAt` and of expiry. Default: the system clock. */
  readonly clock?: Clock | undefined;
  /** How long an event is kept after it was received, in ms, or `Infinity`. Default {@link DEFAULT_MEMORY_EVENT_TTL_MS}. */
  readonly ttlMs?: number | undefined;
}

interface Entry {
  event: StoredEvent;
  readonly expiresAt: number;
}

/** The event log of the memory backend. */
export class MemoryEventLog implements EventLog {
  readonly #clock: Clock;
  readonly #entries = new Map<string, Entry>();
  /** How long an event is kept after it was received, in ms (`Infinity`: kept). */
  readonly ttlMs: number;
  #sweptAt = -Infinity;

  /** @throws RangeError when `ttlMs` is neither a positive integer nor `Infinity`. */
  constructor(options: MemoryEventLogOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.ttlMs = options.ttlMs ?? DEFAULT_MEMORY_EVENT_TTL_MS;
    if (this.ttlMs !== Infinity && (!Number.isSafeInteger(this.ttlMs) || this.ttlMs < 1))
      throw new RangeError(`ttlMs must be a positive integer or Infinity; got ${String(this.ttlMs)}`);
  }

  async append(event: NewEvent): Promise<AppendOutcome> {
    const now = this.#clock.now();
    this.#sweep(now);
    const kept = this.#live(event.id, now);
    if (kept !== undefined) return { status: 'duplicate', event: kept.event };
    const stored: StoredEvent = {
      id: event.id,
      name: event.name,
      payload: structuredClone(event.payload),
      ts: event.ts ?? now,
      receivedAt: now,
      effects: NO_EFFECTS,
    };
    this.#entries.set(event.id, { event: stored, expiresAt: now + this.ttlMs });
    return { status: 'accepted', event: stored };
  }

  async get(id: string): Promise<StoredEvent | undefined> {
    return this.#live(id, this.#clock.now())?.event;
  }

  async addEffect(id: string, kind: EventEffectKind, executionId: string): Promise<boolean> {
    const entry = this.#live(id, this.#clock.now());
    if (entry === undefined) return false;
    const effects = entry.event.effects;
    if (!effects[kind].includes(executionId))
      entry.event = { ...entry.event, effects: { ...effects, [kind]: [...effects[kind], executionId] } };
    return true;
  }

  async list(filter: EventFilter): Promise<EventPage> {
    const now = this.#clock.now();
    const after = filter.cursor === undefined ? undefined : decodeListCursor(filter.cursor);
    const matching = [...this.#entries.values()]
      .filter(({ event: e, expiresAt }) => {
        if (expiresAt <= now || !isAfter(e.receivedAt, e.id, after)) return false;
        if (filter.name !== undefined && e.name !== filter.name) return false;
        if (filter.since !== undefined && e.receivedAt < filter.since) return false;
        return filter.until === undefined || e.receivedAt < filter.until;
      })
      .map((entry) => entry.event)
      .sort((a, b) => newestFirst({ createdAt: a.receivedAt, id: a.id }, { createdAt: b.receivedAt, id: b.id }));
    const events = matching.slice(0, filter.limit);
    const last = events[events.length - 1];
    return matching.length > filter.limit && last !== undefined
      ? { events, cursor: encodeListCursor({ createdAt: last.receivedAt, id: last.id }) }
      : { events };
  }

  /** The entry of `id` unless it expired (then it is dropped). */
  #live(id: string, now: number): Entry | undefined {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.expiresAt > now) return entry;
    this.#entries.delete(id);
    return undefined;
  }

  /** Drops expired events, at most once per second of clock time. */
  #sweep(now: number): void {
    if (now - this.#sweptAt < 1_000) return;
    this.#sweptAt = now;
    for (const [id, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(id);
  }
}
