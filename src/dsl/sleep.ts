/**
 * A sleep step's declaration (docs/time.md#sleeps): a fixed duration (`for`), or an instant
 * computed from the reactor's input and earlier results (`until`), validated when the step is
 * declared into a frozen {@link SleepSpec}. The engine runs it (`src/engine/graph/sleep.ts`).
 *
 * @module
 */
import { DefinitionError } from '../errors.js';
import { isArg, sources, type Arg, type ArgSources } from './args.js';
import { parseDuration, type Duration } from './duration.js';

/** The instant a sleep's `until` produces: a `Date`, or milliseconds since the epoch. */
export type SleepInstant = Date | number;

/** Options of a sleep step: exactly one of `for` and `until`, and what it waits for. */
export type SleepOptions<I, S> = (
  | {
      /** How long to sleep once the step starts: milliseconds, or a duration such as `'3d'`. Longer than 0. */
      readonly for: Duration;
      readonly until?: never;
    }
  | {
      /**
       * When to wake: an argument (`$.input(...)`, `$.result(...)`, with `.transform`) producing a
       * `Date` or epoch milliseconds, resolved once when the step starts. An instant already past
       * completes the step at once.
       */
      readonly until: ($: ArgSources<I, S>) => Arg<SleepInstant>;
      readonly for?: never;
    }
) & {
  /** Steps that must finish first although `until` does not read them. */
  readonly waitFor?: readonly (keyof S & string)[];
};

/** The validated, frozen form of a sleep declaration (`until`'s argument is the node's `args.until`). */
export type SleepSpec = { readonly kind: 'for'; readonly ms: number } | { readonly kind: 'until' };

/** A sleep step's result. */
export interface SleepResult {
  /** When it was to wake (engine clock, ms since the epoch), computed once when it started. */
  readonly wakeAt: number;
  /** When it woke. */
  readonly wokeAt: number;
  /** True when an operator woke it before `wakeAt` (`engine.wake`). */
  readonly early: boolean;
}

interface Where {
  readonly reactor: string;
  readonly step: string;
}

function fail(where: Where, message: string): never {
  throw new DefinitionError(`reactor "${where.reactor}", sleep "${where.step}": ${message}`, where.reactor, where.step);
}

/**
 * Validates a sleep declaration: its spec, and its arguments (`{ until }` for an `until` sleep).
 * Throws a {@link DefinitionError} naming the reactor and the step for anything else than one of
 * a positive finite `for` or an `until` function returning an argument.
 */
export function sleepSpec(
  where: Where,
  options: SleepOptions<never, never>,
): { readonly spec: SleepSpec; readonly args: Readonly<Record<string, Arg<unknown>>> } {
  const o = (options ?? {}) as { readonly for?: unknown; readonly until?: unknown };
  if ((o.for === undefined) === (o.until === undefined))
    fail(
      where,
      "declare exactly one of for (a duration, e.g. '3d') and until (($) => an argument giving a Date or epoch ms)",
    );
  if (o.for !== undefined) {
    const ms = parseDuration(o.for);
    if (ms === undefined || ms <= 0 || !Number.isFinite(ms))
      fail(
        where,
        `for must be a positive duration (got ${JSON.stringify(o.for) ?? typeof o.for}); use milliseconds or '30s', '2h', '3d'`,
      );
    return { spec: Object.freeze({ kind: 'for', ms: Math.ceil(ms) }), args: Object.freeze({}) };
  }
  if (typeof o.until !== 'function') fail(where, 'until must be a function ($) => an argument');
  const until: unknown = (o.until as (s: typeof sources) => unknown)(sources);
  if (!isArg(until))
    fail(where, 'until must return an argument ($.input(...), $.result(...), $.value(...), with .transform)');
  return { spec: Object.freeze({ kind: 'until' }), args: Object.freeze({ until }) };
}
