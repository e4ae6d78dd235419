/**
 * The Redis {@link ExecutionStream} (docs/decisions/138): one Redis stream per execution
 * (`rx:exec:{<id>}:events`, the record's hash tag), its entry ids the positions. An append is
 * one `stream-append` script for all its executions (on a cluster, one per execution: their
 * streams are on different slots), which adds each event (`XADD … MAXLEN ~ <maxEntries>`) and
 * keeps each stream for the records' TTL (docs/decisions/158). A read is an `XRANGE` after the position; with nothing there, an `XREAD BLOCK` on a
 * connection of its own (taken from a small pool, so a blocked read never holds up the command
 * connection), ended early by its abort signal. On the store's own connection to one server the
 * stream is `ordered`: the engine sends appends right before the checkpoint after them.
 *
 * @module
 */
import { isCluster, quit, duplicateBlocking, type RedisConnection } from './connection.js';
import type { RedisKeys } from './keys.js';
import { runCommand, runScript, type ScriptArg } from './script.js';
import { scripts } from './scripts.js';
import type { ReactorEvent } from '../../ports/events.js';
import type { ExecutionStream, StreamBatch, StreamEntry, StreamReadOptions } from '../../ports/execution-stream.js';
import { eventJson } from '../record-json.js';

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
  readonly #maxEntries: number;
  readonly #cluster: boolean;
  readonly #idle: RedisConnection[] = [];
  readonly #busy = new Set<RedisConnection>();
  #closed = false;
  readonly ordered: boolean;

  constructor(options: RedisExecutionStreamOptions) {
    this.#redis = options.redis;
    this.ordered = options.sharesStoreConnection === true;
    this.#keys = options.keys;
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries ?? 1_000;
    this.#cluster = isCluster(options.redis);
  }

  async append(batches: readonly StreamBatch[]): Promise<void> {
    if (batches.length === 0) return;
    if (!this.#cluster) {
      await this.#appendScript(batches);
      return;
    }
    await Promise.all(batches.map((batch) => this.#appendScript([batch])));
  }

  /** One `stream-append` call for `batches` (streams on one slot, or one server). */
  #appendScript(batches: readonly StreamBatch[]): Promise<number> {
    const keys: string[] = [];
    const args: ScriptArg[] = [this.#maxEntries, this.#ttlMs];
    for (const { executionId, events } of batches) {
      keys.push(this.#keys.executionStream(executionId));
      args.push(events.length);
      for (const event of events) args.push(eventJson(event));
    }
    return runScript(this.#redis, scripts.streamAppend, keys, args);
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
