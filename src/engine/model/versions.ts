/**
 * Which registered definition continues a persisted execution (docs/decisions/082): the one of the
 * fingerprint its record carries, else one that declares a migration from it (the record then
 * rewritten for it), else none — the execution waits for a process that has it. A record without
 * a fingerprint (written before versioned definitions) runs on the current definition of its name.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import type { ReactorMigration } from '../../dsl/versions.js';
import { ErrorCode, ReactorError } from '../../errors.js';
import type { ExecutionRecord, StepRecord } from '../../ports/store.js';

/** How a persisted execution meets the definitions of one engine. */
export type VersionMatch =
  | {
      /** `same`: its own definition; `unversioned`: a record without a fingerprint; `migrated`: a definition migrating from it. */
      readonly kind: 'same' | 'unversioned' | 'migrated';
      readonly reactor: AnyReactorDefinition;
      /** The record to continue from (migrated: steps renamed and the new definition stamped; no version wait). */
      readonly record: ExecutionRecord;
    }
  | {
      readonly kind: 'unavailable';
      readonly fingerprint: string;
      readonly version: string | undefined;
    };

/**
 * Matches `record` against `current` (the registered definition of its name) and every
 * registered definition by fingerprint (`versions`; without it, `current` only).
 */
export function matchVersion(
  record: ExecutionRecord,
  current: AnyReactorDefinition,
  versions: ReadonlyMap<string, AnyReactorDefinition> | undefined,
): VersionMatch {
  const fingerprint = record.fingerprint;
  if (fingerprint === undefined) return { kind: 'unversioned', reactor: current, record: withoutWait(record) };
  const own = current.fingerprint === fingerprint ? current : versions?.get(fingerprint);
  if (own !== undefined && own.name === record.reactor)
    return { kind: 'same', reactor: own, record: withoutWait(record) };
  for (const candidate of candidates(record.reactor, current, versions)) {
    const migration = candidate.migrateFrom.find((m) => migrates(m, record));
    if (migration) return { kind: 'migrated', reactor: candidate, record: migrated(record, candidate, migration) };
  }
  return { kind: 'unavailable', fingerprint, version: record.version };
}

/** The definitions of `name`: the current one first, then the others, newest registered first. */
function candidates(
  name: string,
  current: AnyReactorDefinition,
  versions: ReadonlyMap<string, AnyReactorDefinition> | undefined,
): AnyReactorDefinition[] {
  const others = [...(versions?.values() ?? [])].filter((d) => d.name === name && d !== current).reverse();
  return [current, ...others];
}

/** Whether `migration` names the definition `record` ran with. */
function migrates(migration: ReactorMigration, record: ExecutionRecord): boolean {
  if (migration.fingerprint !== undefined) return migration.fingerprint === record.fingerprint;
  return record.version !== undefined && migration.version === record.version;
}

/** `record` continued by `reactor`: its step records (and large maps' states) moved to their new names, stamped with the new definition. */
function migrated(
  record: ExecutionRecord,
  reactor: AnyReactorDefinition,
  migration: ReactorMigration,
): ExecutionRecord {
  const renamed = migration.renamed ?? {};
  const rename = <T>(entries: Readonly<Record<string, T>>): Record<string, T> =>
    Object.fromEntries(Object.entries(entries).map(([name, value]) => [renamed[name] ?? name, value]));
  const { fingerprint: _f, version: _v, ...rest } = withoutWait(record);
  return {
    ...rest,
    ...(reactor.version === undefined ? {} : { version: reactor.version }),
    fingerprint: reactor.fingerprint,
    steps: rename<StepRecord>(record.steps),
    ...(record.mapStates === undefined ? {} : { mapStates: rename(record.mapStates) }),
  };
}

/** `record` without a version wait (a process that has its definition continues it). */
function withoutWait(record: ExecutionRecord): ExecutionRecord {
  if (record.background?.waitingForVersion === undefined) return record;
  const { waitingForVersion: _w, ...background } = record.background;
  return { ...record, background };
}

/**
 * The definition and record an operation on a persisted execution continues with (undo, cancel,
 * an interrupt's resume): {@link matchVersion}, or `version_unavailable` when this engine has
 * neither the execution's definition nor one migrating from it.
 */
export function versionFor(
  record: ExecutionRecord,
  current: AnyReactorDefinition,
  versions: ReadonlyMap<string, AnyReactorDefinition> | undefined,
  operation: string,
): { readonly reactor: AnyReactorDefinition; readonly record: ExecutionRecord } {
  const match = matchVersion(record, current, versions);
  if (match.kind !== 'unavailable') return match;
  const named =
    match.version === undefined
      ? `fingerprint ${match.fingerprint}`
      : `version "${match.version}" (fingerprint ${match.fingerprint})`;
  throw new ReactorError(
    ErrorCode.VersionUnavailable,
    `cannot ${operation} execution ${record.id}: it runs with ${named} of reactor "${record.reactor}", which this engine has not registered; register that definition beside the current one (engine.register)`,
    {
      details: {
        executionId: record.id,
        reactor: record.reactor,
        fingerprint: match.fingerprint,
        version: match.version,
      },
    },
  );
}
