/**
 * The start options of `engine.start` and `engine.startMany` checked and turned into a plan: when
 * the first job may run (`delay` or `at`, docs/decisions/078) and the priority of every job of
 * the execution (docs/decisions/079). Bad values throw {@link StartOptionsError} before anything
 * is validated, claimed or written.
 *
 * @module
 */
import { parseDuration } from '../../dsl/duration.js';
import { StartOptionsError } from '../../errors.js';
import type { StartPlan } from '../model/background.js';
import { JOB_PRIORITY_MAX } from '../ports/queue.js';
import type { StartOptions } from './types.js';

/** The plan of `options` at `now` (engine clock, ms). `entry`: the index in a `startMany`, for the error. */
export function startPlan(options: StartOptions, now: number, entry?: number): StartPlan {
  const fail = (option: string, value: unknown, problem: string): never => {
    throw new StartOptionsError({ option, value: shown(value), ...(entry === undefined ? {} : { entry }) }, problem);
  };
  if (options.delay !== undefined && options.at !== undefined)
    fail('delay', options.delay, 'cannot be combined with at (give one of them)');
  const priority = priorityOption(options.priority, fail);
  const startAt = startTime(options, now, fail);
  const delayMs = startAt === undefined ? 0 : Math.max(0, startAt - now);
  return {
    delayMs,
    ...(delayMs > 0 && startAt !== undefined ? { startAt } : {}),
    ...(priority === undefined ? {} : { priority }),
  };
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
