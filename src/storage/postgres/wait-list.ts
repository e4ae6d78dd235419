/**
 * {@link WaitList} over PostgreSQL: one row per waiter in `wait_list_entries` (migration 5), its
 * place a number from one sequence. `add` and `shift` are the `wait_list_add` and
 * `wait_list_shift` functions; `remove` and `list` are one plain statement each. A waiter
 * expires `ttlMs` after it was added (its execution wakes by its fallback job anyway)
 * (docs/decisions/130).
 *
 * @module
 */
import type { WaitList } from '../../ports/wait-list.js';
import type { PostgresStore } from './store.js';
import { positiveInteger } from '../positive-integer.js';

/** Default lifetime of a waiter: 7 days (as on Redis). */
export const DEFAULT_WAITER_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Options of {@link PostgresWaitList}. */
export interface PostgresWaitListOptions {
  /** The store whose schema (migrated to version 5 or later) and pool the lists use. */
  readonly store: PostgresStore;
  /** How long a waiter is kept after it was added, in ms; default {@link DEFAULT_WAITER_TTL_MS}. */
  readonly ttlMs?: number;
}

/** Wait lists in PostgreSQL, shared by every worker process. */
export class PostgresWaitList implements WaitList {
  readonly #store: PostgresStore;
  /** How long a waiter is kept after it was added, in ms. */
  readonly ttlMs: number;

  /** @throws RangeError when `ttlMs` is not a positive integer. */
  constructor(options: PostgresWaitListOptions) {
    this.#store = options.store;
    this.ttlMs = positiveInteger('ttlMs', options.ttlMs ?? DEFAULT_WAITER_TTL_MS);
  }

  async add(key: string, jobId: string): Promise<void> {
    await this.#query('wait-list-add', `SELECT ${this.#store.names.waitListAdd}($1::text, $2::text, $3::bigint)`, [
      key,
      jobId,
      this.ttlMs,
    ]);
  }

  async shift(key: string): Promise<string | undefined> {
    const rows = await this.#query<{ job_id: string | null }>(
      'wait-list-shift',
      `SELECT ${this.#store.names.waitListShift}($1::text) AS job_id`,
      [key],
    );
    return rows[0]?.job_id ?? undefined;
  }

  async remove(key: string, jobId: string): Promise<void> {
    await this.#query(
      'wait-list-remove',
      `DELETE FROM ${this.#store.names.waitListEntries} WHERE key = $1 AND job_id = $2`,
      [key, jobId],
    );
  }

  async list(key: string): Promise<readonly string[]> {
    const rows = await this.#query<{ job_id: string }>(
      'wait-list-list',
      `SELECT job_id FROM ${this.#store.names.waitListEntries} WHERE key = $1 AND expires_at > now() ORDER BY seq`,
      [key],
    );
    return rows.map((row) => row.job_id);
  }

  /** One statement on the store's pool, once its schema is checked. */
  async #query<R>(operation: string, sql: string, values: readonly unknown[]): Promise<R[]> {
    return this.#store.run(operation, async () => (await this.#store.pool.query(sql, [...values])).rows as R[]);
  }
}
