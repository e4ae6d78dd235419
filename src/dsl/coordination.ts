/**
 * Coordination declarations: the five primitives as frozen, validated data. The same words
 * serve reactors now and steps later (`withLock`, `withSemaphore`, `withRateLimit`,
 * `withPeriod`, `withOrderedLock`).
 *
 * @module
 */
import { DefinitionError } from '../errors.js';
import { parseDuration, type Duration } from './duration.js';

/** Computes a coordination key from validated arguments (for a reactor: its input). */
export type KeyFn<A> = (args: A) => string;

/**
 * Computes a semaphore's or a rate window's limit from the validated arguments (for a reactor:
 * its input), at every admission. It must return an integer ≥ 1; anything else (or a throw)
 * refuses the admission with a `CoordinationLimitError` and takes nothing.
 */
export type LimitFn<A> = (args: A) => number;

/** A limit: a fixed integer ≥ 1, or a {@link LimitFn} evaluated at every admission. */
export type Limit<A> = number | LimitFn<A>;

/** One declaration or several of the same kind (several: each with its own key, all admitted or none). */
export type OneOrMany<T> = T | readonly T[];

/** `withLock`: one holder at a time per key, re-entrant for the same execution. */
export interface LockOptions<A> {
  readonly key: KeyFn<A>;
  /** How long a hold lives without renewal; renewed every ttl/3 while held. Default `'30s'`. */
  readonly ttl?: Duration;
  /** How long an in-process caller waits for the key before failing. Default `'10s'`. */
  readonly wait?: Duration;
  /**
   * In a worker: how long an execution may wait for the key, parked, before it fails with a
   * `ContentionError` (counted from its first park on the key, across its re-parks). Default: no
   * time bound of its own; the engine's `contentionCap` bounds the attempts (every refusal and
   * every fallback poll that finds the key still held is one). With `contentionCap: Infinity`,
   * this is the wait's only bound.
   */
  readonly contentionTimeout?: Duration;
}
/**
 * `withSemaphore`: at most `limit` holders per key, each a lease that expires on its own. `limit`
 * may be a function of the arguments, evaluated at every admission.
 */
export interface SemaphoreOptions<A> extends LockOptions<A> {
  readonly limit: Limit<A>;
}
/** One window of a rate limit: at most `limit` starts in any window of length `per`. */
export interface RateWindowOptions {
  readonly limit: number;
  readonly per: Duration;
}
/** A declared rate window: like {@link RateWindowOptions}, its `limit` may be a function of the arguments. */
export interface RateWindowOf<A> {
  readonly limit: Limit<A>;
  readonly per: Duration;
}
/**
 * `withRateLimit`: exact sliding windows, all checked and charged together. `wait`: how long an
 * in-process caller waits for room (default 0: refuse at once). `contentionTimeout`: in a worker,
 * how long an execution may stay parked on the full window before it fails with a
 * `ContentionError` (default: no time bound). A named limit takes its windows from the engine's
 * `rateLimits`.
 */
export type RateLimitOptions<A> =
  | ({ readonly key: KeyFn<A>; readonly wait?: Duration; readonly contentionTimeout?: Duration } & (
      RateWindowOf<A> | { readonly windows: readonly RateWindowOf<A>[] }
    ))
  | { readonly name: string; readonly key?: KeyFn<A>; readonly wait?: Duration; readonly contentionTimeout?: Duration };
/** Calendar buckets are UTC; `{ seconds }` buckets are fixed-length from the epoch. */
export type PeriodEvery = 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year' | { readonly seconds: number };
/** `withPeriod`: at most one successful run per key per bucket. */
export interface PeriodOptions<A> {
  readonly key: KeyFn<A>;
  readonly every: PeriodEvery;
}
/** `withOrderedLock`: runs pass in the order they were accepted (their position), one at a time. */
export interface OrderedLockOptions<A> {
  readonly key: KeyFn<A>;
  /** A blocker that shows no sign of life for this long is passed over. Default `'5m'`. */
  readonly poisonTimeout?: Duration;
  /** After a failure, later positions of the batch halt with `ordered_lock_chain_failed`. Default false. */
  readonly strict?: boolean;
  /** How long an in-process caller waits for its turn. Default `'30s'`. */
  readonly wait?: Duration;
}

