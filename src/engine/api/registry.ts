/**
 * The engine's reactor registry: the reactors its workers can process jobs for, by name. Every
 * write goes through `registerTree`, so a reactor found here has its `asyncReactor` children
 * registered too (decision 046) — whether it came from the options, `register`, `run`, `start`
 * or a dispatch.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { ReactorError } from '../../errors.js';
import { registerTree } from '../model/async/registry.js';

/** The reactors one engine knows, each with the children it dispatches. */
export class ReactorRegistry {
  readonly #byName = new Map<string, AnyReactorDefinition>();

  /** A registry holding `reactors` (the engine's `reactors` option) and their children. */
  constructor(reactors: readonly AnyReactorDefinition[] = []) {
    for (const reactor of reactors) this.register(reactor);
  }

  /** The registered reactors by name, for the parts that only read them (operations, resume, the sweep). */
  get byName(): ReadonlyMap<string, AnyReactorDefinition> {
    return this.#byName;
  }

  /** Adds `reactors` and, recursively, the reactors they dispatch (a reactor already there is left as it is). */
  register(...reactors: readonly AnyReactorDefinition[]): void {
    for (const reactor of reactors) registerTree(this.#byName, reactor);
  }

  /** The reactor a job names; throws `reactor_unknown` when this engine has none of that name. */
  forJob(name: string): AnyReactorDefinition {
    const reactor = this.#byName.get(name);
    if (!reactor)
      throw new ReactorError(
        'reactor_unknown',
        `no reactor named "${name}" is registered with this worker; pass it in createWorker({ reactors })`,
        { details: { reactor: name } },
      );
    return reactor;
  }
}
