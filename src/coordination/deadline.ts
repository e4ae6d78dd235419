/**
 * A hold's local deadline (docs/decisions/063): a lock, a semaphore lease or a liveness lease
 * is trusted only until `sent + ttl − margin` on this process's monotonic clock, where `sent` is
 * when the request that took or extended it left this process. When the deadline passes without
 * a successful extension the holder is told at that instant, whatever Redis says later, so a
 * holder whose backend froze stops before the backend can admit another.
 *
 * @module
 */
import type { Clock } from '../engine/ports/clock.js';

/**
 * The drift margin subtracted from a TTL: 1% of it plus 20 ms, at most 1 s. It covers the
 * difference in clock rate between this process and Redis over one TTL (far below 1% on any
 * working machine) and timer lateness.
 */
export function driftMarginMs(ttlMs: number): number {
  return Math.min(1_000, Math.ceil(ttlMs * 0.01) + 20);
}

/** This process's monotonic reading of `clock`. */
export function monotonicNow(clock: Clock): number {
  return clock.monotonic?.() ?? clock.now();
}

/** A hold's deadline on the local monotonic clock; calls `onExpired` once when it passes. */
export class HoldDeadline {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #onExpired: () => void;
  #deadline: number;
  #timer: AbortController | undefined;
  #done = false;

  /** `sentAt`: the monotonic time the acquiring request was sent (see {@link monotonicNow}). */
  constructor(clock: Clock, ttlMs: number, sentAt: number, onExpired: () => void) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.#onExpired = onExpired;
    this.#deadline = sentAt + ttlMs - driftMarginMs(ttlMs);
    this.#arm();
  }

  /** The monotonic time the hold stops being trusted. */
  get deadline(): number {
    return this.#deadline;
  }

  /** True once the deadline passed (or {@link expire} was called). */
  get expired(): boolean {
    if (!this.#done && monotonicNow(this.#clock) >= this.#deadline) this.#fire();
    return this.#done;
  }

  /** A successful extension whose request was sent at `sentAt` moves the deadline (never back). */
  extended(sentAt: number, ttlMs: number = this.#ttlMs): void {
    if (this.expired) return;
    const next = sentAt + ttlMs - driftMarginMs(ttlMs);
    if (next <= this.#deadline) return;
    this.#deadline = next;
    this.#arm();
  }

  /** Ends the hold now (lost by other means): `onExpired` runs if it has not. */
  expire(): void {
    if (!this.#done) this.#fire();
  }

  /** Stops watching (the hold was released). */
  stop(): void {
    this.#done = true;
    this.#timer?.abort();
    this.#timer = undefined;
  }

  #arm(): void {
    this.#timer?.abort();
    if (this.#done) return;
    const timer = new AbortController();
    this.#timer = timer;
    const wait = Math.max(0, this.#deadline - monotonicNow(this.#clock));
    void this.#clock.sleep(wait, timer.signal).then(() => {
      if (timer.signal.aborted || this.#done) return;
      if (monotonicNow(this.#clock) >= this.#deadline) this.#fire();
      else this.#arm(); // a timer that fired early (or a clock that moved less): wait the rest
    });
  }

  #fire(): void {
    this.#done = true;
    this.#timer?.abort();
    this.#timer = undefined;
    this.#onExpired();
  }
}
