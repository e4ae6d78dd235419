/**
 * A hold's local deadline (docs/decisions/063): a lock or a semaphore lease is trusted only until
 * `sent + ttl − margin` on this process's monotonic clock, where `sent` is when the request that
 * took or extended it left this process (the backend started the TTL after that). When the
 * deadline passes without a successful extension the holder is told then, whatever the backend
 * says later, so a holder whose backend froze stops before the backend can admit another.
 *
 * Cheap per hold: one one-shot timer, re-armed lazily — an extension only moves the deadline;
 * the timer, when it fires, finds the deadline moved and waits the rest. No round trip of its own.
 *
 * @module
 */
import type { Clock } from '../ports/clock.js';

/**
 * The drift margin subtracted from a TTL: 1% of it plus 20 ms, at most 1 s (and at most a quarter
 * of a very short TTL, so that a hold is never given up as soon as it is taken). It covers the
 * difference in clock rate between this process and the backend over one TTL (far below 1% on
 * any working machine) and the lateness of the timer that reports the loss.
 */
export function driftMarginMs(ttlMs: number): number {
  return Math.min(1_000, Math.ceil(ttlMs * 0.01) + 20, Math.floor(ttlMs / 4));
}

/** This process's monotonic reading of `clock` (its wall clock when it has no monotonic one, e.g. a manual clock). */
export function monotonicNow(clock: Clock): number {
  return clock.monotonic?.() ?? clock.now();
}

/**
 * A hold's deadline on the local monotonic clock; calls `onExpired` once when it passes without
 * an extension, unless stopped first.
 *
 * The timer runs on `clock.every` (never `clock.sleep`, which a manual clock in auto-advance mode
 * would fast-forward). When it fires, the verdict waits one macrotask: replies that already
 * reached this process (an extension sent in time, whose answer is queued behind the timer; in
 * virtual time, the answers of renewals that fired during the same `advance`) are read first.
 */
export class HoldDeadline {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #onExpired: () => void;
  #deadline: number;
  #stopTimer: (() => void) | undefined;
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

  /**
   * True once the hold was reported lost or stopped, or when the clock is past the deadline (the
   * report may still be on its way). A pure read: it reports nothing itself.
   */
  get expired(): boolean {
    return this.#done || monotonicNow(this.#clock) >= this.#deadline;
  }

  /**
   * A successful extension whose request was sent at `sentAt` moves the deadline (never back).
   * Ignored once the loss was reported: the holder has been told to stop.
   */
  extended(sentAt: number, ttlMs: number = this.#ttlMs): void {
    if (this.#done) return;
    const next = sentAt + ttlMs - driftMarginMs(ttlMs);
    if (next > this.#deadline) this.#deadline = next; // the armed timer finds it moved when it fires
  }

  /** Ends the hold now (lost by other means): `onExpired` runs if it has not. */
  expire(): void {
    if (!this.#done) this.#fire();
  }

  /** Stops watching (the hold was released): `onExpired` never runs after this. */
  stop(): void {
    this.#done = true;
    this.#clear();
  }

  #arm(): void {
    const wait = Math.max(1, Math.ceil(this.#deadline - monotonicNow(this.#clock)));
    let fired = false;
    const stop = this.#clock.every(wait, () => {
      if (fired) return;
      fired = true;
      stop();
      if (this.#stopTimer === stop) this.#stopTimer = undefined;
      setImmediate(() => this.#due());
    });
    this.#stopTimer = stop;
  }

  #due(): void {
    if (this.#done || this.#stopTimer !== undefined) return;
    if (monotonicNow(this.#clock) < this.#deadline)
      this.#arm(); // extended meanwhile: wait the rest
    else this.#fire();
  }

  #clear(): void {
    this.#stopTimer?.();
    this.#stopTimer = undefined;
  }

  #fire(): void {
    this.#done = true;
    this.#clear();
    this.#onExpired();
  }
}
