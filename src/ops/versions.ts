/**
 * Which registered definition an execution's views are drawn from (its step graph, its
 * interrupts' limits, its input's redaction): the one its record names by fingerprint, even when
 * a later version of the reactor is registered beside it; else one that migrates from it (the
 * worker that takes the execution continues it on that one); else none — the graph then comes
 * from the record. A record from before versioned definitions uses the name's current one.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../dsl/definition.js';
import { matchVersion, type VersionMatch } from '../engine/model/versions.js';
import type { ExecutionRecord } from '../ports/store.js';
import type { GraphSource } from './types.js';

/** The definitions the read model was given: the current one of each name (the last given), and every one by fingerprint. */
export interface Definitions {
  readonly byName: ReadonlyMap<string, AnyReactorDefinition>;
  readonly byFingerprint: ReadonlyMap<string, AnyReactorDefinition>;
}

/** Indexes `reactors`; of two definitions of one name, the later is the current one. */
export function definitionsOf(reactors: readonly AnyReactorDefinition[]): Definitions {
  return {
    byName: new Map(reactors.map((r) => [r.name, r])),
    byFingerprint: new Map(reactors.map((r) => [r.fingerprint, r])),
  };
}

/** The definition an execution is shown with, the record as that definition reads it, and where the graph comes from. */
export interface ShownDefinition {
  /** Undefined when none of the given definitions fits the record. */
  readonly definition: AnyReactorDefinition | undefined;
  /** The record, with its steps under the migrating definition's names when `source.kind` is `migrating`. */
  readonly record: ExecutionRecord;
  /** Absent when the reactor's name is not registered at all. */
  readonly source?: GraphSource;
}

const named = (d: AnyReactorDefinition): { readonly fingerprint: string; readonly version?: string } => ({
  fingerprint: d.fingerprint,
  ...(d.version === undefined ? {} : { version: d.version }),
});

/** The definition `record` is shown with (see the module's rules). */
export function shownDefinition(definitions: Definitions, record: ExecutionRecord): ShownDefinition {
  const current = definitions.byName.get(record.reactor);
  if (current === undefined) return { definition: undefined, record };
  const match: VersionMatch = matchVersion(record, current, definitions.byFingerprint);
  switch (match.kind) {
    case 'same':
      return { definition: match.reactor, record, source: { kind: 'own', ...named(match.reactor) } };
    case 'unversioned':
      return { definition: match.reactor, record, source: { kind: 'current', ...named(match.reactor) } };
    case 'migrated':
      return {
        definition: match.reactor,
        record: match.record,
        source: { kind: 'migrating', ...named(match.reactor) },
      };
    case 'unavailable': {
      const version = match.version === undefined ? {} : { version: match.version };
      return {
        definition: undefined,
        record,
        source: { kind: 'unregistered', fingerprint: match.fingerprint, ...version },
      };
    }
  }
}
