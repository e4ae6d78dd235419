/**
 * `validateSchedule`: the options of `schedules.upsert` checked and turned into the stored
 * definition. Every refusal is a {@link ScheduleInvalidError} naming the option, or a
 * `reactor_unknown` error for a reactor the runtime does not know.
 *
 * @module
 */
import { parseCron } from './cron.js';
import { parseDuration } from '../dsl/duration.js';
import { ErrorCode, ReactorError, ScheduleInvalidError } from '../errors.js';
import { inputShapeIssue } from '../engine/model/input-shape.js';
import type { MissedPolicy, ScheduleDefinition, ScheduleOptions } from './types.js';

/** The shortest interval of an `every` schedule, ms. */
export const MIN_INTERVAL_MS = 1_000;

/** The longest interval of an `every` schedule, ms: 365 days (a longer period is a cron expression). */
export const MAX_INTERVAL_MS = 365 * 86_400_000;

/** The latest time a `Date` holds (epoch ms): no `startAt` or `endAt` is later. */
const LATEST_TIME_MS = 8_640_000_000_000_000;

/** The size a fixed input may have when the runtime does not say its record limit: the stores' default, 512 KiB. */
const DEFAULT_MAX_INPUT_BYTES = 512 * 1024;

const ID = /^[A-Za-z0-9._-]{1,100}$/;
const POLICIES: readonly MissedPolicy[] = ['skip', 'catch_up_one'];

/** What the runtime knows: its reactors' names and its computed inputs' names (undefined: not checked). */
export interface Known {
  readonly reactors: ReadonlySet<string> | undefined;
  readonly inputs: ReadonlySet<string> | undefined;
  /** The largest fixed input, in bytes of JSON: the store's record limit (default 512 KiB). */
  readonly maxInputBytes?: number | undefined;
}

/** Checks `options` and returns the definition to store, stamped `now`. */
export function validateSchedule(options: ScheduleOptions, known: Known, now: number): ScheduleDefinition {
  const id = typeof options?.id === 'string' ? options.id : String(options?.id);
  const bad = (field: string, reason: string): never => {
    throw new ScheduleInvalidError({ schedule: id, field, reason });
  };
  if (!ID.test(id)) bad('id', 'must be 1 to 100 of A-Z a-z 0-9 . _ -');
  const reactor = reactorName(options.reactor, bad);
  if (known.reactors && !known.reactors.has(reactor))
    throw new ReactorError(ErrorCode.ReactorUnknown, `schedule "${id}": unknown reactor "${reactor}"`, {
      details: { reactor },
    });
  const timing = timingOf(options, bad);
  const missed = options.missed ?? 'skip';
  if (!POLICIES.includes(missed)) bad('missed', `must be 'skip' or 'catch_up_one'; got ${JSON.stringify(missed)}`);
  return {
    v: 1,
    id,
    reactor,
    ...timing,
    ...inputOf(options, known, bad),
    missed,
    updatedAt: now,
  };
}

type Bad = (field: string, reason: string) => never;

function reactorName(reactor: ScheduleOptions['reactor'], bad: Bad): string {
  const name = typeof reactor === 'string' ? reactor : reactor?.name;
  if (typeof name !== 'string' || name === '') bad('reactor', 'must be a reactor definition or a non-empty name');
  return name;
}

function timingOf(
  options: ScheduleOptions,
  bad: Bad,
): Pick<ScheduleDefinition, 'cron' | 'everyMs' | 'startAt' | 'endAt'> {
  if ((options.cron === undefined) === (options.every === undefined)) bad('cron', 'or every: exactly one is needed');
  const startAt = instant(options.startAt, 'startAt', bad);
  const endAt = instant(options.endAt, 'endAt', bad);
  if (startAt !== undefined && endAt !== undefined && endAt <= startAt) bad('endAt', 'must be after startAt');
  const window = { ...(startAt === undefined ? {} : { startAt }), ...(endAt === undefined ? {} : { endAt }) };
  if (options.every !== undefined) {
    const ms = parseDuration(options.every);
    if (ms === undefined || !Number.isInteger(ms))
      bad('every', `must be a duration ('1s', '5m') or whole ms; got ${JSON.stringify(options.every)}`);
    if (ms < MIN_INTERVAL_MS) bad('every', `must be at least 1s; got ${JSON.stringify(options.every)}`);
    if (ms > MAX_INTERVAL_MS)
      bad(
        'every',
        `must be at most 365 days ('365d'; use a cron expression for longer); got ${JSON.stringify(options.every)}`,
      );
    return { everyMs: ms, ...window };
  }
  return { cron: cronOf(options.cron!, bad), ...window };
}

function cronOf(cron: NonNullable<ScheduleOptions['cron']>, bad: Bad): { pattern: string; tz: string } {
  const pattern = cron?.pattern;
  if (typeof pattern !== 'string' || pattern.trim() === '') bad('cron.pattern', 'must be a cron expression');
  const fields = pattern.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) bad('cron.pattern', `must have 5 or 6 fields; got ${fields} in "${pattern}"`);
  const tz = cron.tz ?? 'UTC';
  if (!validZone(tz)) bad('cron.tz', `is not an IANA time zone: ${JSON.stringify(tz)}`);
  try {
    parseCron(pattern, { tz }).next();
  } catch (error) {
    bad('cron.pattern', `is not valid: ${(error as Error).message} ("${pattern}")`);
  }
  return { pattern: pattern.trim(), tz };
}

function validZone(tz: unknown): boolean {
  if (typeof tz !== 'string' || tz === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function instant(value: ScheduleOptions['startAt'], field: string, bad: Bad): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > LATEST_TIME_MS)
    bad(field, `must be a Date, ms or an ISO 8601 string, from 0 to 8.64e15 ms; got ${shownTime(value)}`);
  return ms;
}

function shownTime(value: unknown): string {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  return typeof value === 'number' ? String(value) : JSON.stringify(value);
}

function inputOf(options: ScheduleOptions, known: Known, bad: Bad): Pick<ScheduleDefinition, 'input' | 'inputFrom'> {
  const { input, inputFrom } = options;
  if (typeof input === 'function')
    bad('input', 'is a function: a computed input is registered by name (scheduleInputs) and named with inputFrom');
  if (input !== undefined && inputFrom !== undefined) bad('input', 'and inputFrom: at most one');
  if (inputFrom !== undefined) {
    if (typeof inputFrom !== 'string' || inputFrom === '') bad('inputFrom', 'must be a non-empty name');
    if (known.inputs && !known.inputs.has(inputFrom)) bad('inputFrom', `names no registered input: "${inputFrom}"`);
    return { inputFrom };
  }
  if (input === undefined) return {};
  if (input === null || typeof input !== 'object' || Array.isArray(input)) bad('input', 'must be a JSON object');
  // Too deep or cyclic: refused before it is copied (a copy could overflow the stack on it).
  const shape = inputShapeIssue(input);
  if (shape) bad('input', `${shape.path === '' ? '' : `at ${shape.path}: `}${shape.message}`);
  let json = '';
  try {
    json = JSON.stringify(input);
  } catch (error) {
    bad('input', `is not JSON: ${(error as Error).message}`);
  }
  const limit = known.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES;
  const bytes = json.length * 3 <= limit ? json.length : Buffer.byteLength(json);
  if (bytes > limit)
    bad(
      'input',
      `is ${bytes} bytes of JSON, over the ${limit}-byte record limit (maxRecordBytes) each execution's input must fit`,
    );
  return { input: JSON.parse(json) as Record<string, unknown> };
}
