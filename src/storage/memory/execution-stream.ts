/**
 * The memory backend's {@link ExecutionStream}: each execution's events in an array in this
 * process, positions from one counter, waiting readers woken by the append. Every append happens
 * in this process, so a read wakes at the append; its `blockMs` bound is a real timer (a test's
 * manual clock that advances on every sleep would otherwise turn an idle watch into a busy loop).
 *
 * @module
 */
import type { ReactorEvent } from '../../ports/events.js';
import type { ExecutionStream, StreamBatch, StreamEntry, StreamReadOptions } from '../../ports/execution-stream.js';

/** Options of {@link MemoryExecutionStream}. */
export interface MemoryExecutionStreamOptions {
  /** Most entries kept per execution (the oldest dropped first). Default 1,000. */
  readonly maxEntries?: number | undefined;
  /** Most executions whose streams are kept (the least recently appended to dropped first). Default 10,000. */
  readonly maxExecutions?: number | undefined;
}

interface Stream {
  readonly entries: StreamEntry[];
  readonly waiters: Set<() => void>;
}

/** Positions are zero-padded so that they also sort as text. */
function positionOf(n: number): string {
  return n.toString().padStart(16, '0');
}

/** Each execution's events, in this process. */
export class MemoryExecutionStream implements ExecutionStream {
  readonly #maxEntries: number;
  readonly #maxExecutions: number;
  readonly #streams = new Map<string, Stream>();
  /** The execution appended to last: the newest place of {@link #streams} already. */
  #newest: string | undefined;
  #next = 1;
  #closed = false;

  constructor(options: MemoryExecutionStreamOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 1_000;
    this.#maxExecutions = options.maxExecutions ?? 10_000;
  }

  append(batches: readonly StreamBatch[]): Promise<void> {
    for (const { executionId, events } of batches) for (const event of events) this.appendNow(executionId, event);
    return Promise.resolve();
  }

  appendNow(executionId: string, event: ReactorEvent): void {
    const stream = this.#stream(executionId);
    stream.entries.push({ position: positionOf(this.#next++), event });
    if (stream.entries.length > this.#maxEntries) stream.entries.splice(0, stream.entries.length - this.#maxEntries);
    for (const wake of stream.waiters) wake();
  }

  async read(
    executionId: string,
    after: string | undefined,
    options: StreamReadOptions,
  ): Promise<readonly StreamEntry[]> {
    const found = this.#after(executionId, after, options.limit);
    if (found.length > 0 || options.blockMs <= 0 || this.#closed || options.signal?.aborted) return found;
    const stream = this.#stream(executionId, false);
    let wake = (): void => undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve) => {
        wake = resolve;
        stream.waiters.add(wake);
        options.signal?.addEventListener('abort', wake, { once: true });
        timer = setTimeout(wake, options.blockMs);
        timer.unref();
      });
    } finally {
      clearTimeout(timer);
      stream.waiters.delete(wake);
      options.signal?.removeEventListener('abort', wake);
    }
    return this.#after(executionId, after, options.limit);
  }

  close(): Promise<void> {
    this.#closed = true;
    for (const stream of this.#streams.values()) for (const wake of stream.waiters) wake();
    return Promise.resolve();
  }

  #after(executionId: string, after: string | undefined, limit: number): StreamEntry[] {
    const entries = this.#streams.get(executionId)?.entries;
    if (entries === undefined) return [];
    let from = 0;
    if (after !== undefined) {
      // Entries are in position order: the first one past `after`, by binary search.
      let lo = 0;
      let hi = entries.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (entries[mid]!.position <= after) lo = mid + 1;
        else hi = mid;
      }
      from = lo;
    }
    return entries.slice(from, from + limit);
  }

  /** The stream of `executionId`; a new one (when `appending`, moved to the newest place) as needed. */
  #stream(executionId: string, appending = true): Stream {
    let stream = this.#streams.get(executionId);
    if (stream === undefined) {
      stream = { entries: [], waiters: new Set() };
      this.#streams.set(executionId, stream);
      if (this.#streams.size > this.#maxExecutions) {
        for (const [id, oldest] of this.#streams) {
          if (this.#streams.size <= this.#maxExecutions) break;
          if (oldest.waiters.size === 0 && id !== executionId) this.#streams.delete(id);
        }
      }
    } else if (appending && executionId !== this.#newest) {
      this.#streams.delete(executionId);
      this.#streams.set(executionId, stream);
    }
    if (appending) this.#newest = executionId;
    return stream;
  }
}
