/**
 * The engine's reactor registry: the reactors its workers can process jobs for, by name. Every
 * write goes through `registerTree`, so a reactor found here has its `asyncReactor` children
 * registered too (decision 046) — whether it came from the options, `register`, `run`, `start`
 * or a dispatch.
 *
 * Several definitions of one name live side by side, by fingerprint (decision 082): registering a
 * definition of a name already there with another fingerprint adds it and makes it the name's
 * current one (the last registered); one of the same fingerprint replaces that version (its step
 * bodies may have changed, its shape has not). A job of a record that carries a fingerprint runs
 * on that version (`jobs/version-gate.ts`); the current one serves everything found by name.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { checkMigrationAgainst } from '../../dsl/versions.js';
import { ReactorError } from '../../errors.js';
import { registerTree } from '../model/async/registry.js';
import { TriggerIndex, type Trigger } from './trigger-index.js';

/** A name → current definition map that also keeps every definition written to it, by fingerprint. */
class VersionedNames extends Map<string, AnyReactorDefinition> {
  readonly versions = new Map<string, AnyReactorDefinition>();
  /** The current definitions' starts on events, by event name. */
  readonly triggers = new TriggerIndex();

  /** Makes `reactor` the current definition of `name` and keeps it as its fingerprint's version. */
  override set(name: string, reactor: AnyReactorDefinition): this {
    this.versions.set(reactor.fingerprint, reactor);
    this.triggers?.replace(super.get(name), reactor); // `?.`: Map's constructor may call set before fields exist
    return super.set(name, reactor);
  }
}

/** The reactors one engine knows, each with the children it dispatches. */
export class ReactorRegistry {
  readonly #byName = new VersionedNames();

  /** A registry holding `reactors` (the engine's `reactors` option) and their children. */
  constructor(reactors: readonly AnyReactorDefinition[] = []) {
    for (const reactor of reactors) this.register(reactor);
  }

  /** The registered reactors by name, for the parts that only read them (operations, resume, the sweep). */
  get byName(): ReadonlyMap<string, AnyReactorDefinition> {
    return this.#byName;
  }

  /** The registered reactors that start on event `name` (`.on`), each with its trigger. */
  triggersOf(name: string): readonly Trigger[] {
    return this.#byName.triggers.of(name);
  }

  /** Every registered definition by fingerprint (every version of every name), for the version gate. */
  get byFingerprint(): ReadonlyMap<string, AnyReactorDefinition> {
    return this.#byName.versions;
  }

  /**
   * Adds `reactors` and, recursively, the reactors they dispatch (a reactor already there is left
   * as it is). A definition whose migrations do not fit a registered version of its name, or a
   * version whose records a registered definition's migration would misplace, is refused with
   * `DefinitionError` before anything is added (docs/decisions/116).
   */
  register(...reactors: readonly AnyReactorDefinition[]): void {
    for (const reactor of reactors) {
      if (this.#byName.get(reactor.name) !== reactor) this.#checkMigrations(reactor);
      registerTree(this.#byName, reactor);
    }
  }

  /** Checks `reactor`'s migrations against the registered versions of its name, and theirs against it. */
  #checkMigrations(reactor: AnyReactorDefinition): void {
    for (const other of this.#byName.versions.values()) {
      if (other.name !== reactor.name || other.fingerprint === reactor.fingerprint) continue;
      checkMigrationAgainst(reactor, other);
      checkMigrationAgainst(other, reactor);
    }
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
