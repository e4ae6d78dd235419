import type { Clock } from '../engine/ports/clock.js';

interface Timer {
  readonly due: number;
  readonly resolve: () => void;
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

  /** Moves time forward by `ms`, resolving every sleeper due by then, earliest first. */
  advance(ms: number): void {
    this.set(this.#now + ms);
  }

  /** Sets the time (never backwards), resolving every sleeper due by then. */
  set(time: number): void {
    this.#now = Math.max(this.#now, time);
    const due = this.#timers.filter((t) => t.due <= this.#now).sort((a, b) => a.due - b.due);
    this.#timers = this.#timers.filter((t) => t.due > this.#now);
    for (const t of due) t.resolve();
  }

  /** Sleepers still waiting (manual mode). */
  get pending(): number {
    return this.#timers.length;
  }
}
