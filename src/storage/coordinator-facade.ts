/**
 * The part every backend's Coordinator shares: the transitions of the five primitives, each
 * handed to the backend's module for that primitive. A backend's coordinator extends
 * {@link CoordinatorFacade}, builds its modules, and adds what is its own (its clock, inspection,
 * fast paths, closing).
 *
 * @module
 */
import type {
  Coordinator,
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
  RateRefundRequest,
  RateState,
  RateTakeRequest,
  RateTakeResult,
  SemaphoreAcquireRequest,
  SemaphoreAcquireResult,
  SemaphoreState,
} from '../ports/coordinator.js';

/** An answer now (the memory backend) or later (a server's). */
type Answer<T> = T | Promise<T>;

/** The exclusive lock's transitions, as a backend's module offers them. */
export interface LockTransitions {
  acquire(request: LockAcquireRequest): Answer<LockAcquireResult>;
  release(key: string, owner: string): Answer<LockReleaseResult>;
  extend(key: string, owner: string, ttlMs: number): Answer<boolean>;
  state(key: string): Answer<LockState | undefined>;
}

/** The semaphore's transitions, as a backend's module offers them. */
export interface SemaphoreTransitions {
  acquire(request: SemaphoreAcquireRequest): Answer<SemaphoreAcquireResult>;
  release(key: string, owner: string): Answer<{ readonly released: boolean; readonly nesting: number }>;
  extend(key: string, owner: string, ttlMs: number): Answer<boolean>;
  state(key: string, limit?: number): Answer<SemaphoreState>;
}

/** The rate limit's transitions, as a backend's module offers them. */
export interface RateTransitions {
  take(request: RateTakeRequest): Answer<RateTakeResult>;
  state(key: string, periodMs: number): Answer<RateState>;
  refund(request: RateRefundRequest): Answer<void>;
}

/** The period's transitions, as a backend's module offers them. */
export interface PeriodTransitions {
  isMarked(key: string, bucket: string): Answer<boolean>;
  mark(request: PeriodMarkRequest): Answer<boolean>;
  note(key: string, bucket: string): Answer<string | undefined>;
  state(key: string, bucket: string): Answer<number | undefined>;
}

/** The ordered lock's transitions, as a backend's module offers them. */
export interface OrderedTransitions {
  ticket(key: string): Answer<OrderedTicket>;
  enter(request: OrderedEnterRequest): Answer<OrderedEnterResult>;
  heartbeat(ticket: OrderedTicket): Answer<boolean>;
  complete(request: OrderedCompleteRequest): Answer<OrderedState>;
  state(key: string): Answer<OrderedState>;
  skip(key: string): Answer<OrderedState>;
  reset(key: string): Answer<OrderedState>;
}

/** A backend's five primitive modules. */
export interface CoordinatorPrimitives {
  readonly locks: LockTransitions;
  readonly semaphores: SemaphoreTransitions;
  readonly rates: RateTransitions;
  readonly periods: PeriodTransitions;
  readonly ordered: OrderedTransitions;
}

/** The transitions of {@link Coordinator}: what {@link CoordinatorFacade} answers. */
export type PrimitiveTransitions = Omit<Coordinator, 'fastPaths' | 'time' | 'close' | 'processLocal'>;

/**
 * The transitions of the five primitives, each one call to the backend's module (set in the
 * subclass's constructor as {@link CoordinatorFacade.primitives}); every answer is a promise.
 */
export abstract class CoordinatorFacade implements PrimitiveTransitions {
  /** The backend's modules, one per primitive. */
  protected abstract readonly primitives: CoordinatorPrimitives;

  // ── Exclusive lock ────────────────────────────────────────────────────────────────────────

  /** See {@link Coordinator.lockAcquire}. */
  async lockAcquire(request: LockAcquireRequest): Promise<LockAcquireResult> {
    return this.primitives.locks.acquire(request);
  }

  /** See {@link Coordinator.lockRelease}. */
  async lockRelease(key: string, owner: string): Promise<LockReleaseResult> {
    return this.primitives.locks.release(key, owner);
  }

