/**
 * The one rule that bounds an execution's trace (docs/decisions/073): a trace holds at most
 * `maxTraceEntries` entries (default {@link DEFAULT_MAX_TRACE_ENTRIES}). When it would hold more,
 * its oldest entries — all but the very first one, which says how the execution began — are
 * folded into one `trace.summarized` entry that counts them by type; a later fold absorbs that
 * summary, so its counts keep adding up. A fold takes a quarter of the bound at once, so bounding
 * costs amortised O(1) per appended entry.
 *
 * Used for the in-memory trace of a run (`RunState`) and for every event appended to a persisted
 * record's trace (the sweep, a retry's link).
 *
 * @module
 */
import type { EventOf, ReactorEvent } from '../../ports/events.js';

/** The bound of a trace when `createEngine` is given no `maxTraceEntries`. */
export const DEFAULT_MAX_TRACE_ENTRIES = 1_000;

/** The smallest bound `createEngine` accepts for `maxTraceEntries`. */
export const MIN_TRACE_ENTRIES = 10;

/** The entry a fold leaves in place of the oldest entries. */
export type TraceSummary = EventOf<'trace.summarized'>;

/**
 * `value` as a trace bound: an integer ≥ {@link MIN_TRACE_ENTRIES}, the default when undefined.
 * `where` names the call the option was given to, for the message.
 *
 * @throws RangeError naming the option for anything else.
 */
export function traceBoundOf(value: unknown, where = 'createEngine'): number {
  if (value === undefined) return DEFAULT_MAX_TRACE_ENTRIES;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= MIN_TRACE_ENTRIES) return value;
  const got =
    typeof value === 'number' ? String(value) : typeof value === 'string' ? JSON.stringify(value) : typeof value;
  throw new RangeError(
    `${where}: maxTraceEntries must be an integer >= ${MIN_TRACE_ENTRIES} (got ${got}); default ${DEFAULT_MAX_TRACE_ENTRIES}`,
  );
}

/**
 * Bounds `trace` in place: once it holds more than `max` entries, the oldest ones (after the
 * first) are folded into one summary, leaving `max - ⌊max / 4⌋` entries. Order is kept: the first
 * entry, the summary, then the newest entries as they were.
 */
export function boundTrace(trace: ReactorEvent[], max: number): void {
  if (trace.length <= max) return;
  const head = trace[0]?.type === 'trace.summarized' ? 0 : 1;
  const keep = max - Math.floor(max / 4) - head - 1; // newest entries left after the summary
  const count = trace.length - head - keep;
  const summary = summarize(trace, head, head + count);
  trace.splice(head, count, summary);
}

/** A copy of `trace` with `events` appended, bounded by `max` (a persisted record's trace). */
export function appendToTrace(
  trace: readonly ReactorEvent[] | undefined,
  max: number,
  ...events: readonly ReactorEvent[]
): ReactorEvent[] {
  const next = [...(trace ?? []), ...events];
  boundTrace(next, max);
  return next;
}

/** One summary of `trace[from, to)`: an earlier summary among them is absorbed (its counts added). */
function summarize(trace: readonly ReactorEvent[], from: number, to: number): TraceSummary {
  const first = trace[from]!;
  const last = trace[to - 1]!;
  const byType: Record<string, number> = {};
  let dropped = 0;
  for (let i = from; i < to; i++) {
    const event = trace[i]!;
    if (event.type === 'trace.summarized') {
      dropped += event.dropped;
      for (const [type, n] of Object.entries(event.byType)) byType[type] = (byType[type] ?? 0) + n;
    } else {
      dropped += 1;
      byType[event.type] = (byType[event.type] ?? 0) + 1;
    }
  }
  const end = last.type === 'trace.summarized' ? last.to : last.at;
  return {
    type: 'trace.summarized',
    executionId: first.executionId,
    rootExecutionId: first.rootExecutionId,
    reactor: first.reactor,
    // The summary stands where the folded entries stood: its time is the last one's, so the trace stays in time order.
    at: end,
    dropped,
    byType,
    from: first.type === 'trace.summarized' ? first.from : first.at,
    to: end,
  };
}
