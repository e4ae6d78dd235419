/**
 * From what a step declares to its node's edges: the argument map its `args` function returns
 * (run once, at build) and the steps it depends on.
 *
 * @module
 */
import { sources, type Arg } from '../args.js';

/** Runs a step's `args` function over the argument sources: the frozen argument map (`{}` without one). */
export function resolveWiring(fn: ((s: never) => unknown) | undefined): Readonly<Record<string, Arg<unknown>>> {
  if (fn === undefined) return {};
  return Object.freeze({ ...(fn as (s: typeof sources) => Record<string, Arg<unknown>>)(sources) });
}

/** The steps an argument map and a `waitFor` list depend on, without duplicates. */
export function dependenciesOf(
  args: Readonly<Record<string, Arg<unknown>>> | undefined,
  waitFor: readonly string[],
): readonly string[] {
  const deps = new Set<string>();
  for (const arg of Object.values(args ?? {})) if (arg.source.kind === 'result') deps.add(arg.source.step);
  for (const name of waitFor) deps.add(name);
  return Object.freeze([...deps]);
}
