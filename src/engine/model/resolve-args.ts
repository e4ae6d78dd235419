import type { Arg } from '../../dsl/args.js';
import { followPath } from '../../dsl/args.js';
import { ArgumentResolutionError } from '../../errors.js';

/** Where argument values are read from. */
export interface ArgScope {
  readonly input: Readonly<Record<string, unknown>>;
  readonly results: ReadonlyMap<string, unknown>;
}

/** Resolves one argument (source, path, transforms). Throws {@link ArgumentResolutionError}. */
export function resolveArg(arg: Arg<unknown>, scope: ArgScope, step: string, name: string): unknown {
  try {
    const source = arg.source;
    let value: unknown;
    if (source.kind === 'value') value = source.value;
    else if (source.kind === 'input')
      value = followPath(scope.input[source.name], source.path, `input "${source.name}"`);
    else value = followPath(scope.results.get(source.step), source.path, `result of "${source.step}"`);
    for (const fn of arg.transforms) value = (fn as (v: unknown) => unknown)(value);
    return value;
  } catch (error) {
    throw new ArgumentResolutionError(step, name, error);
  }
}

/**
 * Resolves a node's arguments. Without an argument map the step receives the reactor input.
 * With a contract, unwired fields come from the reactor input of the same name.
 */
export function resolveArgs(
  args: Readonly<Record<string, Arg<unknown>>> | undefined,
  scope: ArgScope,
  step: string,
  contractFields?: readonly string[],
): Record<string, unknown> {
  if (args === undefined) return { ...scope.input };
  const out: Record<string, unknown> = {};
  for (const field of contractFields ?? [])
    if (!(field in args) && field in scope.input) out[field] = scope.input[field];
  for (const [name, arg] of Object.entries(args)) out[name] = resolveArg(arg, scope, step, name);
  return out;
}
