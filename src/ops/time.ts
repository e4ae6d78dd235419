/**
 * Reading a time an operator typed: digits are ms since the epoch; anything else is an ISO 8601
 * date, and a date without a zone is UTC (also what a `datetime-local` field sends).
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
