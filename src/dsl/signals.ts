/**
 * Signals a step body may return instead of a plain value. Returning a plain value is the same
 * as returning `success(value)`; throwing is the same as returning `failure(error)`.
 *
 * @module
 */

const SIGNAL = Symbol.for('ts-reactor.signal');

/** The step succeeded with `value`. */
export interface Success<T> {
  readonly [SIGNAL]: 'success';
  readonly value: T;
}
/** The step failed. `retryable: false` vetoes further retries (it never grants one). */
export interface Failure {
  readonly [SIGNAL]: 'failure';
  readonly error: Error;
  readonly retryable: boolean;
}
/** Stop the run here without rollback; the run ends `halted`. */
export interface Halt {
  readonly [SIGNAL]: 'halt';
  readonly reason: string;
  readonly data?: unknown;
}
/** This step did not do its work; its `value` flows on, the run continues, it is never undone. */
export interface Skipped<T = undefined> {
  readonly [SIGNAL]: 'skipped';
  readonly reason: string;
  readonly value: T;
}
/** Any signal. */
export type Signal = Success<unknown> | Failure | Halt | Skipped<unknown>;

/** Returns a success signal. */
export function success<T>(value: T): Success<T> {
  return { [SIGNAL]: 'success', value };
}

/**
 * Returns a failure signal. A string becomes an `Error`.
 *
 * @example
 * ```ts
 * return failure(new Error('card declined'), { retryable: false });
 * ```
 */
export function failure(error: Error | string, options: { retryable?: boolean } = {}): Failure {
  return {
    [SIGNAL]: 'failure',
    error: typeof error === 'string' ? new Error(error) : error,
    retryable: options.retryable ?? true,
  };
}

/** Returns a halt signal: the run stops after in-flight steps settle, nothing is rolled back. */
export function halt(reason: string, data?: unknown): Halt {
  return data === undefined ? { [SIGNAL]: 'halt', reason } : { [SIGNAL]: 'halt', reason, data };
}

/** Returns a skipped signal carrying an optional value that dependents receive. */
export function skip(reason: string): Skipped;
export function skip<T>(reason: string, value: T): Skipped<T>;
export function skip(reason: string, value?: unknown): Skipped<unknown> {
  return { [SIGNAL]: 'skipped', reason, value };
}

/** Which kind of signal `value` is, or `undefined` for a plain value. */
export function signalKind(value: unknown): Signal[typeof SIGNAL] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as Partial<Record<typeof SIGNAL, Signal[typeof SIGNAL]>>)[SIGNAL];
}

/** The value type a step produces when its body returns `R`. */
export type StepValue<R> = [Awaited<R>] extends [never]
  ? never
  : Awaited<R> extends infer A
    ? A extends Success<infer V>
      ? V
      : A extends Skipped<infer V>
        ? V
        : A extends Failure | Halt
          ? never
          : A
    : never;
