/**
 * What every primitive of the memory coordinator shares: the call tick and the change notifier.
 *
 * @module
 */
import type { PrimitiveKind } from '../../../ports/coordinator.js';

/**
 * The services a primitive store gets from the `MemoryCoordinator` facade.
 *
 * Each public call of a store calls `tick()` exactly once, after validating its arguments, and uses
 * the returned time as `now` for the whole (synchronous, hence atomic) transition.
 */
export interface PrimitiveContext {
  /** The current time on the injected clock; every so many calls, also sweeps dead entries. */
  readonly tick: () => number;
  /** Wakes the `waitForChange` listeners of `kind` + `key`. */
  readonly notify: (kind: PrimitiveKind, key: string) => void;
}

/**
 * Durations and limits are whole numbers, as on Redis (which refuses anything else).
 *
 * @throws RangeError when `value` is not a safe integer `>= min`.
 */
export function assertInteger(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer >= ${min}; got ${String(value)}`);
}
