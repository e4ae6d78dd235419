/**
 * The shapes of schedules: what `schedules.upsert` takes, what a backend stores (a definition:
 * JSON only, so Redis can keep it), and what `list` and `get` answer.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { Duration } from '../dsl/duration.js';
import type { MissedPolicy, ScheduleDefinition, ScheduleFailure } from '../ports/schedules.js';

export type { MissedPolicy, ScheduleDefinition, ScheduleFailure } from '../ports/schedules.js';

/** A cron schedule: five fields (minute first) or six (second first), in a time zone. */
export interface CronSpec {
  /** A cron expression: `'0 2 * * *'` (02:00 every day), `'*\/15 * * * *'`, `'0 0 9 * * 1-5'`. */
  readonly pattern: string;
  /** An IANA time zone (`'Europe/Berlin'`). Default `'UTC'`. */
  readonly tz?: string;
}

/**
 * A computed input: called at each tick with the tick's time. Registered by name with the
 * runtime (`scheduleInputs`), never stored: a schedule names it with `inputFrom`.
 */
export type ScheduleInputFn = (
  tick: Date,
  schedule: { readonly id: string; readonly reactor: string },
) => Record<string, unknown> | Promise<Record<string, unknown>>;

/** What `schedules.upsert` takes. Exactly one of `cron` and `every`; at most one of `input` and `inputFrom`. */
export interface ScheduleOptions {
  /** The schedule's id: 1 to 100 of `A-Z a-z 0-9 . _ -`. Upserting an id again replaces it. */
  readonly id: string;
  /** The reactor to start at each tick: a definition, or the name of one the runtime knows. */
  readonly reactor: AnyReactorDefinition | string;
  /** Fire on a cron expression in a time zone. */
  readonly cron?: CronSpec;
  /** Fire at a fixed interval, at least 1 s: `'1s'`, `'5m'`, or ms. Ticks are multiples of it since the epoch (or since `startAt`). */
  readonly every?: Duration;
  /** The fixed input of every execution: a JSON object. Default `{}`. */
  readonly input?: Record<string, unknown>;
  /** The name of a computed input registered with the runtime (`scheduleInputs`). */
  readonly inputFrom?: string;
  /** Ticks missed while nothing ran. Default `'skip'`. */
  readonly missed?: MissedPolicy;
  /** No tick before this instant (an interval's ticks are counted from it). */
  readonly startAt?: Date | number | string;
  /** No tick at or after this instant. */
  readonly endAt?: Date | number | string;
}

/** A schedule as `list` and `get` show it: its definition and its next runs. */
export interface ScheduleInfo extends ScheduleDefinition {
  /** The next tick times after now (as many as asked, default 5; fewer before `endAt`). */
  readonly nextRuns: readonly Date[];
  /** Set while the latest tick handled failed (nothing started): when, and why. Cleared by a tick that starts its execution. */
  readonly lastFailure?: ScheduleFailure;
}
