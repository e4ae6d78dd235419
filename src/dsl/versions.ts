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

/**
 * Checks the version options of reactor `name` against its own `steps` (its step names); returns
 * the frozen migrations. Refused (docs/decisions/116): an entry naming no earlier definition or
 * its own version, an earlier definition listed twice, a rename to no name or to a name that is
 * not a step of this definition (a typo would leave the step's record behind and run it again),
 * two steps renamed to one. What needs the earlier graph too is checked when both are registered
 * ({@link checkMigrationAgainst}).
 */
export function versionOptions(
  name: string,
  options: VersionOptions,
  steps: ReadonlySet<string>,
): readonly ReactorMigration[] {
  const fail = (message: string, step?: string): never => {
    throw new DefinitionError(`reactor "${name}": ${message}`, name, step);
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
  }
  const seen = new Set<string>();
  for (const m of migrations) {
    const from = migrationName(m);
    if (seen.has(from)) fail(`migrateFrom lists ${from} twice; give each earlier definition one entry`);
    seen.add(from);
    const renamed: unknown = m.renamed ?? {};
    if (typeof renamed !== 'object' || renamed === null || Array.isArray(renamed))
      fail(`migrateFrom ${from}: renamed must be an object { earlierName: newName }`);
    const targets = new Map<string, string>();
    for (const [before, after] of Object.entries(renamed as Record<string, unknown>)) {
      if (typeof after !== 'string' || after.length === 0) fail(`migrateFrom renames "${before}" to no name`);
      const to = after as string;
      if (!steps.has(to))
        fail(
          `migrateFrom ${from} renames "${before}" to "${to}", which is not a step of this definition (steps: ${[...steps].join(', ')})`,
          to,
        );
      const other = targets.get(to);
      if (other !== undefined)
        fail(
          `migrateFrom ${from} renames both "${other}" and "${before}" to "${to}"; a step takes one earlier record`,
          to,
        );
      targets.set(to, before);
    }
  }
  return Object.freeze(migrations.map((m) => Object.freeze({ ...m })));
}

/** How a migration names its earlier definition, for messages: `version "1"` or `fingerprint 0a1b…`. */
export function migrationName(m: ReactorMigration): string {
  return m.version !== undefined ? `version "${m.version}"` : `fingerprint ${m.fingerprint}`;
}

/** The step names of a definition, for {@link checkMigrationAgainst}. */
export interface StepGraph {
  readonly name: string;
  readonly version: string | undefined;
  readonly fingerprint: string;
  readonly byName: ReadonlyMap<string, unknown>;
  readonly migrateFrom: readonly ReactorMigration[];
}

/**
 * Checks the migrations of `later` that name `earlier` against both graphs (docs/decisions/116):
 * every renamed step must be a step of `earlier` (else its record would stay behind and the step
 * run again), and no step may be renamed onto a step `earlier` has and keeps (its record would be
 * overwritten). Throws `DefinitionError` naming the rename.
 */
export function checkMigrationAgainst(later: StepGraph, earlier: StepGraph): void {
  if (earlier === later || earlier.fingerprint === later.fingerprint) return;
  const matching = later.migrateFrom.filter((m) =>
    m.fingerprint !== undefined ? m.fingerprint === earlier.fingerprint : m.version === earlier.version,
  );
  if (matching.length > 1)
    throw new DefinitionError(
      `reactor "${later.name}": migrateFrom names one earlier definition twice (${matching.map(migrationName).join(' and ')}); give it one entry`,
      later.name,
    );
  for (const m of matching) {
    const renamed = m.renamed ?? {};
    const fail = (message: string, step: string): never => {
      throw new DefinitionError(
        `reactor "${later.name}"${later.version === undefined ? '' : ` version "${later.version}"`}: migrateFrom ${migrationName(m)} ${message}`,
        later.name,
        step,
      );
    };
    const earlierSteps = [...earlier.byName.keys()];
    for (const [before, after] of Object.entries(renamed)) {
      if (!earlier.byName.has(before))
        fail(`renames "${before}", which is not a step of that definition (steps: ${earlierSteps.join(', ')})`, before);
      if (after !== before && earlier.byName.has(after) && !(after in renamed))
        fail(
          `renames "${before}" onto "${after}", a step that definition has too (its record would be overwritten); rename "${after}" as well or choose another name`,
          after,
        );
    }
  }
}
