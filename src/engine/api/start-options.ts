/**
 * The start options of `engine.start` and `engine.startMany` checked and turned into a plan: when
 * the first job may run (`delay` or `at`, docs/decisions/078; a debounce window, 086) and the
 * priority of every job of the execution (docs/decisions/079). Bad values throw {@link StartOptionsError} before anything
 * is validated, claimed or written.
 *
 * @module
 */
import { parseDuration } from '../../dsl/duration.js';
import { StartOptionsError } from '../../errors.js';
import { checkTags } from '../model/tags.js';
import type { StartPlan } from '../model/background.js';
import { JOB_PRIORITY_MAX } from '../ports/queue.js';
import type { StartOptions } from './types.js';

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
  const priority = priorityOption(options.priority, fail);
  const debounce = debounceOption(options, fail);
  const startAt = debounce === undefined ? startTime(options, now, fail) : now + debounce.windowMs;
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

/**
 * The debounce option checked (docs/decisions/086): an object with a non-empty string `key` and
 * a `window` duration > 0, and neither `delay` nor `at` (the window is the start's delay).
 */
function debounceOption(options: StartOptions, fail: Fail): { key: string; windowMs: number } | undefined {
  const debounce: unknown = options.debounce;
  if (debounce === undefined) return undefined;
  if (typeof debounce !== 'object' || debounce === null)
    return fail('debounce', debounce, 'must be an object { key, window }');
  const { key, window } = debounce as { key?: unknown; window?: unknown };
  if (typeof key !== 'string' || key.length === 0) return fail('debounce.key', key, 'must be a non-empty string');
  const windowMs = parseDuration(window);
  if (windowMs === undefined || windowMs <= 0)
    return fail('debounce.window', window, "must be a duration > 0 (ms, or '30s', '5m', '1h', '1d')");
  if (options.delay !== undefined)
    fail('delay', options.delay, 'cannot be combined with debounce (its window is the delay)');
  if (options.at !== undefined) fail('at', options.at, 'cannot be combined with debounce (its window is the delay)');
  return { key, windowMs };
}

type Fail = (option: string, value: unknown, problem: string) => never;

/** The requested start time (engine clock, ms), or undefined for a start at once. */
function startTime(options: StartOptions, now: number, fail: Fail): number | undefined {
  if (options.delay !== undefined) {
    const ms = parseDuration(options.delay);
    if (ms === undefined)
      return fail('delay', options.delay, "must be a duration >= 0 (ms, or '30s', '5m', '1h', '1d')");
    return now + ms;
  }
  if (options.at === undefined) return undefined;
  const at: unknown = options.at;
  const ms = at instanceof Date ? at.getTime() : at;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
    return fail('at', options.at, 'must be a valid Date or epoch time in ms');
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
function shown(value: unknown): string {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}
