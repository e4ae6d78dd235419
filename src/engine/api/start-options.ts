/**
 * The start options of `engine.start` and `engine.startMany` checked and turned into a plan: when
 * the first job may run (`delay` or `at`, docs/decisions/078; a debounce window, 086) and the
 * priority of every job of the execution (docs/decisions/079). Bad values throw {@link StartOptionsError} before anything
 * is validated, claimed or written; so does a start time more than {@link MAX_START_AHEAD_MS} ahead
 * without `allowFarFuture`, or past {@link LATEST_TIME_MS} with it (docs/decisions/114).
 *
 * @module
 */
import { parseDuration } from '../../dsl/duration.js';
import { StartOptionsError } from '../../errors.js';
import { checkTags } from '../model/tags.js';
import type { StartPlan } from '../model/background.js';
import { JOB_PRIORITY_MAX } from '../../ports/queue.js';
import type { StartOptions } from './types.js';

/** How far ahead `delay`, `at` and `debounce.window` may put a start without `allowFarFuture`: 365 days, ms. */
export const MAX_START_AHEAD_MS = 365 * 86_400_000;

/** The latest time a `Date` holds (epoch ms, about the year 275760): no start is ever later. */
export const LATEST_TIME_MS = 8_640_000_000_000_000;

/**
 * The plan of `options` at `now` (engine clock, ms), its tags checked (`TagsInvalidError`).
 * `entry`: the index in a `startMany`, for the error.
 */
export function startPlan(options: StartOptions, now: number, entry?: number): StartPlan {
  const fail = (option: string, value: unknown, problem: string): never => {
    throw new StartOptionsError({ option, value: shown(value), ...(entry === undefined ? {} : { entry }) }, problem);
  };
  if (options.delay !== undefined && options.at !== undefined)
    fail('delay', options.delay, 'cannot be combined with at (give one of them)');
  const far: unknown = options.allowFarFuture;
  if (far !== undefined && typeof far !== 'boolean') fail('allowFarFuture', far, 'must be a boolean');
  const ahead = aheadBound(now, far === true);
  const priority = priorityOption(options.priority, fail);
  const debounce = debounceOption(options, ahead, fail);
  const startAt = debounce === undefined ? startTime(options, now, ahead, fail) : now + debounce.windowMs;
  const delayMs = startAt === undefined ? 0 : Math.max(0, startAt - now);
  const tags = checkTags(options.tags, entry === undefined ? {} : { entry });
  return {
    delayMs,
    ...(delayMs > 0 && startAt !== undefined ? { startAt } : {}),
    ...(priority === undefined ? {} : { priority }),
    ...(debounce === undefined ? {} : { debounce }),
    ...(tags === undefined ? {} : { tags }),
  };
}

/** How far ahead of `now` a start may be (docs/decisions/114): its bound in ms, and how to say it. */
interface Ahead {
  readonly maxMs: number;
  readonly text: string;
}

/** The bound of a start's delay at `now`: a year, or with `allowFarFuture` the latest time a `Date` holds. */
function aheadBound(now: number, far: boolean): Ahead {
  if (far) return { maxMs: LATEST_TIME_MS - now, text: 'the latest time a Date holds (8.64e15 epoch ms)' };
  return { maxMs: MAX_START_AHEAD_MS, text: '365 days ahead (pass allowFarFuture: true for a later start)' };
}

/**
 * The debounce option checked (docs/decisions/086): an object with a non-empty string `key` and
 * a `window` duration > 0 within `ahead`, and neither `delay` nor `at` (the window is the start's delay).
 */
function debounceOption(
  options: StartOptions,
  ahead: Ahead,
  fail: Fail,
): { key: string; windowMs: number } | undefined {
  const debounce: unknown = options.debounce;
  if (debounce === undefined) return undefined;
  if (typeof debounce !== 'object' || debounce === null)
    return fail('debounce', debounce, 'must be an object { key, window }');
  const { key, window } = debounce as { key?: unknown; window?: unknown };
  if (typeof key !== 'string' || key.length === 0) return fail('debounce.key', key, 'must be a non-empty string');
  const windowMs = parseDuration(window);
  if (windowMs === undefined || windowMs <= 0)
    return fail('debounce.window', window, "must be a duration > 0 (ms, or '30s', '5m', '1h', '1d')");
  if (windowMs > ahead.maxMs) return fail('debounce.window', window, `must end at most ${ahead.text}`);
  if (options.delay !== undefined)
    fail('delay', options.delay, 'cannot be combined with debounce (its window is the delay)');
  if (options.at !== undefined) fail('at', options.at, 'cannot be combined with debounce (its window is the delay)');
  return { key, windowMs };
}

type Fail = (option: string, value: unknown, problem: string) => never;

/** The requested start time (engine clock, ms), or undefined for a start at once; at most `ahead` from `now`. */
function startTime(options: StartOptions, now: number, ahead: Ahead, fail: Fail): number | undefined {
  if (options.delay !== undefined) {
    const ms = parseDuration(options.delay);
    if (ms === undefined)
      return fail('delay', options.delay, "must be a duration >= 0 (ms, or '30s', '5m', '1h', '1d')");
    if (ms > ahead.maxMs) return fail('delay', options.delay, `must end at most ${ahead.text}`);
    return now + ms;
  }
  if (options.at === undefined) return undefined;
  const at: unknown = options.at;
  const ms = at instanceof Date ? at.getTime() : at;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
    return fail('at', options.at, 'must be a valid Date or epoch time in ms');
  if (ms > LATEST_TIME_MS) return fail('at', options.at, 'must be at most 8.64e15 (the latest time a Date holds)');
  if (ms - now > ahead.maxMs) return fail('at', options.at, `must be at most ${ahead.text}`);
  return ms;
}

/** The priority option checked: an integer in 1..{@link JOB_PRIORITY_MAX}. */
function priorityOption(priority: unknown, fail: Fail): number | undefined {
  if (priority === undefined) return undefined;
  if (typeof priority !== 'number' || !Number.isSafeInteger(priority) || priority < 1 || priority > JOB_PRIORITY_MAX)
    return fail('priority', priority, `must be an integer from 1 (most urgent) to ${JOB_PRIORITY_MAX}`);
  return priority;
}

/** A rejected value as text. */
export function shown(value: unknown): string {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}
