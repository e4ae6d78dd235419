import type { Clock } from '../engine/ports/clock.js';
import type { CoordinationScope } from './scope.js';

/**
 * How the guarded work ended: decides period marks and ordered-lock failure records.
 * `yielded` (a worker re-enqueues the execution): leases are released, the ordered position is
 * kept, no period is marked. `parked` (a step of the execution parked on contention): the
 * reactor-level leases are kept too, detached, to be re-adopted when the execution resumes.
 */
export type WorkOutcome = 'completed' | 'failed' | 'halted' | 'yielded' | 'parked';

type Release = (outcome: WorkOutcome) => Promise<void>;

/**
 * What one admission took, as a stack: released in reverse order of acquisition, on every
 * outcome, exactly once. Keep-alive timers (lock/semaphore renewal, ordered heartbeat) run on
 * the clock's `every` and stop at release.
 */
export class Holds {
  readonly #releases: Release[] = [];
  readonly #timers: (() => void)[] = [];
  readonly #clock: Clock;
  #released = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Registers what to do at release. */
  push(release: Release): void {
    this.#releases.push(release);
  }

  /**
   * Runs `tick` every `everyMs` until release; a tick that rejects is ignored (the next one
   * retries). Ticks may overlap on a slow backend: renewals are idempotent.
   */
  keepAlive(everyMs: number, tick: () => Promise<void>): void {
    const stop = this.#clock.every(Math.max(10, everyMs), () => void tick().catch(() => undefined));
    this.#timers.push(stop);
  }

  /** Releases everything, newest first. Errors are collected and rethrown after all ran. */
  async release(outcome: WorkOutcome): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    for (const stop of this.#timers) stop();
    const errors: unknown[] = [];
    for (let i = this.#releases.length - 1; i >= 0; i--) {
      try {
        await this.#releases[i]!(outcome);
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw errors[0];
  }
}

/**
 * Keeps a lock or semaphore alive; reports the loss once. `confirmed` (a lock handed over in
 * memory, docs/decisions/043) resolving false is a loss too.
 */
export function keepLease(holds: Holds, scope: CoordinationScope, primitive: 'lock' | 'semaphore', key: string, ttlMs: number, confirmed?: Promise<boolean>): void {
  let lost = false;
  const lose = (): void => {
    if (lost) return; // an overlapping tick already reported it
    lost = true;
    scope.emit({ type: 'coordination.lost', primitive, key });
    scope.onLost(primitive, key);
  };
  void confirmed?.then((ok) => (ok ? undefined : lose()));
  holds.keepAlive(ttlMs / 3, async () => {
    if (lost) return;
    const owner = scope.holder.owner;
    const ok = primitive === 'lock' ? await scope.coordinator.lockExtend(key, owner, ttlMs) : await scope.coordinator.semaphoreExtend(key, owner, ttlMs);
    if (ok) return lost ? undefined : scope.emit({ type: 'coordination.extended', primitive, key });
    lose();
  });
}
