/**
 * The connection a PostgreSQL backend uses: a `pg` pool it creates from a connection string or a
 * pool config (and ends on close), or the application's own `Pool` (never ended by ts-reactor).
 * Every statement runs on a connection of the pool taken for that statement (or for one
 * transaction of ts-reactor's own): it never joins a transaction of the application.
 *
 * @module
 */
import pg from 'pg';
import { RuntimeOptionError } from '../../errors.js';
import type { Pool, PoolConfig } from 'pg';

/** Where to connect: a connection string (`postgres://…`), a `pg` pool config, or your own `pg.Pool`. */
export type PostgresConnectionOption = string | PoolConfig | Pool;

/** A pool and whether ts-reactor created it (and so ends it on close). */
export interface PostgresConnection {
  readonly pool: Pool;
  /** True when ts-reactor created the pool: `end()` ends it; false for an application's pool. */
  readonly owned: boolean;
  /** Ends the pool when ts-reactor created it; leaves an application's pool open. */
  end(): Promise<void>;
}

/**
 * Opens (or adopts) the pool `option` names. No connection is made until the first statement.
 * @throws RuntimeOptionError for a `pg.Client` (ts-reactor would share its transactions).
 */
export function postgresConnection(option: PostgresConnectionOption): PostgresConnection {
  if (isPool(option)) return { pool: option, owned: false, end: async () => undefined };
  if (isClient(option))
    throw new RuntimeOptionError(
      { factory: 'PostgresStore', option: 'connection', value: 'a pg.Client' },
      'must be a connection string, a pool config or a pg.Pool (a single client would make ts-reactor share its transactions)',
    );
  const config: PoolConfig = typeof option === 'string' ? { connectionString: option } : option;
  const pool = new pg.Pool({ application_name: 'ts-reactor', ...config });
  // An idle client's error (the server went away) must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  let ended: Promise<void> | undefined;
  return { pool, owned: true, end: () => (ended ??= pool.end()) };
}

/** A `pg.Pool`, also one from another copy of `pg` (another version in node_modules): `connect`, `query` and a pool's counts. */
function isPool(value: unknown): value is Pool {
  const v = value as Partial<Pool> | null;
  return isClient(value) && typeof v?.idleCount === 'number';
}

/** Something with `connect` and `query`: a `pg.Client` unless it is also a pool. */
function isClient(value: unknown): boolean {
  const v = value as { connect?: unknown; query?: unknown } | null;
  return typeof v === 'object' && v !== null && typeof v.connect === 'function' && typeof v.query === 'function';
}