type UntypedKey = (args: never) => unknown;
/** A declared limit: a validated integer, or the function to evaluate at admission. */
export type SpecLimit = number | ((args: never) => unknown);
/** A validated declaration. */
export type CoordinationSpec =
  | {
      readonly kind: 'lock';
      readonly key: UntypedKey;
      readonly ttlMs: number;
      readonly waitMs: number;
      readonly rollbackWaitMs?: number;
      readonly contentionTimeoutMs?: number;
    }
  | {
      readonly kind: 'semaphore';
      readonly key: UntypedKey;
      readonly limit: SpecLimit;
      readonly ttlMs: number;
      readonly waitMs: number;
      readonly rollbackWaitMs?: number;
      readonly contentionTimeoutMs?: number;
    }
  | {
      readonly kind: 'rate_limit';
      readonly key: UntypedKey | undefined;
      readonly name: string | undefined;
      readonly windows: readonly { readonly limit: SpecLimit; readonly periodMs: number }[];
      readonly waitMs: number;
      readonly contentionTimeoutMs?: number;
    }
  | { readonly kind: 'period'; readonly key: UntypedKey; readonly every: PeriodEvery }
  | {
      readonly kind: 'ordered_lock';
      readonly key: UntypedKey;
      readonly poisonMs: number;
      readonly strict: boolean;
      readonly waitMs: number;
    };

/** The kinds, in the fixed acquisition order of the checks that take something. */
export type CoordinationKind = CoordinationSpec['kind'];

const CALENDAR = new Set(['minute', 'hour', 'day', 'week', 'month', 'year']);

interface Where {
  /** The reactor; `''` for a step definition not placed in a reactor yet. */
  readonly reactor: string;
  readonly step?: string | undefined;
}

function fail(where: Where, message: string): never {
  const prefix =
    where.reactor === ''
      ? `step definition "${where.step ?? '(unnamed)'}"`
      : where.step === undefined
        ? `reactor "${where.reactor}"`
        : `reactor "${where.reactor}", step "${where.step}"`;
  throw new DefinitionError(`${prefix}: ${message}`, where.reactor, where.step);
}

function duration(where: Where, what: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = parseDuration(value);
  if (ms !== undefined) return Math.ceil(ms);
  return fail(
    where,
    `${what} is not a duration (got ${JSON.stringify(value)}); use milliseconds or '500ms', '30s', '5m', '1h', '1d'`,
  );
}

function keyFn(where: Where, kind: string, key: unknown): UntypedKey {
  if (typeof key !== 'function')
    fail(where, `${kind} needs a key function, e.g. key: (input) => \`account:\${input.accountId}\``);
  return key as UntypedKey;
}

function positiveInt(where: Where, what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    fail(where, `${what} must be an integer >= 1 (got ${JSON.stringify(value)})`);
  return value;
}

/** A fixed limit (an integer ≥ 1) or a limit function, kept as declared. */
function limitOf(where: Where, what: string, value: unknown): SpecLimit {
  return typeof value === 'function' ? (value as SpecLimit) : positiveInt(where, what, value);
}

function positiveDuration(where: Where, what: string, value: unknown, fallback: number): number {
  const ms = duration(where, what, value, fallback);
  if (ms <= 0) fail(where, `${what} must be longer than 0`);
  return ms;
}

/** `{ contentionTimeoutMs }` when `contentionTimeout` is given: a duration longer than 0. */
function contentionTimeout(where: Where, what: string, value: unknown): { readonly contentionTimeoutMs?: number } {
  return value === undefined
    ? {}
    : { contentionTimeoutMs: positiveDuration(where, `${what} contentionTimeout`, value, 0) };
}

/** Validates `withLock` options. */
export function lockSpec(where: Where, options: LockOptions<never>): CoordinationSpec {
  return {
    kind: 'lock',
    key: keyFn(where, 'withLock', options?.key),
    ttlMs: positiveDuration(where, 'withLock ttl', options.ttl, 30_000),
    waitMs: duration(where, 'withLock wait', options.wait, 10_000),
    ...contentionTimeout(where, 'withLock', options.contentionTimeout),
  };
}

/** Validates `withSemaphore` options. */
export function semaphoreSpec(where: Where, options: SemaphoreOptions<never>): CoordinationSpec {
  return {
    kind: 'semaphore',
    key: keyFn(where, 'withSemaphore', options?.key),
    limit: limitOf(where, 'withSemaphore limit', options.limit),
    ttlMs: positiveDuration(where, 'withSemaphore ttl', options.ttl, 30_000),
    waitMs: duration(where, 'withSemaphore wait', options.wait, 10_000),
    ...contentionTimeout(where, 'withSemaphore', options.contentionTimeout),
  };
}

