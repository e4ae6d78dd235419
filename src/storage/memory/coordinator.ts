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
  LockAcquireRequest,
  LockAcquireResult,
  LockReleaseResult,
  LockState,
  OrderedCompleteRequest,
  OrderedEnterRequest,
  OrderedEnterResult,
  OrderedState,
  OrderedTicket,
  PeriodMarkRequest,
  PrimitiveKind,
  RateRefundRequest,
  RateState,
  RateTakeRequest,
  RateTakeResult,
  SemaphoreAcquireRequest,
  SemaphoreAcquireResult,
  SemaphoreState,
} from '../../ports/coordinator.js';
import type { CoordinationInspector, InspectedKey, InspectOptions } from '../../ports/inspector.js';
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
export class MemoryCoordinator implements Coordinator, KeyChanges, CancelAnnouncements, CoordinationInspector {
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

  constructor(options: MemoryCoordinatorOptions = {}) {
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
    // Ordered-lock entries are never swept: their epoch is what makes old tickets stale.
    ticker.track(this.#locks, this.#semaphores, this.#periods, this.#rates);
  }

  async time(): Promise<number> {
    return this.#clock.now();
  }

  // ── Exclusive lock ────────────────────────────────────────────────────────────────────────

  async lockAcquire(request: LockAcquireRequest): Promise<LockAcquireResult> {
    return this.#locks.acquire(request);
  }

  async lockRelease(key: string, owner: string): Promise<LockReleaseResult> {
    return this.#locks.release(key, owner);
  }

  async lockExtend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.#locks.extend(key, owner, ttlMs);
  }

  async lockState(key: string): Promise<LockState | undefined> {
    return this.#locks.state(key);
  }

  // ── Semaphore (leases) ────────────────────────────────────────────────────────────────────

  async semaphoreAcquire(request: SemaphoreAcquireRequest): Promise<SemaphoreAcquireResult> {
    return this.#semaphores.acquire(request);
  }

  async semaphoreRelease(
    key: string,
    owner: string,
  ): Promise<{ readonly released: boolean; readonly nesting: number }> {
    return this.#semaphores.release(key, owner);
  }

  async semaphoreExtend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.#semaphores.extend(key, owner, ttlMs);
  }

  async semaphoreState(key: string, limit?: number): Promise<SemaphoreState> {
    return this.#semaphores.state(key, limit);
  }

  // ── Rate limit ────────────────────────────────────────────────────────────────────────────

  async rateTake(request: RateTakeRequest): Promise<RateTakeResult> {
    return this.#rates.take(request);
  }

  async rateState(key: string, periodMs: number): Promise<RateState> {
    return this.#rates.state(key, periodMs);
  }

  async rateRefund(request: RateRefundRequest): Promise<void> {
    this.#rates.refund(request);
  }

  // ── Period ────────────────────────────────────────────────────────────────────────────────

  async periodIsMarked(key: string, bucket: string): Promise<boolean> {
    return this.#periods.isMarked(key, bucket);
  }

  async periodMark(request: PeriodMarkRequest): Promise<boolean> {
    return this.#periods.mark(request);
  }

  async periodNote(key: string, bucket: string): Promise<string | undefined> {
    return this.#periods.note(key, bucket);
  }

  async periodState(key: string, bucket: string): Promise<number | undefined> {
    return this.#periods.state(key, bucket);
  }

  // ── Ordered lock ──────────────────────────────────────────────────────────────────────────

  async orderedTicket(key: string): Promise<OrderedTicket> {
    return this.#ordered.ticket(key);
  }

  async orderedEnter(request: OrderedEnterRequest): Promise<OrderedEnterResult> {
    return this.#ordered.enter(request);
  }

  async orderedHeartbeat(ticket: OrderedTicket): Promise<boolean> {
    return this.#ordered.heartbeat(ticket);
  }

  async orderedComplete(request: OrderedCompleteRequest): Promise<OrderedState> {
    return this.#ordered.complete(request);
  }

  async orderedState(key: string): Promise<OrderedState> {
    return this.#ordered.state(key);
  }

  async orderedSkip(key: string): Promise<OrderedState> {
    return this.#ordered.skip(key);
  }

  async orderedReset(key: string): Promise<OrderedState> {
    return this.#ordered.reset(key);
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
