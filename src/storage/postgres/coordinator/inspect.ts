/**
 * The Postgres coordinator's side of the inspector port: the live keys of each primitive, read
 * with plain `SELECT`s that lock nothing, filtered by the glob (as `LIKE`) and sorted like the
 * other backends' listings.
 *
 * @module
 */
import type { Pool } from 'pg';
import type { PrimitiveKind } from '../../../ports/coordinator.js';
import { sortInspected, type InspectedKey, type InspectOptions } from '../../../ports/inspector.js';
import { toCoordinationError, toNumber } from './calls.js';
import type { PostgresNames } from '../names.js';

/** Lists the live keys of `kind` matching `options.pattern`, at most `options.limit`. */
export async function inspectPostgres(
  pool: Pool,
  names: PostgresNames,
  kind: PrimitiveKind,
  options: InspectOptions,
): Promise<InspectedKey[]> {
  const like = globToLike(options.pattern ?? '*');
  const limit = options.limit ?? 1000;
  const text = listing(names, kind);
  let rows: { key: string; period_ms?: string; bucket?: string }[];
  try {
    rows = (await pool.query(text, [like, limit])).rows as typeof rows;
  } catch (error) {
    throw toCoordinationError('inspect-keys', `inspect ${kind}`, error);
  }
  options.onProgress?.(rows.length);
  return sortInspected(
    rows.map((row) => ({
      kind,
      key: row.key,
      ...(row.period_ms === undefined ? {} : { periodMs: toNumber(row.period_ms) }),
      ...(row.bucket === undefined ? {} : { bucket: row.bucket }),
    })),
  );
}

/** The listing query of `kind`: `$1` the LIKE pattern, `$2` the limit. */
function listing(names: PostgresNames, kind: PrimitiveKind): string {
  const order = 'ORDER BY key COLLATE "C" LIMIT $2';
  switch (kind) {
    case 'lock':
      return `SELECT key FROM ${names.coordLocks}
        WHERE key LIKE $1 AND owner IS NOT NULL AND expires_at > clock_timestamp() ${order}`;
    case 'semaphore':
      return `SELECT key FROM ${names.coordSemaphoreLeases}
        WHERE key LIKE $1 AND expires_at > clock_timestamp() GROUP BY key ${order}`;
    case 'rate':
      return `SELECT r.key, r.period_ms FROM ${names.coordRates} AS r
        WHERE r.key LIKE $1 AND EXISTS (SELECT 1 FROM ${names.coordRateStarts} AS s
          WHERE s.key = r.key AND s.at > clock_timestamp() - r.period_ms * interval '1 ms') ${order}`;
    case 'period':
      return `SELECT key, bucket FROM ${names.coordPeriods}
        WHERE key LIKE $1 AND expires_at > clock_timestamp() ORDER BY key COLLATE "C", bucket COLLATE "C" LIMIT $2`;
    case 'ordered':
      return `SELECT key FROM ${names.coordOrdered} WHERE key LIKE $1 ${order}`;
  }
}

/** An inspector glob (`*`, `?`, the rest literal) as a `LIKE` pattern (escape `\`). */
export function globToLike(pattern: string): string {
  let like = '';
  for (const char of pattern)
    like +=
      char === '*' ? '%' : char === '?' ? '_' : char === '%' || char === '_' || char === '\\' ? `\\${char}` : char;
  return like;
}
