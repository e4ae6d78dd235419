/**
 * Tick arithmetic of a schedule: the first tick after an instant, the latest tick in a range,
 * the count of ticks in a range. Cron expressions are evaluated in the schedule's time zone by
 * the `cron-parser` BullMQ's job schedulers use (`cron.ts`), so both agree on every tick.
 *
 * @module
 */
import { parseCron } from './cron.js';
import type { ScheduleDefinition } from './types.js';

/** The timing part of a definition. */
export type TickSpec = Pick<ScheduleDefinition, 'cron' | 'everyMs' | 'startAt' | 'endAt'>;

/** Windows searched backwards for the latest cron tick, ms: a dense schedule is found in the first. */
const WINDOWS = [60_000, 3_600_000, 86_400_000, 32 * 86_400_000, 400 * 86_400_000, 3_000 * 86_400_000];

/** The first cron tick strictly after `after`, or undefined (an expression that never matches again). */
function cronAfter(cron: NonNullable<TickSpec['cron']>, after: number): number | undefined {
  try {
    return parseCron(cron.pattern, { currentDate: new Date(after), tz: cron.tz })
      .next()
      .getTime();
  } catch {
    return undefined;
  }
}

/** The first tick strictly after `after`, inside the schedule's window; undefined when none is left. */
export function nextTick(spec: TickSpec, after: number): number | undefined {
  const from = spec.startAt === undefined ? after : Math.max(after, spec.startAt - 1);
  let tick: number | undefined;
  if (spec.everyMs !== undefined) {
    const origin = spec.startAt ?? 0;
    tick = origin + (Math.floor((from - origin) / spec.everyMs) + 1) * spec.everyMs;
  } else if (spec.cron) tick = cronAfter(spec.cron, from);
  return tick === undefined || (spec.endAt !== undefined && tick >= spec.endAt) ? undefined : tick;
}

/** The next `n` ticks after `after`. */
export function nextTicks(spec: TickSpec, after: number, n: number): number[] {
  const out: number[] = [];
  for (let at = after; out.length < n;) {
    const tick = nextTick(spec, at);
    if (tick === undefined) break;
    out.push(tick);
    at = tick;
  }
  return out;
}

/** The latest tick `t` with `from <= t <= to`, or undefined. */
export function latestTick(spec: TickSpec, from: number, to: number): number | undefined {
  if (to < from) return undefined;
  if (spec.everyMs !== undefined) {
    const first = nextTick(spec, from - 1);
    if (first === undefined || first > to) return undefined;
    const last = first + Math.floor((to - first) / spec.everyMs) * spec.everyMs;
    return spec.endAt !== undefined && last >= spec.endAt ? latestTick(spec, from, spec.endAt - 1) : last;
  }
  for (const width of WINDOWS) {
    const start = Math.max(from, to - width);
    const found = lastIn(spec, start, to);
    if (found !== undefined || start === from) return found;
  }
  return lastIn(spec, from, to);
}

/** The last tick of `[from, to]` by walking forwards (callers keep the range small). */
function lastIn(spec: TickSpec, from: number, to: number): number | undefined {
  let last: number | undefined;
  for (let tick = nextTick(spec, from - 1); tick !== undefined && tick <= to; tick = nextTick(spec, tick)) last = tick;
  return last;
}

/** How many ticks `t` have `from <= t <= to`, counted up to `cap`. */
export function countTicks(spec: TickSpec, from: number, to: number, cap = 10_000): number {
  if (to < from) return 0;
  if (spec.everyMs !== undefined) {
    const first = nextTick(spec, from - 1);
    const last = latestTick(spec, from, to);
    return first === undefined || last === undefined ? 0 : Math.min(cap, (last - first) / spec.everyMs + 1);
  }
  let count = 0;
  for (
    let tick = nextTick(spec, from - 1);
    tick !== undefined && tick <= to && count < cap;
    tick = nextTick(spec, tick)
  )
    count += 1;
  return count;
}
