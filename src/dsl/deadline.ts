/**
 * A reactor's `deadline`: how long an execution may take from its creation before it is
 * cancelled and rolled back (docs/time.md, "Deadlines"). Validated when the reactor is declared;
 * the engine enforces it (`src/engine/execution/deadline.ts`).
 *
 * @module
 */
import { DefinitionError } from '../errors.js';
import { parseDuration, type Duration } from './duration.js';

/** The reactor option: how long an execution may take, counted from its creation. */
export interface ReactorDeadlineOptions {
  /**
   * How long an execution may take, counted from its creation (`engine.run` or `engine.start`
   * accepting it): milliseconds, or a duration such as `'10m'`. Past it the execution is
   * cancelled and rolled back like an operator's cancel (completed steps undone, the running
   * step's `ctx.signal` aborted); it ends `cancelled` with a `DeadlineExceededError`
   * (`deadline_exceeded`) as its `cause`. Default: no deadline.
   */
  readonly deadline?: Duration;
}

/**
 * The validated `deadline` of a reactor, in ms (undefined when none is declared). Throws a
 * {@link DefinitionError} naming the reactor and the option for anything but a positive, finite
 * duration.
 */
export function reactorDeadlineMs(value: unknown, reactor: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms !== undefined && ms > 0 && Number.isFinite(ms)) return Math.ceil(ms);
  throw new DefinitionError(
    `reactor "${reactor}": deadline must be a positive duration (got ${shown(value)}); use milliseconds or '30s', '10m', '2h', '1d'`,
    reactor,
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

/** `{ deadlineMs }` of a reactor's options, or nothing: what its definition carries. */
export function deadlineOf(options: ReactorDeadlineOptions, reactor: string): { readonly deadlineMs?: number } {
  const deadlineMs = reactorDeadlineMs(options.deadline, reactor);
  return deadlineMs === undefined ? {} : { deadlineMs };
}
