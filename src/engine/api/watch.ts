/**
 * `engine.watch`: an execution's events as an async iterator, from any process, resumable from a
 * position, ending with the execution (docs/decisions/138, docs/progress.md).
 *
 * @module
 */
import { ExecutionNotFoundError, WatchUnavailableError } from '../../errors.js';
import type { ReactorEvent } from '../../ports/events.js';
import type { ExecutionStream, StreamEntry } from '../../ports/execution-stream.js';
import { TERMINAL_STATUSES, type Store } from '../../ports/store.js';

/** Options of `engine.watch`. */
export interface WatchOptions {
  /**
   * A position an earlier watch yielded (`WatchItem.position`): the watch continues with the
   * event after it, none skipped or repeated. Default: from the execution's first kept event.
   */
  readonly from?: string | undefined;
  /** Ends the watch early (the iterator returns). */
  readonly signal?: AbortSignal | undefined;
  /**
   * How long one read waits for a new event before the watch looks at the execution's record
   * (ms). Default 5,000.
   */
  readonly pollMs?: number | undefined;
}

/** One event of a watched execution, at its position in the execution's stream. */
export interface WatchItem {
  /** Where the event is: pass it as `from` to continue after it (an SSE event id). */
  readonly position: string;
  /** The event: any of the engine's events, `step.progress` included. */
  readonly event: ReactorEvent;
}

/** What a watch reads. */
export interface WatchDeps {
  readonly store: Store;
  readonly stream: ExecutionStream | undefined;
}

/** Entries read at once. */
const PAGE = 100;

/** The events after which an execution changes no more on its own: the watch ends with them. */
export function isTerminalEvent(event: ReactorEvent): boolean {
  if (event.type === 'run.recovered') return event.action === 'aborted';
  return TERMINAL_EVENTS.has(event.type);
}

const TERMINAL_EVENTS: ReadonlySet<ReactorEvent['type']> = new Set([
  'run.completed',
  'run.failed',
  'run.halted',
  'run.cancelled',
]);

/**
 * The events of `executionId`, oldest first, ending after its terminal event. A watch of a
 * finished execution replays its kept events, then ends; one whose stream lost its terminal event
 * (the process that ran it stopped first) ends once its record is terminal and nothing follows.
 *
 * @throws ExecutionNotFoundError (on the first `next()`) when the execution has no record.
 * @throws WatchUnavailableError when the engine has no execution stream.
 */
export async function* watchExecution(
  deps: WatchDeps,
  executionId: string,
  options: WatchOptions = {},
): AsyncGenerator<WatchItem, void, undefined> {
  const { stream, store } = deps;
  if (stream === undefined) throw new WatchUnavailableError(executionId);
  const pollMs = options.pollMs ?? 5_000;
  const signal = options.signal;
  const first = await store.get(executionId);
  if (first === undefined) throw new ExecutionNotFoundError(executionId);
  let after = options.from;
  // The record was terminal at the last look: its stream is complete (a terminal checkpoint waits
  // for the events before it), so read what is left without waiting, then end.
  let settled = TERMINAL_STATUSES.has(first.status);
  while (signal?.aborted !== true) {
    const entries: readonly StreamEntry[] = await stream.read(executionId, after, {
      blockMs: settled ? 0 : pollMs,
      limit: PAGE,
      signal,
    });
    for (const entry of entries) {
      after = entry.position;
      yield { position: entry.position, event: entry.event };
      if (isTerminalEvent(entry.event)) return;
    }
    if (entries.length > 0) continue;
    if (settled) return;
    const record = await store.get(executionId);
    // Gone (expired) or terminal: what the stream holds now is all there will be.
    settled = record === undefined || TERMINAL_STATUSES.has(record.status);
  }
}
