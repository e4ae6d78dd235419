/**
 * The declarations of one admission, made concrete before anything is taken: every key computed,
 * every limit function evaluated, named rate limits' windows looked up, and the order fixed —
 * by kind (ordered gate, period, lock, semaphore, rate limit), then, among several semaphores or
 * several rate limits, by the string order of their keys (docs/decisions/085).
 *
 * @module
 */
import type { CoordinationSpec, SpecLimit } from '../dsl/coordination.js';
import { CoordinationKeyError, CoordinationLimitError, UnknownRateLimitError } from '../errors.js';
import { computeKey, PRIMITIVE, type CoordinationScope } from './scope.js';

type SemaphoreSpec = Extract<CoordinationSpec, { kind: 'semaphore' }>;
type RateSpec = Extract<CoordinationSpec, { kind: 'rate_limit' }>;

/** A rate window with its limit evaluated. */
export interface ResolvedWindow {
  readonly limit: number;
  readonly periodMs: number;
}
/** A semaphore with its limit evaluated for this admission. */
export type ResolvedSemaphore = Omit<SemaphoreSpec, 'limit'> & { readonly limit: number };
/** A rate limit with its windows (a named one's from the engine) and their limits evaluated. */
export type ResolvedRate = Omit<RateSpec, 'windows'> & { readonly windows: readonly ResolvedWindow[] };
/** A declaration ready to take: no function left in its limits. */
export type ResolvedSpec =
  Exclude<CoordinationSpec, { kind: 'semaphore' | 'rate_limit' }> | ResolvedSemaphore | ResolvedRate;

/** One declaration of an admission, with its key. */
export interface Keyed {
  readonly spec: ResolvedSpec;
  readonly key: string;
}

const ORDER: readonly CoordinationSpec['kind'][] = ['ordered_lock', 'period', 'lock', 'semaphore', 'rate_limit'];

/**
 * Computes every key and limit of `specs` for `args`, in the order they are taken. Throws a
 * {@link CoordinationKeyError} (a key that cannot be computed, or two declarations of one kind on
 * the same key), a {@link CoordinationLimitError} or an {@link UnknownRateLimitError}: nothing is
 * taken then.
 */
export function resolveAll(
  specs: readonly CoordinationSpec[],
  args: unknown,
  scope: Pick<CoordinationScope, 'reactor' | 'step' | 'rateLimits'>,
): Keyed[] {
  const out: Keyed[] = [];
  for (const kind of ORDER) {
    // A kind not declared costs one pass over the declarations; one declaration of a kind is not sorted.
    let ofKind: { spec: CoordinationSpec; key: string }[] | undefined;
    for (const spec of specs)
      if (spec.kind === kind) (ofKind ??= []).push({ spec, key: computeKey(spec, args, scope) });
    if (ofKind === undefined) continue;
    if (ofKind.length > 1) ofKind.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (let i = 0; i < ofKind.length; i++) {
      const { spec, key } = ofKind[i]!;
      if (i > 0 && ofKind[i - 1]!.key === key)
        throw new CoordinationKeyError({
          reactor: scope.reactor,
          step: scope.step,
          primitive: PRIMITIVE[kind],
          problem: `two ${PRIMITIVE[kind].replace('_', ' ')} declarations computed the same key "${key}"; give each its own key`,
        });
      out.push({ spec: resolve(spec, key, args, scope), key });
    }
  }
  return out;
}

function resolve(
  spec: CoordinationSpec,
  key: string,
  args: unknown,
  scope: Pick<CoordinationScope, 'reactor' | 'step' | 'rateLimits'>,
): ResolvedSpec {
  if (spec.kind === 'semaphore') return { ...spec, limit: limitFor(spec.limit, key, args, scope, 'semaphore') };
  if (spec.kind !== 'rate_limit') return spec;
  if (spec.name === undefined)
    return {
      ...spec,
      windows: spec.windows.map((w) => ({
        limit: limitFor(w.limit, key, args, scope, 'rate_limit'),
        periodMs: w.periodMs,
      })),
    };
  const windows = scope.rateLimits.get(spec.name);
  if (windows === undefined) throw new UnknownRateLimitError(scope.reactor, spec.name, [...scope.rateLimits.keys()]);
  return { ...spec, windows };
}

/** A declared limit as a number: a fixed one as is, a function's result checked (an integer ≥ 1). */
export function limitFor(
  limit: SpecLimit,
  key: string,
  args: unknown,
  scope: Pick<CoordinationScope, 'reactor' | 'step'>,
  primitive: 'semaphore' | 'rate_limit',
): number {
  if (typeof limit === 'number') return limit;
  const where = { reactor: scope.reactor, step: scope.step, primitive, key };
  let value: unknown;
  try {
    value = (limit as (a: unknown) => unknown)(args);
  } catch (error) {
    const problem = `the limit function threw: ${error instanceof Error ? error.message : String(error)}`;
    throw new CoordinationLimitError({ ...where, problem }, error);
  }
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value;
  if (value instanceof Promise) void value.catch(() => undefined); // refused unread: its rejection is not left unhandled
  throw new CoordinationLimitError({ ...where, problem: `the limit function returned ${describe(value)}` });
}

function describe(value: unknown): string {
  if (value instanceof Promise) return 'a promise (a limit function is synchronous)';
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  if (value === null) return 'null';
  return typeof value === 'string' ? `the string ${JSON.stringify(value)}` : typeof value;
}

/**
 * Whether a declaration is exclusive for these arguments — a lock, or a semaphore whose limit is
 * 1 (a limit function's result; one that cannot be evaluated is left to admission to report).
 */
export function isExclusive(
  spec: CoordinationSpec,
  args: unknown,
  scope: Pick<CoordinationScope, 'reactor' | 'step'>,
): boolean {
  if (spec.kind === 'lock') return true;
  if (spec.kind !== 'semaphore') return false;
  if (typeof spec.limit === 'number') return spec.limit === 1;
  try {
    return limitFor(spec.limit, '', args, scope, 'semaphore') === 1;
  } catch {
    return false;
  }
}
