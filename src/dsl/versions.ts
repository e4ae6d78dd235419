/**
 * A reactor's author-set `version` and the migrations it declares from earlier versions
 * (docs/decisions/082): what lets a worker continue an execution persisted by another definition
 * of the same reactor.
 *
 * @module
 */
import { DefinitionError } from '../errors.js';

/**
 * A migration from an earlier definition of the same reactor: its executions are continued by
 * this one. Name the earlier definition by `version` (its author-set version) or `fingerprint`
 * (its `definition.fingerprint`); `renamed` maps its step names to this definition's (their
 * records move to the new names: a completed step stays completed). A step record of a name this
 * definition does not have is kept as it is and never run again.
 *
 * @example
 * ```ts
 * reactor('checkout', { version: '2', migrateFrom: [{ version: '1', renamed: { reserve: 'reserveStock' } }] })
 * ```
 */
export type ReactorMigration = (
  | { readonly version: string; readonly fingerprint?: never }
  | { readonly fingerprint: string; readonly version?: never }
) & {
  /** Earlier step names to this definition's. */
  readonly renamed?: Readonly<Record<string, string>>;
};

/** The version options of `reactor(name, options)`. */
export interface VersionOptions {
  /** The author's name for this definition (a date, a number); recorded with every execution it starts. */
  readonly version?: string;
  /** Earlier definitions whose executions this one continues (see {@link ReactorMigration}). */
  readonly migrateFrom?: readonly ReactorMigration[];
}

/** Checks the version options of reactor `name`; returns the frozen migrations. */
export function versionOptions(name: string, options: VersionOptions): readonly ReactorMigration[] {
  const fail = (message: string): never => {
    throw new DefinitionError(`reactor "${name}": ${message}`, name);
  };
  if (options.version !== undefined && (typeof options.version !== 'string' || options.version.length === 0))
    fail('version must be a non-empty string');
  const migrations = options.migrateFrom ?? [];
  if (!Array.isArray(migrations)) fail('migrateFrom must be an array of { version } or { fingerprint }');
  for (const m of migrations) {
    const from = [m?.version, m?.fingerprint].filter((v) => v !== undefined);
    if (from.length !== 1 || typeof from[0] !== 'string' || from[0].length === 0)
      fail('each migrateFrom entry names exactly one non-empty version or fingerprint');
    if (m.version !== undefined && m.version === options.version)
      fail(`migrateFrom names its own version "${m.version}"`);
    for (const [before, after] of Object.entries(m.renamed ?? {}))
      if (typeof after !== 'string' || after.length === 0) fail(`migrateFrom renames "${before}" to no name`);
  }
  return Object.freeze(migrations.map((m) => Object.freeze({ ...m })));
}