/** Validates `withRateLimit` options (named, single window, or several windows). */
export function rateLimitSpec(where: Where, options: RateLimitOptions<never>): CoordinationSpec {
  const o = options as Partial<{
    key: unknown;
    name: unknown;
    limit: unknown;
    per: unknown;
    windows: unknown;
    wait: unknown;
    contentionTimeout: unknown;
  }>;
  const waitMs = duration(where, 'withRateLimit wait', o.wait, 0);
  const timeout = contentionTimeout(where, 'withRateLimit', o.contentionTimeout);
  if (o.name !== undefined) {
    if (typeof o.name !== 'string' || o.name.length === 0) fail(where, 'withRateLimit name must be a non-empty string');
    if (o.limit !== undefined || o.per !== undefined || o.windows !== undefined)
      fail(
        where,
        `withRateLimit "${o.name}": a named limit takes its windows from its registration; remove limit/per/windows`,
      );
    return {
      kind: 'rate_limit',
      key: o.key === undefined ? undefined : keyFn(where, 'withRateLimit', o.key),
      name: o.name,
      windows: [],
      waitMs,
      ...timeout,
    };
  }
  if (o.windows !== undefined && (o.limit !== undefined || o.per !== undefined))
    fail(where, 'withRateLimit takes either limit/per or windows, not both');
  const raw = o.windows ?? [{ limit: o.limit, per: o.per }];
  if (!Array.isArray(raw) || raw.length === 0) fail(where, 'withRateLimit windows must be a non-empty array');
  return {
    kind: 'rate_limit',
    key: keyFn(where, 'withRateLimit', o.key),
    name: undefined,
    windows: declaredWindows(where, raw as RateWindowOf<never>[]),
    waitMs,
    ...timeout,
  };
}

/** Validates declared rate windows: a limit may be a function of the arguments. */
function declaredWindows(
  where: Where,
  windows: readonly RateWindowOf<never>[],
): readonly { readonly limit: SpecLimit; readonly periodMs: number }[] {
  return windows.map((w) => {
    if (w?.per === undefined) fail(where, "a rate limit window needs per (e.g. per: '1m')");
    return {
      limit: limitOf(where, 'rate limit', w.limit),
      periodMs: positiveDuration(where, 'rate limit per', w.per, 0),
    };
  });
}

/** Validates rate windows (also used when registering named limits). */
export function compileWindows(
  where: Where,
  windows: readonly RateWindowOptions[],
): readonly { readonly limit: number; readonly periodMs: number }[] {
  return windows.map((w) => {
    if (w?.per === undefined) fail(where, "a rate limit window needs per (e.g. per: '1m')");
    return {
      limit: positiveInt(where, 'rate limit', w.limit),
      periodMs: positiveDuration(where, 'rate limit per', w.per, 0),
    };
  });
}

/** Validates `withPeriod` options. */
export function periodSpec(where: Where, options: PeriodOptions<never>): CoordinationSpec {
  const every = options?.every as unknown;
  const ok =
    (typeof every === 'string' && CALENDAR.has(every)) ||
    (typeof every === 'object' &&
      every !== null &&
      Number.isInteger((every as { seconds?: unknown }).seconds) &&
      (every as { seconds: number }).seconds > 0);
  if (!ok)
    fail(
      where,
      `withPeriod every must be 'minute', 'hour', 'day', 'week', 'month', 'year' or { seconds: n } (got ${JSON.stringify(every)})`,
    );
  return { kind: 'period', key: keyFn(where, 'withPeriod', options.key), every: every as PeriodEvery };
}

/** Validates `withOrderedLock` options. */
export function orderedLockSpec(where: Where, options: OrderedLockOptions<never>): CoordinationSpec {
  if (options?.strict !== undefined && typeof options.strict !== 'boolean')
    fail(where, 'withOrderedLock strict must be a boolean');
  if ((options as { contentionTimeout?: unknown } | undefined)?.contentionTimeout !== undefined)
    fail(where, 'withOrderedLock takes no contentionTimeout: a wait for the turn is bounded by poisonTimeout');
  return {
    kind: 'ordered_lock',
    key: keyFn(where, 'withOrderedLock', options?.key),
    poisonMs: positiveDuration(where, 'withOrderedLock poisonTimeout', options.poisonTimeout, 300_000),
    strict: options.strict ?? false,
    waitMs: duration(where, 'withOrderedLock wait', options.wait, 30_000),
  };
}

/** Replaces the declaration of the same kind (a redeclaration overrides), keeping the others. */
export function withSpec(specs: readonly CoordinationSpec[], spec: CoordinationSpec): readonly CoordinationSpec[] {
  return withSpecs(specs, spec.kind, [spec]);
}

/** Replaces every declaration of `kind` by `list` (a redeclaration overrides), keeping the others. */
export function withSpecs(
  specs: readonly CoordinationSpec[],
  kind: CoordinationKind,
  list: readonly CoordinationSpec[],
): readonly CoordinationSpec[] {
  return Object.freeze([...specs.filter((s) => s.kind !== kind), ...list.map((s) => Object.freeze(s))]);
}

/**
 * Validates one declaration or several of one kind (`withSemaphore([...])`, `rateLimit: [...]`):
 * a list must not be empty; each entry is validated alone (`compile`), its position named.
 */
