/**
 * The check every backend's store parts make of a count or a duration in ms: a positive safe
 * integer, else a `RangeError` naming the option.
 *
 * @module
 */

/**
 * `value` when it is a positive safe integer.
 * @throws RangeError `<name> must be a positive integer; got <value>` otherwise.
 */
export function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer; got ${String(value)}`);
  return value;
}
