import type { Clock } from '../ports/clock.js';
import { HoldDeadline, monotonicNow } from './deadline.js';
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

  /** Registers a timer (a hold's deadline) to stop at release, before the releases run. */
  track(stop: () => void): void {
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
 * When a lock or semaphore lease started, on the local monotonic clock (docs/decisions/063).
 * `sentAt`: when the request that set the lease was sent — or, for a key handed over on another
 * holder's lease, the start that lease's remaining time implies. `confirmed` (a lock handed over
 * in memory, docs/decisions/043): resolving true starts the receiver's own lease at
 * `confirmedFrom`; false is a loss.
 */
export interface LeaseStart {
  readonly sentAt: number;
  readonly confirmed?: Promise<boolean> | undefined;
  readonly confirmedFrom?: number | undefined;
}

/**
 * Keeps a lock or semaphore alive (renewed every ttl/3) and watches its local deadline; reports
 * the loss once, at the first of: the deadline passing without a successful renewal, a renewal
 * answered false, a hand-over not confirmed. The deadline stops at release.
 */
export function keepLease(
  holds: Holds,
  scope: CoordinationScope,
  primitive: 'lock' | 'semaphore',
  key: string,
  ttlMs: number,
  start: LeaseStart,
): void {
  let lost = false;
  const lose = (): void => {
    if (lost) return; // already reported (by the deadline, an overlapping tick or the confirmation)
    lost = true;
    deadline.stop();
    scope.emit({ type: 'coordination.lost', primitive, key });
    scope.onLost(primitive, key);
  };
  const deadline = new HoldDeadline(scope.clock, ttlMs, start.sentAt, lose);
  holds.track(() => deadline.stop());
  void start.confirmed?.then((ok) => (ok ? deadline.extended(start.confirmedFrom ?? start.sentAt) : lose()));
  holds.keepAlive(ttlMs / 3, async () => {
    if (lost) return;
    const owner = scope.holder.owner;
    const sentAt = monotonicNow(scope.clock);
    const ok =
      primitive === 'lock'
        ? await scope.coordinator.lockExtend(key, owner, ttlMs)
        : await scope.coordinator.semaphoreExtend(key, owner, ttlMs);
    if (lost) return; // the deadline passed first: reported then, not again
    if (!ok) return lose();
    deadline.extended(sentAt);
    scope.emit({ type: 'coordination.extended', primitive, key });
  });
}