export function severalSpecs<O>(
  where: Where,
  method: string,
  options: OneOrMany<O>,
  compile: (where: Where, options: O) => CoordinationSpec,
): readonly CoordinationSpec[] {
  if (!Array.isArray(options)) return [compile(where, options as O)];
  if (options.length === 0) fail(where, `${method} takes one declaration or a non-empty list of them`);
  return (options as readonly O[]).map((entry, i) => {
    if (typeof entry !== 'object' || entry === null) fail(where, `${method} [${i}] is not a declaration`);
    return compile(where, entry);
  });
}

/**
 * Step-level rollback: `compensate` and `undo` of a step re-take its lock and semaphore (same
 * arguments, same key) before they run, and never park.
 */
export interface StepRollbackOptions {
  /**
   * How long a compensate / undo waits to re-take the key before it is reported in
   * `rollbackFailures` with reason `coordination_unavailable` (it does not run). Default: the
   * hold's `ttl` (a holder that died has lost its hold by then). `0` tries once.
   */
  readonly rollbackWait?: Duration;
}
/** A step's `lock`: `withLock`'s options plus {@link StepRollbackOptions}. */
export interface StepLockOptions<A> extends LockOptions<A>, StepRollbackOptions {}
/** A step's `semaphore`: `withSemaphore`'s options plus {@link StepRollbackOptions}. */
export interface StepSemaphoreOptions<A> extends SemaphoreOptions<A>, StepRollbackOptions {}

/**
 * Step-scoped coordination: the same five declarations as the reactor's `withX` methods, with
 * the same options, keyed on the step's own resolved, validated arguments (defaults applied).
 * `lock` ↔ `withLock`, `semaphore` ↔ `withSemaphore`, `rateLimit` ↔ `withRateLimit`,
 * `period` ↔ `withPeriod`, `orderedLock` ↔ `withOrderedLock`.
 *
 * They are taken in one fixed order (ordered lock, period check, lock, semaphore, rate limit,
 * period re-check) after argument validation, immediately before each attempt's body, and
 * released right after it, on every outcome. In-process, contention waits the declared `wait`,
 * then the step fails before its body (not retried, not compensated) and the run rolls back.
 * A marked period skips the step (reason `period`); the bucket is marked only when the body
 * succeeds.
 */
export interface StepCoordinationOptions<A> {
  readonly lock?: StepLockOptions<A>;
  /** One semaphore, or several with different keys (taken in the string order of their keys, all or none). */
  readonly semaphore?: OneOrMany<StepSemaphoreOptions<A>>;
  /** One rate limit, or several with different keys (charged in the string order of their keys, all or none). */
  readonly rateLimit?: OneOrMany<RateLimitOptions<A>>;
  readonly period?: PeriodOptions<A>;
  /**
   * Executions pass the step one at a time per key, **in the order they reached the step** (a
   * position is taken at each attempt's admission) — a weaker promise than the reactor-level
   * ordered lock, whose positions are taken when the run is accepted. A strict chain failure
   * skips the step (reason `ordered_lock_chain_failed`).
   */
  readonly orderedLock?: OrderedLockOptions<A>;
}

/**
 * Compiles a step's declarations with the reactor-level validators, on top of `inherited`
 * (a redeclared primitive replaces the inherited one).
 */
export function stepCoordinationSpecs(
  where: Where,
  options: StepCoordinationOptions<never>,
  inherited: readonly CoordinationSpec[] = [],
): readonly CoordinationSpec[] {
  let specs = inherited;
  if (options.orderedLock !== undefined) specs = withSpec(specs, orderedLockSpec(where, options.orderedLock));
  if (options.period !== undefined) specs = withSpec(specs, periodSpec(where, options.period));
  if (options.lock !== undefined)
    specs = withSpec(specs, withRollbackWait(where, 'lock', lockSpec(where, options.lock), options.lock.rollbackWait));
  if (options.semaphore !== undefined)
    specs = withSpecs(
      specs,
      'semaphore',
      severalSpecs(where, 'semaphore', options.semaphore, (w, o) =>
        withRollbackWait(w, 'semaphore', semaphoreSpec(w, o), o.rollbackWait),
      ),
    );
  if (options.rateLimit !== undefined)
    specs = withSpecs(specs, 'rate_limit', severalSpecs(where, 'rateLimit', options.rateLimit, rateLimitSpec));
  return specs.length === 0 ? NONE : specs;
}

const NONE: readonly CoordinationSpec[] = Object.freeze([]);

function withRollbackWait(
  where: Where,
  kind: 'lock' | 'semaphore',
  spec: CoordinationSpec,
  rollbackWait: unknown,
): CoordinationSpec {
  if (rollbackWait === undefined) return spec;
  return { ...spec, rollbackWaitMs: duration(where, `${kind} rollbackWait`, rollbackWait, 0) } as CoordinationSpec;
}
