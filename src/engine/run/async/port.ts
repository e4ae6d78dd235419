/**
 * What async units need from the engine: the background path (unit records, the unit's job,
 * the coordinator, starting a child execution), the in-process completion signals, and the
 * reader bounds. Declared here, below the graph; the jobs layer builds the background part
 * (`jobs/async-port.ts`) and the engine wires it.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import type { Clock } from '../../../ports/clock.js';
import type { Coordinator } from '../../../ports/coordinator.js';
import type { JobQueue } from '../../../ports/queue.js';
import type { Store, TraceContext } from '../../../ports/store.js';

/** Dispatching async units and reading their results. */
export interface AsyncPort {
  /** Undefined when the engine has no queue: dispatching then fails the step (`queue_missing`). */
  readonly background: AsyncBackground | undefined;
  readonly signals: UnitSignals;
  /** How long an in-process reader waits for a unit before {@link AsyncWaitTimeoutError}. */
  readonly waitMs: number;
  /** How long a worker reader may stay parked on a unit, from its dispatch. */
  readonly parkTimeoutMs: number;
  /** How long a worker reader waits in-process before it parks. */
  readonly workerWaitMs: number;
  /** Resolves once the in-process pool has nothing ready or running, or the clock reached `until` (a test engine's); in-process readers await it before waiting on the clock. */
  readonly settled: ((until: number) => Promise<void>) | undefined;
  /** Makes a child reactor known to this engine's workers. */
  register(reactor: AnyReactorDefinition): void;
  /**
   * Cancels an unfinished `asyncReactor` child (its own children first, recursively) and waits up
   * to {@link AsyncPort.waitMs} for it to end (docs/decisions/087). Resolves with its status then:
   * `cancelled`, the status it ended with meanwhile, or `timed_out` when it did not end; undefined
   * when there was nothing to cancel (no record, or it had ended).
   */
  cancelChild(childId: string, reason: string): Promise<string | undefined>;
}

/** The background path as the dispatching side and the readers use it (an engine with a queue). */
export interface AsyncBackground {
  /** Holds the unit records (written before a unit's job is enqueued) and the children's records. */
  readonly store: Store;
  /** Takes a unit's first job. */
  readonly queue: JobQueue;
  /** The engine's coordinator, if any: the hand-off guard names the holder of a refused key. */
  readonly coordinator: Coordinator | undefined;
  /** Accepts an `asyncReactor` child like a background start; a child that exists already is left alone. */
  startChild(child: AnyReactorDefinition, start: ChildStart): Promise<void>;
}

/** Which child execution {@link AsyncBackground.startChild} starts, and for whom. */
export interface ChildStart {
  /** The child's execution id (its own root). */
  readonly childId: string;
  /** The child's validated input. */
  readonly input: Record<string, unknown>;
  /** The dispatching execution. */
  readonly parentId: string;
  /** The dispatcher's trace: the child's jobs join it (docs/decisions/028). */
  readonly traceContext?: TraceContext | undefined;
}

/** In-process notifications that a unit's terminal record was saved. */
export class UnitSignals {
  readonly #waiters = new Map<string, Set<() => void>>();

  /** Resolves every waiter of `unitId`. */
  notify(unitId: string): void {
    const waiters = this.#waiters.get(unitId);
    if (!waiters) return;
    this.#waiters.delete(unitId);
    for (const resolve of waiters) resolve();
  }

  /** Resolves on the next {@link notify} of `unitId`, or after `ms` on `clock`, whichever is first. */
  async wait(unitId: string, ms: number, clock: Clock): Promise<void> {
    const timer = new AbortController();
    let resolve!: () => void;
    const notified = new Promise<void>((r) => (resolve = r));
    const set = this.#waiters.get(unitId) ?? new Set();
    set.add(resolve);
    this.#waiters.set(unitId, set);
    try {
      await Promise.race([notified, clock.sleep(ms, timer.signal).catch(() => undefined)]);
    } finally {
      timer.abort();
      set.delete(resolve);
      if (set.size === 0 && this.#waiters.get(unitId) === set) this.#waiters.delete(unitId);
    }
  }
}
