/**
 * The Redis {@link ExecutionStream} (docs/decisions/138): one Redis stream per execution
 * (`rx:exec:{<id>}:events`, the record's hash tag), its entry ids the positions. An append sends
 * one `XADD … MAXLEN ~ <maxEntries>` per event and one `PEXPIRE` per execution (the records'
 * TTL), all without waiting for one another: on the command connection they leave in one socket
 * write. A read is an `XRANGE` after the position; with nothing there, an `XREAD BLOCK` on a
 * connection of its own (taken from a small pool, so a blocked read never holds up the command
 * connection), ended early by its abort signal. On the store's own connection to one server the
 * stream is `ordered`: the engine sends appends right before the checkpoint after them.
 *
 * @module
 */
import { quit, duplicateBlocking, type RedisConnection } from './connection.js';
import type { RedisKeys } from './keys.js';
import { runCommand } from './script.js';
import type { ReactorEvent } from '../../ports/events.js';
import type { ExecutionStream, StreamBatch, StreamEntry, StreamReadOptions } from '../../ports/execution-stream.js';

/** Options of {@link RedisExecutionStream}. */
export interface RedisExecutionStreamOptions {
  readonly redis: RedisConnection;
  readonly keys: RedisKeys;
  /** How long a stream is kept after its last append (ms): the records' TTL. */
  readonly ttlMs: number;
  /** About how many entries a stream keeps (`MAXLEN ~`: at least this many, the oldest trimmed). Default 1,000. */
  readonly maxEntries?: number | undefined;
  /**
   * The store writes records on this same connection, one server (not a cluster): appends and
   * record writes run in the order sent ({@link ExecutionStream.ordered}). Default false.
   */
  readonly sharesStoreConnection?: boolean | undefined;
}

/** Idle blocking connections kept for the next blocked read. */
const IDLE_READERS = 4;

type RawEntry = [id: string, fields: string[]];

/** Each execution's events in a Redis stream. */
export class RedisExecutionStream implements ExecutionStream {
  readonly #redis: RedisConnection;
  readonly #keys: RedisKeys;
  readonly #ttlMs: number;
  readonly #maxEntries: string;
  readonly #idle: RedisConnection[] = [];
  readonly #busy = new Set<RedisConnection>();
  #closed = false;
  readonly ordered: boolean;

  constructor(options: RedisExecutionStreamOptions) {
    this.#redis = options.redis;
    this.ordered = options.sharesStoreConnection === true;
    this.#keys = options.keys;
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = String(options.maxEntries ?? 1_000);
  }

  async append(batches: readonly StreamBatch[]): Promise<void> {
    const redis = this.#redis;
    const sent: Promise<unknown>[] = [];
    for (const { executionId, events } of batches) {
      const key = this.#keys.executionStream(executionId);
      for (const event of events)
        sent.push(redis.xadd(key, 'MAXLEN', '~', this.#maxEntries, '*', 'e', JSON.stringify(event)));
      sent.push(redis.pexpire(key, this.#ttlMs));
    }
    await runCommand('stream-append', () => Promise.all(sent));
  }

  async read(
    executionId: string,
    after: string | undefined,
    options: StreamReadOptions,
  ): Promise<readonly StreamEntry[]> {
    const key = this.#keys.executionStream(executionId);
    const start = after === undefined ? '-' : `(${after}`;
    const found = await runCommand('stream-read', () => this.#redis.xrange(key, start, '+', 'COUNT', options.limit));
    if (found.length > 0 || options.blockMs <= 0 || this.#closed || options.signal?.aborted === true)
      return entriesOf(found);
    return this.#blockingRead(key, after ?? '0-0', options);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const conn of this.#busy) conn.disconnect();
    this.#busy.clear();
    await Promise.all(this.#idle.splice(0).map((conn) => quit(conn)));
  }

  async #blockingRead(key: string, after: string, options: StreamReadOptions): Promise<readonly StreamEntry[]> {
    const conn = this.#idle.pop() ?? this.#newReader();
    this.#busy.add(conn);
    let aborted = false;
    const abort = (): void => {
      aborted = true;
      conn.disconnect(); // the only way to end a blocked XREAD at once; the connection is not reused
    };
    options.signal?.addEventListener('abort', abort, { once: true });
    try {
      const reply = await conn.xread('COUNT', options.limit, 'BLOCK', options.blockMs, 'STREAMS', key, after);
      return entriesOf(reply?.[0]?.[1] ?? []);
    } catch (error) {
      if (aborted || this.#closed) return [];
      throw error;
    } finally {
      options.signal?.removeEventListener('abort', abort);
      this.#busy.delete(conn);
      if (aborted || this.#closed || this.#idle.length >= IDLE_READERS) void quit(conn);
      else this.#idle.push(conn);
    }
  }

  #newReader(): RedisConnection {
    const conn = duplicateBlocking(this.#redis);
    conn.on('error', () => undefined); // a read reports its own failure
    return conn;
  }
}

function entriesOf(raw: readonly RawEntry[]): StreamEntry[] {
  return raw.map(([position, fields]) => ({ position, event: JSON.parse(fields[1]!) as ReactorEvent }));
}