  /** See {@link Coordinator.lockExtend}. */
  async lockExtend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.primitives.locks.extend(key, owner, ttlMs);
  }

  /** See {@link Coordinator.lockState}. */
  async lockState(key: string): Promise<LockState | undefined> {
    return this.primitives.locks.state(key);
  }

  // ── Semaphore (leases) ────────────────────────────────────────────────────────────────────

  /** See {@link Coordinator.semaphoreAcquire}. */
  async semaphoreAcquire(request: SemaphoreAcquireRequest): Promise<SemaphoreAcquireResult> {
    return this.primitives.semaphores.acquire(request);
  }

  /** See {@link Coordinator.semaphoreRelease}. */
  async semaphoreRelease(
    key: string,
    owner: string,
  ): Promise<{ readonly released: boolean; readonly nesting: number }> {
    return this.primitives.semaphores.release(key, owner);
  }

  /** See {@link Coordinator.semaphoreExtend}. */
  async semaphoreExtend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.primitives.semaphores.extend(key, owner, ttlMs);
  }

  /** See {@link Coordinator.semaphoreState}. */
  async semaphoreState(key: string, limit?: number): Promise<SemaphoreState> {
    return this.primitives.semaphores.state(key, limit);
  }

  // ── Rate limit ────────────────────────────────────────────────────────────────────────────

  /** See {@link Coordinator.rateTake}. */
  async rateTake(request: RateTakeRequest): Promise<RateTakeResult> {
    return this.primitives.rates.take(request);
  }

  /** See {@link Coordinator.rateState}. */
  async rateState(key: string, periodMs: number): Promise<RateState> {
    return this.primitives.rates.state(key, periodMs);
  }

  /** See {@link Coordinator.rateRefund}. */
  async rateRefund(request: RateRefundRequest): Promise<void> {
    await this.primitives.rates.refund(request);
  }

  // ── Period ────────────────────────────────────────────────────────────────────────────────

  /** See {@link Coordinator.periodIsMarked}. */
  async periodIsMarked(key: string, bucket: string): Promise<boolean> {
    return this.primitives.periods.isMarked(key, bucket);
  }

  /** See {@link Coordinator.periodMark}. */
  async periodMark(request: PeriodMarkRequest): Promise<boolean> {
    return this.primitives.periods.mark(request);
  }

  /** See {@link Coordinator.periodNote}. */
  async periodNote(key: string, bucket: string): Promise<string | undefined> {
    return this.primitives.periods.note(key, bucket);
  }

  /** See {@link Coordinator.periodState}. */
  async periodState(key: string, bucket: string): Promise<number | undefined> {
    return this.primitives.periods.state(key, bucket);
  }

  // ── Ordered lock ──────────────────────────────────────────────────────────────────────────

  /** See {@link Coordinator.orderedTicket}. */
  async orderedTicket(key: string): Promise<OrderedTicket> {
    return this.primitives.ordered.ticket(key);
  }

  /** See {@link Coordinator.orderedEnter}. */
  async orderedEnter(request: OrderedEnterRequest): Promise<OrderedEnterResult> {
    return this.primitives.ordered.enter(request);
  }

  /** See {@link Coordinator.orderedHeartbeat}. */
  async orderedHeartbeat(ticket: OrderedTicket): Promise<boolean> {
    return this.primitives.ordered.heartbeat(ticket);
  }

  /** See {@link Coordinator.orderedComplete}. */
  async orderedComplete(request: OrderedCompleteRequest): Promise<OrderedState> {
    return this.primitives.ordered.complete(request);
  }

  /** See {@link Coordinator.orderedState}. */
  async orderedState(key: string): Promise<OrderedState> {
    return this.primitives.ordered.state(key);
  }

  /** See {@link Coordinator.orderedSkip}. */
  async orderedSkip(key: string): Promise<OrderedState> {
    return this.primitives.ordered.skip(key);
  }

  /** See {@link Coordinator.orderedReset}. */
  async orderedReset(key: string): Promise<OrderedState> {
    return this.primitives.ordered.reset(key);
  }
}
