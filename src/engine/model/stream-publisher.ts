/**
 * The engine's side of the execution stream (docs/decisions/138): every event this engine emits
 * is appended to its execution's stream, so any process can watch it (`engine.watch`). Events
 * are gathered for one turn of the event loop and written in one `append` (one round trip on
 * Redis and PostgreSQL), the appends one after another so the stream keeps the emission order.
 * A checkpoint sends what is gathered first ({@link StreamPublisher.beforeWrite}), so the events
 * and the record it writes leave together. A terminal checkpoint waits for
 * {@link StreamPublisher.flushed} first — unless the stream is `ordered` (its appends run before
 * any record write sent after them): once a record is terminal, its stream holds every event
 * emitted before it.
 *
 * @module
 */
import type { Logger } from '../../dsl/context.js';
import type { ExecutionStream, StreamBatch } from '../../ports/execution-stream.js';
import type { ReactorEvent } from '../../ports/events.js';

/** Most events waiting for an append; past it the oldest waiting ones are dropped (and the loss logged). */
const MAX_PENDING_EVENTS = 100_000;

/**
 * Appends the events of an engine to the execution stream, batched per turn of the event loop (a
 * stream held in this process, with `appendNow`, takes each event at once instead).
 */
export class StreamPublisher {
  readonly #stream: ExecutionStream;
  readonly #logger: Logger;
  #pending = new Map<string, ReactorEvent[]>();
  #count = 0;
  #scheduled = false;
  #chain: Promise<void> = Promise.resolve();
  #failing = false;
  /** Appends run in the order sent, before any record write sent after them ({@link ExecutionStream.ordered}). */
  readonly ordered: boolean;

  constructor(stream: ExecutionStream, logger: Logger) {
    this.#stream = stream;
    this.#logger = logger;
    this.ordered = stream.ordered === true || stream.appendNow !== undefined; // appended at once: nothing to wait for
  }

  /** Takes one event (the event hub's listener). */
  readonly publish = (event: ReactorEvent): void => {
    if (this.#stream.appendNow !== undefined) {
      this.#stream.appendNow(event.executionId, event);
      return;
    }
    let events = this.#pending.get(event.executionId);
    if (events === undefined) {
      events = [];
      this.#pending.set(event.executionId, events);
    }
    events.push(event);
    if (++this.#count > MAX_PENDING_EVENTS) this.#dropOldest();
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  };

  /** Resolves once every event taken so far is appended (or its append failed, which is logged). */
  flushed(): Promise<void> {
    this.#flush();
    return this.#chain;
  }

  /**
   * Sends the events gathered so far now, without waiting (a checkpoint is about to be written:
   * on an `ordered` stream its record leaves in the same socket write, after them).
   */
  beforeWrite(): void {
    if (this.#count > 0) this.#flush();
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    if (this.#count === 0) return;
    const batches: StreamBatch[] = [];
    for (const [executionId, events] of this.#pending) batches.push({ executionId, events });
    this.#pending = new Map();
    this.#count = 0;
    if (this.ordered) {
      // Sent at once: the connection keeps the order, the replies need not be waited for in between.
      const sent = this.#append(batches);
      this.#chain = this.#chain.then(() => sent);
    } else this.#chain = this.#chain.then(() => this.#append(batches));
  };

  async #append(batches: readonly StreamBatch[]): Promise<void> {
    try {
      await this.#stream.append(batches);
      if (this.#failing) this.#logger.info({}, 'execution stream: appends succeed again');
      this.#failing = false;
    } catch (error) {
      if (!this.#failing)
        this.#logger.warn(
          { err: error, executions: batches.length },
          'execution stream: an append failed; watchers miss these events (runs go on)',
        );
      this.#failing = true;
    }
  }

  #dropOldest(): void {
    for (const events of this.#pending.values()) {
      if (events.shift() === undefined) continue;
      this.#count--;
      break;
    }
    if (!this.#failing) this.#logger.warn({}, 'execution stream: too many events waiting; the oldest dropped');
  }
}
