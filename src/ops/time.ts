/**
 * Times and operators: reading a time an operator typed (digits are ms since the epoch; anything
 * else is an ISO 8601 date, and a date without a zone is UTC, also what a `datetime-local` field
 * sends), and showing a stored time whatever it holds ({@link isoTime}).
 *
 * @module
 */

/** The time in ms, `undefined` for an empty value, `NaN` when it is not a time. */
export function parseOperatorTime(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (/^\d+$/.test(raw)) return Number(raw);
  const zoned = /[zZ]$|[+-]\d\d:?\d\d$/.test(raw) || !/\d[T ]\d/.test(raw) ? raw : `${raw}Z`;
  return Date.parse(zoned);
}

/** The latest time a `Date` holds, in ms from the epoch (and the earliest, negated). */
const DATE_RANGE_MS = 8_640_000_000_000_000;

/**
 * A stored time (epoch ms) as ISO 8601, clamped to the range a `Date` holds (a time past it,
 * written by an older version or by hand, shows as the range's end instead of failing the view);
 * `—` for a value that is not a number.
 */
export function isoTime(ms: number): string {
  if (typeof ms !== 'number' || Number.isNaN(ms)) return '—';
  return new Date(Math.max(-DATE_RANGE_MS, Math.min(DATE_RANGE_MS, ms))).toISOString();
}
