/**
 * The embedded Coordinator: the five coordination primitives kept in this process's memory.
 *
 * It is the default backend, not a mock: it has the same semantics as the Redis coordinator and
 * passes the same contract suite. Every deadline is an absolute time on the injected clock and
 * expiry is evaluated lazily on each call, so no timer drives the state and a `ManualClock`
 * controls every TTL, window and poison-pill age. This file is a facade: each primitive lives in
 * its own module under `coordinator/`. See `ARCHITECTURE.md` (section "Coordinator").
 *
 * @module
 */
import { systemClock, type Clock } from '../../ports/clock.js';
import type {
  CancelAnnouncements,
  Coordinator,
  CoordinatorFastPaths,
  KeyChanges,
  PrimitiveKind,
} from '../../ports/coordinator.js';
import type { CoordinationInspector, InspectedKey, InspectOptions } from '../../ports/inspector.js';
import { CoordinatorFacade, type CoordinatorPrimitives } from '../coordinator-facade.js';
import { inspectMemory } from './coordinator/inspect.js';
import type { PrimitiveContext } from './coordinator/context.js';
import { MemoryLocks } from './coordinator/locks.js';
import { MemoryOrdered } from './coordinator/ordered.js';
import { MemoryPeriods } from './coordinator/periods.js';
import { MemoryRates } from './coordinator/rates.js';
import { MemorySemaphores } from './coordinator/semaphores.js';
import { Ticker } from './coordinator/sweep.js';
import { Waiters } from './coordinator/waiters.js';

/** Options of {@link MemoryCoordinator}. */
export interface MemoryCoordinatorOptions {
  /** The clock every TTL, window and age is measured on. Default: the system clock. */
  readonly clock?: Clock;
}

/**
 * The in-memory {@link Coordinator}.
 *
 * @example
 * ```ts
 * const clock = new ManualClock({ autoAdvance: false });
 * const coordinator = new MemoryCoordinator({ clock });
 * await coordinator.lockAcquire({ key: 'acct:1', holder: { owner: 'run-1' }, ttlMs: 30_000 });
 * clock.advance(30_000); // the hold has expired: the next caller gets the key
 * ```
 */
export class MemoryCoordinator
  extends CoordinatorFacade
  implements Coordinator, KeyChanges, CancelAnnouncements, CoordinationInspector
{
  /** Its state lives in this process: no other process sees its holds. */
  readonly processLocal: boolean = true;
  /** In-process change notifications and cancel announcements; no watches, grants or freed keys (nothing travels between processes). */
  readonly fastPaths: CoordinatorFastPaths = { changes: this, cancels: this };
  readonly #clock: Clock;
  readonly #waiters: Waiters;
  readonly #locks: MemoryLocks;
  readonly #semaphores: MemorySemaphores;
  readonly #rates: MemoryRates;
  readonly #periods: MemoryPeriods;
  readonly #ordered: MemoryOrdered;
  protected override readonly primitives: CoordinatorPrimitives;

  constructor(options: MemoryCoordinatorOptions = {}) {
    super();
    this.#clock = options.clock ?? systemClock;
    const waiters = new Waiters(this.#clock);
    const ticker = new Ticker(this.#clock);
    const context: PrimitiveContext = { tick: () => ticker.tick(), notify: (kind, key) => waiters.notify(kind, key) };
    this.#waiters = waiters;
    this.#locks = new MemoryLocks(context);
    this.#semaphores = new MemorySemaphores(context);
    this.#rates = new MemoryRates(context);
    this.#periods = new MemoryPeriods(context);
    this.#ordered = new MemoryOrdered(context);
    this.primitives = {
      locks: this.#locks,
      semaphores: this.#semaphores,
      rates: this.#rates,
      periods: this.#periods,
      ordered: this.#ordered,
    };
    // Ordered-lock entries are never swept: their epoch is what makes old tickets stale.
    ticker.track(this.#locks, this.#semaphores, this.#periods, this.#rates);
  }

  async time(): Promise<number> {
    return this.#clock.now();
  }

  // ── Inspection ────────────────────────────────────────────────────────────────────────────

  /** See {@link CoordinationInspector.inspectKeys}. */
  async inspectKeys(kind: PrimitiveKind, options: InspectOptions = {}): Promise<readonly InspectedKey[]> {
    return inspectMemory(
      {
        locks: this.#locks,
        semaphores: this.#semaphores,
        rates: this.#rates,
        periods: this.#periods,
        ordered: this.#ordered,
      },
      kind,
      options,
    );
  }

  // ── Notifications ─────────────────────────────────────────────────────────────────────────

  /** See {@link KeyChanges.waitForChange}: the in-process listeners of the key. */
  waitForChange(kind: PrimitiveKind, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.#waiters.wait(kind, key, timeoutMs, signal);
  }

  readonly #cancelListeners = new Set<(executionId: string) => void>();

  /** See {@link CancelAnnouncements.announceCancel}: the listeners of this coordinator, in a later microtask. */
  async announceCancel(executionId: string): Promise<void> {
    await Promise.resolve();
    for (const listener of [...this.#cancelListeners]) listener(executionId);
  }

  /** See {@link CancelAnnouncements.onCancelAnnounced}. */
  onCancelAnnounced(listener: (executionId: string) => void, onListening?: () => void): () => void {
    this.#cancelListeners.add(listener);
    if (onListening !== undefined) queueMicrotask(onListening); // listening at once: nothing was missed, a look costs little
    return () => void this.#cancelListeners.delete(listener);
  }

  /** Wakes every waiter; later waits resolve at once. The state itself stays readable. */
  async close(): Promise<void> {
    this.#waiters.close();
  }
}
