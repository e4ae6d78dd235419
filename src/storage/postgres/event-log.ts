/**
 * {@link EventLog} over PostgreSQL: one row per kept event in `events` (migration 7). `append` and
 * `addEffect` are the `event_append` and `event_add_effect` functions (the primary key makes one
 * of concurrent appends of an id win; the receipt time is the database's `now()`); `get` and
 * `list` are one statement each, `list` keyset over `(received_at, id)` newest first. Events are
 * kept for the store's `recordTtlMs` after their receipt, or without end when it is not set, as
 * the records (docs/decisions/142).
 *
 * @module
 */
import {
  type AppendOutcome,
  type EventEffectKind,
  type EventEffects,
  type EventFilter,
  type EventLog,
  type EventPage,
  type NewEvent,
  type StoredEvent,
} from '../../ports/event-log.js';
import { decodeListCursor, encodeListCursor } from '../list-cursor.js';
import type { PostgresStore } from './store.js';

/** The `effects` column's key of each kind of effect. */
const KEY: Readonly<Record<EventEffectKind, string>> = { started: 's', resumed: 'r', cancelled: 'c' };

/** A row as read: bigint columns come back as text from `pg`. */
interface EventRow {
  readonly id: string;
  readonly name: string;
  readonly payload: unknown;
  readonly ts: string;
  readonly received_at: string;
  readonly effects: { readonly s?: string[]; readonly r?: string[]; readonly c?: string[] };
}

/** Options of {@link PostgresEventLog}. */
export interface PostgresEventLogOptions {
  /** The store whose schema (migrated to version 7 or later), pool and `recordTtlMs` the log uses. */
  readonly store: PostgresStore;
}

/** The event log in PostgreSQL, shared by every process on the same schema. */
export class PostgresEventLog implements EventLog {
  readonly #store: PostgresStore;

  constructor(options: PostgresEventLogOptions) {
    this.#store = options.store;
  }

  /** How long an event is kept after its receipt, in ms: the store's `recordTtlMs` (`Infinity`: kept). */
  get ttlMs(): number {
    return this.#store.recordTtlMs;
  }

  async append(event: NewEvent): Promise<AppendOutcome> {
    const ttl = this.ttlMs === Infinity ? null : this.ttlMs;
    const rows = await this.#query<Omit<EventRow, 'id'> & { readonly accepted: boolean }>(
      'event-append',
      `SELECT * FROM ${this.#store.names.eventAppend}($1::text, $2::text, $3::json, $4::bigint, $5::bigint)`,
      [event.id, event.name, JSON.stringify(event.payload), event.ts ?? null, ttl],
    );
    const row = rows[0];
    if (row === undefined) throw new Error('event_append returned no row');
    const stored = eventOf({ ...row, id: event.id });
    return row.accepted ? { status: 'accepted', event: stored } : { status: 'duplicate', event: stored };
  }

  async get(id: string): Promise<StoredEvent | undefined> {
    const rows = await this.#query<EventRow>(
      'event-get',
      `SELECT id, name, payload, ts, received_at, effects FROM ${this.#store.names.events}
        WHERE id = $1 AND (expires_at IS NULL OR expires_at > now())`,
      [id],
    );
    return rows[0] === undefined ? undefined : eventOf(rows[0]);
  }

  async addEffect(id: string, kind: EventEffectKind, executionId: string): Promise<boolean> {
    const rows = await this.#query<{ readonly kept: boolean }>(
      'event-add-effect',
      `SELECT ${this.#store.names.eventAddEffect}($1::text, $2::text, $3::text) AS kept`,
      [id, KEY[kind], executionId],
    );
    return rows[0]?.kept === true;
  }

  async list(filter: EventFilter): Promise<EventPage> {
    const after = filter.cursor === undefined ? undefined : decodeListCursor(filter.cursor);
    const values: unknown[] = [];
    const where = ['(expires_at IS NULL OR expires_at > now())'];
    const bind = (value: unknown): string => `$${values.push(value)}`;
    if (filter.name !== undefined) where.push(`name = ${bind(filter.name)}`);
    if (filter.since !== undefined) where.push(`received_at >= ${bind(filter.since)}::bigint`);
    if (filter.until !== undefined) where.push(`received_at < ${bind(filter.until)}::bigint`);
    if (after !== undefined)
      where.push(`(received_at, id) < (${bind(after.createdAt)}::bigint, ${bind(after.id)}::text COLLATE "C")`);
    const rows = await this.#query<EventRow>(
      'event-list',
      `SELECT id, name, payload, ts, received_at, effects FROM ${this.#store.names.events}
        WHERE ${where.join(' AND ')} ORDER BY received_at DESC, id DESC LIMIT ${bind(filter.limit + 1)}`,
      values,
    );
    const events = rows.slice(0, filter.limit).map(eventOf);
    const last = events[events.length - 1];
    return rows.length > filter.limit && last !== undefined
      ? { events, cursor: encodeListCursor({ createdAt: last.receivedAt, id: last.id }) }
      : { events };
  }

  /** One statement on the store's pool, once its schema is checked. */
  async #query<R>(operation: string, sql: string, values: readonly unknown[]): Promise<R[]> {
    return this.#store.run(operation, async () => (await this.#store.pool.query(sql, [...values])).rows as R[]);
  }
}

/** An event from its row. */
function eventOf(row: EventRow): StoredEvent {
  const effects: EventEffects = {
    started: row.effects.s ?? [],
    resumed: row.effects.r ?? [],
    cancelled: row.effects.c ?? [],
  };
  return {
    id: row.id,
    name: row.name,
    payload: row.payload,
    ts: Number(row.ts),
    receivedAt: Number(row.received_at),
    effects,
  };
}
