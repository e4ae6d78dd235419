/**
 * A minimal JSON-lines logger for the `worker` command's `--log-level`: one object per line,
 * pino's shape (`{ level, time, msg, ...fields }`, `level` as pino's number), and `child(bindings)`.
 *
 * @module
 */
import type { Logger } from '../dsl/context.js';

/** The levels `--log-level` accepts, least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** A level `--log-level` accepts. */
export type CliLogLevel = (typeof LOG_LEVELS)[number];

/** pino's numeric levels, so log tooling that reads pino lines reads these. */
const LEVEL_NUMBERS: Readonly<Record<CliLogLevel, number>> = { debug: 20, info: 30, warn: 40, error: 50 };

/** A {@link Logger} that also makes children carrying extra fields, like pino's. */
export interface JsonLinesLogger extends Logger {
  child(bindings: Record<string, unknown>): JsonLinesLogger;
}

/** True when `raw` names a level of {@link LOG_LEVELS}. */
export function isLogLevel(raw: string): raw is CliLogLevel {
  return (LOG_LEVELS as readonly string[]).includes(raw);
}

/** Error values as JSON-friendly objects (`JSON.stringify` of an Error is `{}`). */
function plain(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const withCode = value as Error & { code?: unknown };
  return {
    name: value.name,
    message: value.message,
    ...(withCode.code === undefined ? {} : { code: withCode.code }),
    ...(value.cause === undefined ? {} : { cause: plain(value.cause) }),
  };
}

function line(
  level: CliLogLevel,
  now: () => number,
  bindings: Record<string, unknown>,
  entry: object | string,
  message: string | undefined,
): string {
  const fields: Record<string, unknown> = typeof entry === 'string' ? {} : { ...entry };
  for (const [key, value] of Object.entries(fields)) fields[key] = plain(value);
  const msg = typeof entry === 'string' ? entry : message;
  return JSON.stringify({
    level: LEVEL_NUMBERS[level],
    time: now(),
    ...bindings,
    ...fields,
    ...(msg === undefined ? {} : { msg }),
  });
}

/**
 * A logger writing entries at `level` or above as JSON lines through `write` (the worker passes
 * stdout); lower entries are dropped. `now` is the timestamp source (default `Date.now`).
 */
export function jsonLinesLogger(
  level: CliLogLevel,
  write: (line: string) => void,
  now: () => number = Date.now,
  bindings: Record<string, unknown> = {},
): JsonLinesLogger {
  const min = LEVEL_NUMBERS[level];
  const method =
    (at: CliLogLevel) =>
    (entry: object | string, message?: string): void => {
      if (LEVEL_NUMBERS[at] >= min) write(line(at, now, bindings, entry, message));
    };
  return {
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
    child: (extra) => jsonLinesLogger(level, write, now, { ...bindings, ...extra }),
  };
}
