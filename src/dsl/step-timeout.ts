/**
 * A step's `timeout`: how long one attempt of its body may run (docs/time.md). Validated when the
 * step is declared; the engine enforces it (`src/engine/run/step-timeout.ts`).
 *
 * @module
 */
import { DefinitionError } from '../errors.js';
import { parseDuration, type Duration } from './duration.js';

/** The step option: how long one attempt of the body may run. */
export interface StepTimeoutOptions {
  /**
   * How long one attempt of the body may run: milliseconds, or a duration such as `'30s'`. At
   * the deadline the body's `ctx.signal` is aborted and the attempt fails with a retryable
   * `StepTimeoutError` (`step_timed_out`); retries and compensation follow as for any failure.
   * Default: no time limit.
   */
  readonly timeout?: Duration;
}

/**
 * The validated `timeout` of a step, in ms (undefined when none is declared). Throws a
 * {@link DefinitionError} naming the step and the option for anything but a positive, finite
 * duration. `where.reactor` is `''` for a step definition not placed in a reactor yet.
 */
export function stepTimeoutMs(
  value: unknown,
  where: { readonly reactor: string; readonly step?: string | undefined },
): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms !== undefined && ms > 0 && Number.isFinite(ms)) return Math.ceil(ms);
  const prefix =
    where.reactor === ''
      ? `step definition "${where.step ?? '(unnamed)'}"`
      : `reactor "${where.reactor}", step "${where.step ?? '(unnamed)'}"`;
  throw new DefinitionError(
    `${prefix}: timeout must be a positive duration (got ${shown(value)}); use milliseconds or '500ms', '30s', '5m', '1h'`,
    where.reactor,
    where.step,
  );
}

/** A rejected value, as a message shows it. */
function shown(value: unknown): string {
  if (typeof value === 'number') return String(value);
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}
