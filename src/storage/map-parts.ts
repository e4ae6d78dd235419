/**
 * How both stores keep the element states of large maps (`ExecutionRecord.mapStates`) apart from
 * the record: the record's JSON names them (`mapParts`) and is measured without them; each map's
 * states are one more stored value under their own size budget, written again only when their
 * `rev` moved, and read back with the record (docs/decisions/076).
 *
 * @module
 */
import type { ExecutionRecord, MapElementStates } from '../ports/store.js';
import { RecordTooLargeError } from '../errors.js';
import { checkJsonBytes, limitedRecordJson } from './record-json.js';

/** Default size budget of one map's element states: 64 MiB. */
export const DEFAULT_MAX_MAP_STATE_BYTES = 64 * 1024 * 1024;

/** One map's element states to write: its path, its revision and its JSON. */
export interface MapPartWrite {
  readonly path: string;
  readonly rev: number;
  /** Undefined when the stored revision is this one already (only its expiry moves). */
  readonly json: string | undefined;
}

/** A record split for storage: the record's JSON (without the states) and the map parts. */
export interface SplitRecord {
  readonly json: string;
  readonly parts: readonly MapPartWrite[];
}

/**
 * Splits `record` for storage, measuring each piece before anything is written: the record's JSON
 * against `maxRecordBytes`, each map's states against `maxMapStateBytes`. `storedRev` tells the
 * revision already stored for a map (this process wrote it), so unchanged states are not sent again.
 * @throws RecordTooLargeError naming the record, or the map whose states are too large.
 */
export function splitRecord(
  record: ExecutionRecord,
  limits: { readonly maxRecordBytes: number; readonly maxMapStateBytes: number },
  storedRev: (path: string) => number | undefined,
): SplitRecord {
  const { mapStates, ...rest } = record;
  const paths = new Set([...(record.mapParts ?? []), ...Object.keys(mapStates ?? {})]);
  const main: ExecutionRecord = paths.size === 0 ? rest : { ...rest, mapParts: [...paths] };
  const json = limitedRecordJson(main, limits.maxRecordBytes);
  const parts = Object.entries(mapStates ?? {}).map(([path, states]): MapPartWrite => {
    if (storedRev(path) === states.rev) return { path, rev: states.rev, json: undefined };
    const part = JSON.stringify(states);
    checkJsonBytes(
      part,
      limits.maxMapStateBytes,
      (bytes) => new RecordTooLargeError(record.id, bytes, limits.maxMapStateBytes, path),
    );
    return { path, rev: states.rev, json: part };
  });
  return { json, parts };
}

/** `record` with the map states read back (`read` returns each map's stored JSON, or undefined when gone). */
export function joinRecord(record: ExecutionRecord, read: (path: string) => string | undefined): ExecutionRecord {
  if (record.mapParts === undefined || record.mapParts.length === 0) return record;
  const mapStates: Record<string, MapElementStates> = {};
  for (const path of record.mapParts) {
    const json = read(path);
    if (json !== undefined) mapStates[path] = JSON.parse(json) as MapElementStates;
  }
  return { ...record, mapStates };
}
