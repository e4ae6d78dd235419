/**
 * The ExecutionStream port: each execution's events, in order, readable by any process from a
 * position (`engine.watch`, the dashboard's stream route). Every engine appends the events it
 * emits; a watcher reads after the last position it saw, waiting a bounded time for more.
 * Implementations: memory (`storage/memory/execution-stream.ts`), Redis (a stream per execution,
 * `storage/redis/execution-stream.ts`), PostgreSQL (a table and LISTEN/NOTIFY,
 * `storage/postgres/execution-stream.ts`). Why it is cut this way: docs/decisions/138.
 *
 * @module
 */
import type { ReactorEvent } from './events.js';

/** One event of an execution's stream, at its position. */
export interface StreamEntry {
  /**
   * Where the event is in its execution's stream: an opaque string, strictly increasing in the
   * stream's order. Reading after it continues with the next entry, none skipped or repeated.
   */
  readonly position: string;
  readonly event: ReactorEvent;
}

/** The events of one execution that one append writes, in emission order. */
export interface StreamBatch {
  readonly executionId: string;
  readonly events: readonly ReactorEvent[];
}

/** Options of {@link ExecutionStream.read}. */
export interface StreamReadOptions {
  /** How long to wait for an entry when there is none after the position yet (ms; 0: answer at once). */
  readonly blockMs: number;
  /** Most entries returned. */
  readonly limit: number;
  /** Aborts the wait: the read resolves with what it has (nothing). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Each execution's events in order, kept as long as its record (bounded per execution: the oldest
 * entries of a very long stream are dropped, the newest `maxEntries` kept).
 */
export interface ExecutionStream {
  /**
   * Appends each batch's events to its execution's stream, in order, in as few round trips as the
   * backend allows (one for the whole call on Redis and PostgreSQL).
   */
  append(batches: readonly StreamBatch[]): Promise<void>;
  /**
   * Optional: true when appends and the store's writes travel in order on one channel (one
   * connection whose commands run in the order sent): an append sent before a record write is
   * applied before it, even when neither has been answered. The engine then sends each append
   * without waiting for the one before, right before the checkpoint that follows the events (one
   * socket write, one turn of the server), and writes a terminal record without waiting for the
   * appends' replies (Redis on one server; not a cluster, whose redirections may reorder).
   */
  readonly ordered?: boolean;
  /**
   * Optional: appends one event at once, synchronously (a stream held in this process, which
   * needs no batching and no round trip). When present, the engine calls it for every event it
   * emits instead of gathering them for {@link append}.
   */
  appendNow?(executionId: string, event: ReactorEvent): void;
  /**
   * The entries of `executionId`'s stream after `after` (from its start when undefined), oldest
   * first, at most `limit`. When there are none yet, waits up to `blockMs` for one to be appended
   * (by any process) and returns what then follows; an empty answer means none came in time.
   */
  read(executionId: string, after: string | undefined, options: StreamReadOptions): Promise<readonly StreamEntry[]>;
  /** Releases what the stream opened (blocking connections, listeners); pending reads resolve empty. */
  close(): Promise<void>;
}
