import { parseDuration, type Duration } from '../dsl/duration.js';
import type { Clock } from '../ports/clock.js';

interface Timer {
  due: number;
  readonly resolve: () => void;
  /** Set for periodic timers (`every`). */
  readonly interval?: number;
}

/** Options of {@link ManualClock}. */
export interface ManualClockOptions {
  /** Start time in ms since the epoch. Default 2026-01-01T00:00:00Z. */
  readonly start?: number;
  /**
   * When true (default), `sleep(ms)` moves virtual time forward by `ms` at once and resolves:
   * code that waits (retry backoff, contention waits) runs instantly and deterministically.
   * When false, sleepers resolve only when a test calls {@link ManualClock.advance}.
   */
  readonly autoAdvance?: boolean;
}

/**
 * A clock under the test's control: tests never sleep. Records every requested sleep so tests
 * can assert on delays (e.g. retry backoff).
 *
 * @example
 * ```ts
 * const clock = new ManualClock();
 * const engine = createEngine({ clock });
 * // …run a reactor with retries…
 * expect(clock.sleeps).toEqual([100, 200]);
 * ```
 */
export class ManualClock implements Clock {
  #now: number;
  readonly #auto: boolean;
  #timers: Timer[] = [];
  /** Every delay passed to `sleep`, in call order. */
  readonly sleeps: number[] = [];

  constructor(options: ManualClockOptions = {}) {
    this.#now = options.start ?? Date.UTC(2026, 0, 1);
    this.#auto = options.autoAdvance ?? true;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.resolve();
    if (this.#auto) {
      this.advance(ms);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer: Timer = { due: this.#now + ms, resolve };
      this.#timers.push(timer);
      signal?.addEventListener(
        'abort',
        () => {
          this.#timers = this.#timers.filter((t) => t !== timer);
          resolve();
        },
        { once: true },
      );
    });
  }

  every(ms: number, fn: () => void): () => void {
    const timer: Timer = { due: this.#now + ms, resolve: fn, interval: Math.max(1, ms) };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /**
   * Moves time forward by `by` (ms, or a duration such as `'3d'`), firing every timer due by then
   * in time order (time stands at each one as it fires).
   */
  advance(by: Duration): void {
    const ms = typeof by === 'number' ? by : parseDuration(by);
    if (ms === undefined) throw new RangeError(`advance takes ms or a duration such as '3d' (got ${String(by)})`);
    this.set(this.#now + ms);
  }

  /** Sets the time (never backwards), firing every timer due by then, earliest first. */
  set(time: number): void {
    const target = Math.max(this.#now, time);
    for (;;) {
      const next = this.#timers.filter((t) => t.due <= target).sort((a, b) => a.due - b.due)[0];
      if (!next) break;
      this.#now = Math.max(this.#now, next.due);
      if (next.interval === undefined) this.#timers = this.#timers.filter((t) => t !== next);
      else next.due += next.interval;
      next.resolve();
    }
    this.#now = target;
  }

  /** Whether `sleep` moves virtual time forward at once (see {@link ManualClockOptions.autoAdvance}). */
  get autoAdvance(): boolean {
    return this.#auto;
  }

  /** Sleepers still waiting (manual mode), periodic timers excluded. */
  get pending(): number {
    return this.#timers.filter((t) => t.interval === undefined).length;
  }
}
