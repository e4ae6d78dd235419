import type { ErrorJSON } from '../errors.js';

/** One failed element of a map. */
export interface MapFailure {
  readonly index: number;
  readonly error: ErrorJSON;
}

/** One succeeded element of a map: its index and its value. */
export interface MapSuccess<R> {
  readonly index: number;
  readonly value: R;
}

/** The result of a map step: one slot per element, plus the successes and failures apart. */
export interface MapResult<R> {
  /** One entry per element, in element order; `undefined` for an element that failed or never ran. */
  readonly values: readonly (R | undefined)[];
  /** The values of the elements that succeeded, in element order. */
  readonly successes: readonly R[];
  /** The elements that succeeded with their index, in element order (`successes` with indexes). */
  readonly succeeded: readonly MapSuccess<R>[];
  /** The elements that failed, in element order. */
  readonly failures: readonly MapFailure[];
  /** Indexes of elements never started (an atomic map stopped early). */
  readonly notStarted: readonly number[];
}
