/**
 * `planTicks`: which ticks to start when a tick is delivered — the rule that makes a late
 * delivery, a restart after downtime and a duplicate delivery come out the same way.
 *
 * @module
 */
import { countTicks, latestTick, nextTick, type TickSpec } from './spec.js';
import type { MissedPolicy } from './types.js';

/** How late a tick may start and still count as on time, at most: 1 minute (less for a shorter interval). */
export const ON_TIME_MS = 60_000;

/** The ticks to start now, and what was missed. */
export interface TickPlan {
  /** Tick times to start, oldest first (each at most once: its idempotency key). */
  readonly fire: readonly number[];
  /** Ticks that passed and are not started (counted up to 10,000). */
  readonly missed: number;
  /** The range of the missed ticks, when any. */
  readonly missedFrom?: number;
  readonly missedTo?: number;
  /** The tick started under `catch_up_one`, when one is. */
  readonly caughtUp?: number;
}

/**
 * The plan when tick `delivered` (the oldest tick not yet handled) arrives at `now`. Let L be
 * the latest tick at or before now (`at`, or the tick when that is earlier). L is on time when now is before L's next tick and within
 * a minute of L: then it starts. Every tick from `delivered` to before L (and L itself when
 * late) was missed: `skip` starts none of them, `catch_up_one` starts the latest of them.
 */
export function planTicks(spec: TickSpec, policy: MissedPolicy, delivered: number, at: number): TickPlan {
  const now = Math.max(at, delivered); // a delivery a little early (clock skew between processes) is its tick's
  const latest = latestTick(spec, delivered, now);
  if (latest === undefined) return { fire: [], missed: 0 };
  const following = nextTick(spec, latest);
  const onTime = now - latest < Math.min(ON_TIME_MS, (following ?? Infinity) - latest);
  const lastMissed = onTime ? latestTick(spec, delivered, latest - 1) : latest;
  if (lastMissed === undefined) return { fire: [latest], missed: 0 };
  const total = countTicks(spec, delivered, lastMissed);
  const caughtUp = policy === 'catch_up_one' ? lastMissed : undefined;
  return {
    fire: [...(caughtUp === undefined ? [] : [caughtUp]), ...(onTime ? [latest] : [])],
    missed: caughtUp === undefined ? total : total - 1,
    missedFrom: delivered,
    missedTo: lastMissed,
    ...(caughtUp === undefined ? {} : { caughtUp }),
  };
}
