/**
 * The PostgreSQL {@link ExecutionStream} (docs/decisions/138): each execution's events as rows of
 * `execution_events` (migration 9), the positions from one sequence. An append is one call of
 * `execution_events_append` (every batch of the call, one round trip), which NOTIFYs the events
 * channel once per execution at commit. A read selects after the position; with nothing there, it
 * waits for a notification of its execution on one LISTEN connection per stream (opened at the
 * first waiting read), then selects again.
 *
 * @module
 */
import pg from 'pg';
import type { Client } from 'pg';
import { NotificationListener } from './coordinator/listener.js';
import type { PostgresStore } from './store.js';
import type { ReactorEvent } from '../../ports/events.js';
import type { ExecutionStream, StreamBatch, StreamEntry, StreamReadOptions } from '../../ports/execution-stream.js';
import { eventJson } from '../record-json.js';

/** The `application_name` of the events' LISTEN connection (for operators reading `pg_stat_activity`). */
export const EVENTS_LISTEN_APPLICATION = 'ts-reactor/events';

/** Options of {@link PostgresExecutionStream}. */
export interface PostgresExecutionStreamOptions {
  /** The store whose schema (migrated to version 9 or later), pool and record retention the stream uses. */
  readonly store: PostgresStore;
  /** Makes the LISTEN connection (tests); default: a client with the pool's options. */
  readonly listenClient?: (() => Client) | undefined;
}

/** Each execution's events in PostgreSQL, readable by every process. */
export class PostgresExecutionStream implements ExecutionStream {
  readonly #store: PostgresStore;
  readonly #listener: NotificationListener;
  readonly #waiters = new Map<string, Set<() => void>>();
  #closed = false;

  constructor(options: PostgresExecutionStreamOptions) {
    this.#store = options.store;
    const store = options.store;
    const connect =
      options.listenClient ??
      (() => new pg.Client({ ...store.pool.options, application_name: EVENTS_LISTEN_APPLICATION }));
    this.#listener = new NotificationListener(connect, store.names.eventsChannel, {
      onNotification: (executionId) => this.#wake(executionId),
      // Listening again after a reconnect: what was notified meanwhile passed by; every waiter looks again.
      onListening: () => {
        for (const id of [...this.#waiters.keys()]) this.#wake(id);
      },
      onDegraded: () => undefined,
    });
  }

  async append(batches: readonly StreamBatch[]): Promise<void> {
    const ids: string[] = [];
    const events: string[] = [];
    for (const batch of batches)
      for (const event of batch.events) {
        ids.push(batch.executionId);
        events.push(eventJson(event));
      }
    if (ids.length === 0) return;
    const ttl = this.#store.recordTtlMs;
    await this.#store.run('stream-append', () =>
      this.#store.pool.query(`SELECT ${this.#store.names.executionEventsAppend}($1::text[], $2::json[], $3::bigint)`, [
        ids,
        events,
        ttl === Infinity ? null : ttl,
      ]),
    );
  }

  async read(
    executionId: string,
    after: string | undefined,
    options: StreamReadOptions,
  ): Promise<readonly StreamEntry[]> {
    const found = await this.#select(executionId, after, options.limit);
    if (found.length > 0 || options.blockMs <= 0 || this.#closed || options.signal?.aborted === true) return found;
    await this.#listener.listening();
    let wake = (): void => undefined;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let waiters = this.#waiters.get(executionId);
    if (waiters === undefined) this.#waiters.set(executionId, (waiters = new Set()));
    waiters.add(wake);
    const timer = setTimeout(wake, options.blockMs);
    timer.unref();
    options.signal?.addEventListener('abort', wake, { once: true });
    try {
      // Listening now: an append that committed before it is found by this select, any later one notifies.
      const again = await this.#select(executionId, after, options.limit);
      if (again.length > 0) return again;
      await woken;
      if (this.#closed || aborted(options.signal)) return [];
      return await this.#select(executionId, after, options.limit);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', wake);
      waiters.delete(wake);
      if (waiters.size === 0) this.#waiters.delete(executionId);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const id of [...this.#waiters.keys()]) this.#wake(id);
    await this.#listener.close();
  }

  #wake(executionId: string): void {
    for (const wake of this.#waiters.get(executionId) ?? []) wake();
  }

  async #select(executionId: string, after: string | undefined, limit: number): Promise<StreamEntry[]> {
    const { rows } = await this.#store.run('stream-read', () =>
      this.#store.pool.query<{ position: string; event: ReactorEvent }>(
        `SELECT e.position::text AS position, e.event FROM ${this.#store.names.executionEvents} AS e
          WHERE e.execution_id = $1 AND e.position > $2::bigint AND (e.expires_at IS NULL OR e.expires_at > now())
          ORDER BY e.position LIMIT $3`,
        [executionId, after ?? '0', limit],
      ),
    );
    return rows.map((row) => ({ position: row.position, event: row.event }));
  }
}

/** Whether `signal` is aborted (a call, so a check before an await does not narrow the one after). */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
