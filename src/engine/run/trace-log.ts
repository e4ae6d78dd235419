/**
 * The trace of one execution in this process: every event it emitted (and the ones resumed
 * from its record), bounded by `maxTraceEntries` (docs/decisions/073), and the distributed trace
 * it belongs to. Events enter it only through {@link RunState.emit} and `emitRepeat`; the trace
 * context is given once, by the work scope that starts the execution's run or job.
 *
 * @module
 */
import type { ReactorEvent } from '../model/events.js';
import { boundTrace } from '../model/trace-bound.js';
import type { TraceContext } from '../../ports/store.js';

/** The bounded event list and the trace context of one execution. */
export class TraceLog {
  readonly #entries: ReactorEvent[] = [];
  readonly #max: number;
  #context: TraceContext | undefined;
  #links: readonly TraceContext[] | undefined;

  /** `resumed`: the persisted trace of the record the run resumes (bounded again: it may be from a larger bound). */
  constructor(max: number, resumed: readonly ReactorEvent[] | undefined, context: TraceContext | undefined) {
    this.#max = max;
    for (const event of resumed ?? []) this.#entries.push(event);
    boundTrace(this.#entries, max);
    this.#context = context;
  }

  /** The entries, oldest first (a live view: later events appear in it). */
  get entries(): readonly ReactorEvent[] {
    return this.#entries;
  }

  /** Appends an event, folding the oldest entries once over the bound. */
  append(event: ReactorEvent): void {
    this.#entries.push(event);
    if (this.#entries.length > this.#max) boundTrace(this.#entries, this.#max);
  }

  /**
   * Replaces the newest entry `repeats` picks with `event`, keeping that entry's time; false
   * (nothing replaced) when no entry matches.
   */
  replaceNewest(event: ReactorEvent, repeats: (entry: ReactorEvent) => boolean): boolean {
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const entry = this.#entries[i]!;
      if (!repeats(entry)) continue;
      this.#entries[i] = { ...event, at: entry.at };
      return true;
    }
    return false;
  }

  /** The distributed trace this execution belongs to, persisted with each checkpoint. */
  get context(): TraceContext | undefined {
    return this.#context;
  }

  /** Traces the spans that start this execution link to (a retry: the retried execution's); not persisted. */
  get links(): readonly TraceContext[] | undefined {
    return this.#links;
  }

  /** The work scope that runs this execution names its trace (a scope without tracing middleware gives none: no change). */
  traced(context: TraceContext | undefined): void {
    if (context !== undefined) this.#context = context;
  }

  /** The traces a start links to (set by the start, before its first job is enqueued). */
  linked(links: readonly TraceContext[] | undefined): void {
    this.#links = links;
  }
}
