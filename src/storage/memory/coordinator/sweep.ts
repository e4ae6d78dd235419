/**
 * The call counter that reads the clock and periodically sweeps dead entries of every primitive.
 *
 * @module
 */
import type { Clock } from '../../../ports/clock.js';

/** Dead entries (expired holds, empty logs, old markers) are swept after this many calls. */
export const SWEEP_EVERY = 1024;

/** A primitive store whose dead entries can be dropped. */
export interface Sweepable {
  /** Drops every entry that is dead at `now`; live state is left exactly as it was. */
  sweep(now: number): void;
}

/**
 * Reads the clock once per call and, every {@link SWEEP_EVERY} calls, sweeps the tracked stores in
 * the order they were tracked.
 */
export class Ticker {
  readonly #clock: Clock;
  readonly #targets: Sweepable[] = [];
  #calls = 0;

  /** @param clock - The clock `tick()` reads. */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Adds stores to sweep, after the ones already tracked. */
  track(...targets: readonly Sweepable[]): void {
    this.#targets.push(...targets);
  }

  /** The current time; every `SWEEP_EVERY` calls, also drops dead entries of every tracked store. */
  tick(): number {
    const now = this.#clock.now();
    this.#calls += 1;
    if (this.#calls % SWEEP_EVERY === 0) for (const target of this.#targets) target.sweep(now);
    return now;
  }
}
