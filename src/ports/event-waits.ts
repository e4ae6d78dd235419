/**
 * The EventWaits port: the index of executions waiting for an event — a `.waitForEvent` step to
 * resume, or a `.cancelOn` registration to cancel — keyed by the event's name and a canonical
 * match key, so that a sent event finds the waits it may concern without reading any other. The
 * memory backend keeps it in process (`storage/memory/event-waits.ts`), Redis in one script per
 * transition (`storage/redis/event-waits.ts`), PostgreSQL in one function per transition
 * (`storage/postgres/event-waits.ts`). Decision 148.
 *
 * @module
 */
import { ListFilterError } from '../errors/input.js';

/** What a registration does when a matching event arrives: resume a waiting step, or cancel the execution. */
export type EventWaitKind = 'resume' | 'cancel';

/** The kinds of registration, in the order a key lists them. */
export const EVENT_WAIT_KINDS: readonly EventWaitKind[] = Object.freeze(['resume', 'cancel']);

/**
 * Where a registration is filed: the event's name and its canonical match key (the values of the
 * waiting step's `matchOn` fields, see `matchKeyOf`; `''` for a wait without `matchOn`).
 */
export interface EventWaitKey {
  /** The event's name (`payment.settled`). */
  readonly event: string;
  /** The canonical match key; `''` when the wait declares no `matchOn`. */
  readonly matchKey: string;
}

/**
 * One registration, as it is added and removed. Its identity is the whole tuple: adding it again
 * changes nothing, and two registrations differing in any member are two entries.
 */
export interface EventWaitEntry extends EventWaitKey {
  readonly kind: EventWaitKind;
  /** The execution that waits. */
  readonly executionId: string;
  /**
   * Which of the execution's waits this is: the waiting step's name for `resume`; for `cancel`,
   * what the registrant chooses (`''` when an execution has one). Keeps two waits of one
   * execution under one key apart.
   */
  readonly ref: string;
}

/** A kept registration: the entry, and when it was first added. */
export interface EventWait extends EventWaitEntry {
  /**
   * When the registration was first added, epoch ms on the backend's clock — the clock of
   * `StoredEvent.receivedAt` (the memory backend's injected clock, Redis `TIME`, PostgreSQL
   * `now()`), so the two compare. A repeated `add` leaves it unchanged.
   */
  readonly since: number;
}

/** One page of {@link EventWaits.lookup}: the registrations in key order, and the cursor of the next page when there is one. */
export interface EventWaitPage {
  readonly waits: readonly EventWait[];
  /** Pass as `after` to read the next page; absent on the last page. */
  readonly cursor?: string | undefined;
}

/** Paging of {@link EventWaits.lookup}. */
export interface EventWaitLookup {
  /** Registrations per page (a positive integer). */
  readonly limit: number;
  /** The cursor of the previous page; absent: from the first registration. */
  readonly after?: string | undefined;
}

/**
 * The index of event waits. Every method is one atomic transition of the backend (one script,
 * one SQL function, one synchronous block). A lookup reads the registrations of one
 * (event, match key, kind) and nothing else: its cost is that of the registrations it returns,
 * however many other executions wait for other keys or names. Registrations are not expired by
 * the index: the engine removes them when a wait ends and drops, on sight, those whose execution
 * no longer waits (a crashed process's leftovers).
 */
export interface EventWaits {
  /**
   * Files `entry` under its key unless it is filed already; answers the kept registration (its
   * `since` is the first add's time).
   */
  add(entry: EventWaitEntry): Promise<EventWait>;
  /** Removes `entry`; answers whether it was filed (removing a missing entry is a no-op). */
  remove(entry: EventWaitEntry): Promise<boolean>;
  /**
   * The registrations of `kind` filed under `key`, in a stable order (kind, execution id, ref),
   * one page at a time: registrations added or removed meanwhile never make a page repeat or skip
   * one that was filed throughout. A cursor this index cannot read throws `ListFilterError`
   * (`list_filter_invalid`).
   */
  lookup(key: EventWaitKey, kind: EventWaitKind, page: EventWaitLookup): Promise<EventWaitPage>;
}

/** The separator of a registration's parts in a member or cursor: a character no name carries in practice. */
export const EVENT_WAIT_SEPARATOR = '\u001f';

/**
 * The member of a registration under its key, `kind`, execution id and ref joined by
 * {@link EVENT_WAIT_SEPARATOR}: what the backends sort a key's registrations by, and the cursor of
 * a page (the last member it returned).
 */
export function eventWaitMember(entry: Pick<EventWaitEntry, 'kind' | 'executionId' | 'ref'>): string {
  return [entry.kind, entry.executionId, entry.ref].join(EVENT_WAIT_SEPARATOR);
}

/**
 * The canonical match key of a wait or an event: the values of `fields` (in the order given) read
 * from `source`, as a JSON array; `''` when `fields` is empty. The engine computes it from a
 * waiting step's args when it registers and from an event's payload when it looks up, with the
 * same field list, so equal values give equal keys (`'o-1'` and `1` do not).
 */
export function matchKeyOf(fields: readonly string[], source: unknown): string {
  if (fields.length === 0) return '';
  const record = (typeof source === 'object' && source !== null ? source : {}) as Record<string, unknown>;
  return JSON.stringify(fields.map((field) => record[field] ?? null));
}

/**
 * Checks a lookup's `after` cursor: a member of `kind` (what a page of that kind answered).
 *
 * @throws ListFilterError (`list_filter_invalid`) when it is not.
 */
export function checkEventWaitCursor(kind: EventWaitKind, after: string | undefined): void {
  if (after === undefined || after.startsWith(kind + EVENT_WAIT_SEPARATOR)) return;
  throw new ListFilterError({ field: 'cursor', value: JSON.stringify(after) }, 'is not a cursor of this lookup');
}

/**
 * Checks a lookup's `limit`: a positive safe integer.
 *
 * @throws RangeError when it is not.
 */
export function checkEventWaitLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a positive integer; got ${String(limit)}`);
}
