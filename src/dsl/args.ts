/**
 * Argument sources: where a step's arguments come from. A step's `args` function receives the
 * typed sources `$` and returns a map of {@link Arg}s; it runs once, when the reactor is built,
 * so the graph's edges are known before any run.
 *
 * @module
 */

const ARG = Symbol.for('ts-reactor.arg');

/** Where an argument's value comes from. */
export type ArgSource =
  | { readonly kind: 'input'; readonly name: string; readonly path: readonly PropertyKey[] }
  | { readonly kind: 'result'; readonly step: string; readonly path: readonly PropertyKey[] }
  | { readonly kind: 'value'; readonly value: unknown };

/** One argument: a source plus transforms applied in order. `T` is the resolved type. */
export interface Arg<T> {
  readonly [ARG]: true;
  /** Phantom: the resolved type (never read at run time). */
  readonly '~type'?: T;
  readonly source: ArgSource;
  readonly transforms: readonly ((value: never) => unknown)[];
  /** A new argument whose value is `fn(value)`. A throwing transform fails the step before it starts. */
  transform<U>(fn: (value: T) => U): Arg<U>;
}

/** A map of arguments. */
export type ArgMap = Readonly<Record<string, Arg<unknown>>>;
/** The resolved values of an argument map. */
export type ArgValues<A> = { [K in keyof A]: A[K] extends Arg<infer T> ? T : never } & {};

function makeArg<T>(source: ArgSource, transforms: readonly ((value: never) => unknown)[] = []): Arg<T> {
  return Object.freeze({
    [ARG]: true as const,
    source,
    transforms,
    transform<U>(fn: (value: T) => U): Arg<U> {
      return makeArg<U>(source, [...transforms, fn]);
    },
  });
}

/** True when `value` is an {@link Arg}. */
export function isArg(value: unknown): value is Arg<unknown> {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[ARG] === true;
}

type At<T, K> = K extends keyof NonNullable<T> ? NonNullable<T>[K] : never;

/**
 * The typed argument sources a step's `args` function receives. `I` is the reactor's validated
 * input, `S` the results of the steps declared so far.
 */
export interface ArgSources<I, S> {
  /** A reactor input, optionally a path into it. */
  input<K extends keyof I & string>(name: K): Arg<I[K]>;
  input<K extends keyof I & string, P1 extends keyof NonNullable<I[K]>>(name: K, p1: P1): Arg<At<I[K], P1>>;
  input<K extends keyof I & string, P1 extends keyof NonNullable<I[K]>, P2 extends keyof NonNullable<At<I[K], P1>>>(
    name: K,
    p1: P1,
    p2: P2,
  ): Arg<At<At<I[K], P1>, P2>>;
  /** A declared step's result, optionally a path into it (creates a dependency on that step). */
  result<N extends keyof S & string>(step: N): Arg<S[N]>;
  result<N extends keyof S & string, P1 extends keyof NonNullable<S[N]>>(step: N, p1: P1): Arg<At<S[N], P1>>;
  result<N extends keyof S & string, P1 extends keyof NonNullable<S[N]>, P2 extends keyof NonNullable<At<S[N], P1>>>(
    step: N,
    p1: P1,
    p2: P2,
  ): Arg<At<At<S[N], P1>, P2>>;
  result<
    N extends keyof S & string,
    P1 extends keyof NonNullable<S[N]>,
    P2 extends keyof NonNullable<At<S[N], P1>>,
    P3 extends keyof NonNullable<At<At<S[N], P1>, P2>>,
  >(
    step: N,
    p1: P1,
    p2: P2,
    p3: P3,
  ): Arg<At<At<At<S[N], P1>, P2>, P3>>;
  /** A constant. */
  value<const T>(value: T): Arg<T>;
}

/** The runtime argument sources (untyped; the types come from {@link ArgSources}). */
export const sources: ArgSources<Record<string, unknown>, Record<string, unknown>> = Object.freeze({
  input: (name: string, ...path: PropertyKey[]) => makeArg({ kind: 'input', name, path }),
  result: (step: string, ...path: PropertyKey[]) => makeArg({ kind: 'result', step, path }),
  value: (value: unknown) => makeArg({ kind: 'value', value }),
}) as ArgSources<Record<string, unknown>, Record<string, unknown>>;

/** Follows `path` into `value`; a missing link throws (the step then fails before it starts). */
export function followPath(value: unknown, path: readonly PropertyKey[], describe: string): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || current === undefined)
      throw new TypeError(`${describe}: cannot read "${String(key)}" of ${String(current)}`);
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}
