/**
 * {@link EventWaits} over PostgreSQL: one row per registration in `event_waits` (migration 10),
 * its primary key (event, match key, kind, execution id, ref). `add` and `remove` are the
 * `event_wait_add` and `event_wait_remove` functions (the primary key makes one of concurrent adds
 * win; `since` is the database's `now()`); `lookup` is one statement, keyset over the primary
 * key within one (event, match key, kind), so it reads no other key's rows (decision 148).
 *
 * @module
 */
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
import type { PostgresStore } from './store.js';

/** Options of {@link PostgresEventWaits}. */
export interface PostgresEventWaitsOptions {
  /** The store whose schema (migrated to version 10 or later) and pool the index uses. */
  readonly store: PostgresStore;
}

/** The event-wait index in PostgreSQL, shared by every process on the same schema. */
export class PostgresEventWaits implements EventWaits {
  readonly #store: PostgresStore;

  constructor(options: PostgresEventWaitsOptions) {
    this.#store = options.store;
  }

  async add(entry: EventWaitEntry): Promise<EventWait> {
    const rows = await this.#query<{ readonly since: string }>(
      'event-wait-add',
      `SELECT ${this.#store.names.eventWaitAdd}($1::text, $2::text, $3::text, $4::text, $5::text) AS since`,
      argsOf(entry),
    );
    const since = rows[0]?.since;
    if (since === undefined || since === null) throw new Error('event_wait_add returned no time');
    return { ...copyOf(entry), since: Number(since) };
  }

  async remove(entry: EventWaitEntry): Promise<boolean> {
    const rows = await this.#query<{ readonly removed: boolean }>(
      'event-wait-remove',
      `SELECT ${this.#store.names.eventWaitRemove}($1::text, $2::text, $3::text, $4::text, $5::text) AS removed`,
      argsOf(entry),
    );
    return rows[0]?.removed === true;
  }

  async lookup(key: EventWaitKey, kind: EventWaitKind, page: EventWaitLookup): Promise<EventWaitPage> {
    checkEventWaitLimit(page.limit);
    checkEventWaitCursor(kind, page.after);
    const values: unknown[] = [key.event, key.matchKey, kind];
    let after = '';
    if (page.after !== undefined) {
      const [, executionId = '', ref = ''] = page.after.split(EVENT_WAIT_SEPARATOR);
      values.push(executionId, ref);
      after = 'AND (execution_id, ref) > ($4::text COLLATE "C", $5::text COLLATE "C")';
    }
    values.push(page.limit + 1);
    const rows = await this.#query<{ readonly execution_id: string; readonly ref: string; readonly since: string }>(
      'event-wait-lookup',
      `SELECT execution_id, ref, since FROM ${this.#store.names.eventWaits}
        WHERE event = $1 AND match_key = $2 AND kind = $3 ${after}
        ORDER BY execution_id, ref LIMIT $${values.length}`,
      values,
    );
    const waits: EventWait[] = rows.slice(0, page.limit).map((row) => ({
      event: key.event,
      matchKey: key.matchKey,
      kind,
      executionId: row.execution_id,
      ref: row.ref,
      since: Number(row.since),
    }));
    const last = waits[waits.length - 1];
    return rows.length > page.limit && last !== undefined ? { waits, cursor: eventWaitMember(last) } : { waits };
  }

  /** One statement on the store's pool, once its schema is checked. */
  async #query<R>(operation: string, sql: string, values: readonly unknown[]): Promise<R[]> {
    return this.#store.run(operation, async () => (await this.#store.pool.query(sql, [...values])).rows as R[]);
  }
}

/** The function arguments of an entry, in their order. */
function argsOf(entry: EventWaitEntry): unknown[] {
  return [entry.event, entry.matchKey, entry.kind, entry.executionId, entry.ref];
}

/** The entry's own members (not whatever else the caller's object carries). */
function copyOf(entry: EventWaitEntry): EventWaitEntry {
  return {
    event: entry.event,
    matchKey: entry.matchKey,
    kind: entry.kind,
    executionId: entry.executionId,
    ref: entry.ref,
  };
}
