/**
 * What async units need from the engine: the background path (store, queue, wait lists), the
 * in-process completion signals, and the reader bounds.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import type { BackgroundDeps } from '../../jobs/background.js';
import type { Clock } from '../../ports/clock.js';

/** Dispatching async units and reading their results. */
export interface AsyncPort {
  /** Undefined when the engine has no queue: dispatching then fails the step (`queue_missing`). */
  readonly background: BackgroundDeps | undefined;
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
