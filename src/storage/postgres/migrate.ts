/**
 * The migration runner and the start-up check. {@link migrate} applies the pending migrations in
 * one transaction under an advisory lock (so workers starting together apply each one once) and
 * records each version in `schema_migrations`; {@link checkSchema} refuses a database whose schema
 * is missing or at another version, with a {@link PostgresSchemaError}.
 *
 * @module
 */
import type { Pool, PoolClient } from 'pg';
import { PostgresPermissionError, PostgresSchemaError } from './errors.js';
import { MIGRATIONS, SCHEMA_VERSION, type Migration } from './migrations/index.js';
import type { PostgresNames } from './names.js';

/** What {@link migrate} did. */
export interface MigrateResult {
  /** The schema's version before. */
  readonly from: number;
  /** The schema's version after (this ts-reactor's, {@link SCHEMA_VERSION}). */
  readonly to: number;
  /** The versions this call applied (none when another runner, or an earlier run, had). */
  readonly applied: readonly number[];
}

/** SQLSTATEs of a missing table or schema. */
const UNDEFINED_TABLE = '42P01';
const INVALID_SCHEMA = '3F000';
/** SQLSTATE of a statement the role has no right to run. */
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Brings the schema `names.schema` to this ts-reactor's version: creates the schema and its
 * `schema_migrations` table when missing, then applies each pending migration in order, all in
 * one transaction holding a transaction-level advisory lock (a concurrent runner waits, then finds
 * nothing to do). Refuses a schema newer than this ts-reactor.
 * @throws PostgresSchemaError when the database's schema is newer than this ts-reactor's.
 */
export async function migrate(
  pool: Pool,
  names: PostgresNames,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<MigrateResult> {
  const target = migrations[migrations.length - 1]?.version ?? 0;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      const [classKey, objectKey] = names.migrationLock;
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [classKey, objectKey]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${names.schema}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${names.schemaMigrations} (
           version    integer PRIMARY KEY,
           name       text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      const from = await currentVersion(client, names);
      if (from > target) throw new PostgresSchemaError({ schema: names.schema, found: from, expected: target });
      const applied: number[] = [];
      for (const migration of migrations) {
        if (migration.version <= from) continue;
        await client.query(migration.sql(names));
        await client.query(`INSERT INTO ${names.schemaMigrations} (version, name) VALUES ($1, $2)`, [
          migration.version,
          migration.name,
        ]);
        applied.push(migration.version);
      }
      await client.query('COMMIT');
      return { from, to: Math.max(from, target), applied };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (sqlStateOf(error) === INSUFFICIENT_PRIVILEGE) {
        const forDatabase = error instanceof Error && /for database/.test(error.message);
        throw (
          (forDatabase
            ? await permissionError(pool, names, 'create in database')
            : await privilegeProblem(pool, names)) ?? error
        );
      }
      throw error;
    }
  } finally {
    client.release();
  }
}

/**
 * The schema's version: the highest version in `schema_migrations`, 0 when the schema or the
 * table does not exist.
 */
export async function schemaVersion(pool: Pool | PoolClient, names: PostgresNames): Promise<number> {
  try {
    return await currentVersion(pool, names);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === UNDEFINED_TABLE || code === INVALID_SCHEMA) return 0;
    throw error;
  }
}

/**
 * The start-up check: resolves when the schema is at `expected` (this ts-reactor's version) and
 * the role connected may use it (USAGE on the schema; SELECT, INSERT, UPDATE and DELETE on each
 * of its tables).
 * @throws PostgresSchemaError naming both versions and the command that migrates;
 *   PostgresPermissionError naming what the role lacks and the GRANT statements that fix it.
 */
export async function checkSchema(pool: Pool, names: PostgresNames, expected = SCHEMA_VERSION): Promise<void> {
  let found: number;
  try {
    found = await schemaVersion(pool, names);
  } catch (error) {
    if (sqlStateOf(error) === INSUFFICIENT_PRIVILEGE) throw (await privilegeProblem(pool, names)) ?? error;
    throw error;
  }
  if (found !== expected) throw new PostgresSchemaError({ schema: names.schema, found, expected });
  const problem = await privilegeProblem(pool, names);
  if (problem !== undefined) throw problem;
}

/** What the role connected lacks on the schema (USAGE, or table rights), as a PostgresPermissionError; none: `undefined`. */
async function privilegeProblem(pool: Pool, names: PostgresNames): Promise<PostgresPermissionError | undefined> {
  const { rows } = await pool.query<{ role: string; usage: boolean; tables: string[] }>(
    `SELECT current_user::text AS role,
            has_schema_privilege($1, 'USAGE') AS usage,
            coalesce((SELECT array_agg(c.relname::text ORDER BY c.relname)
                        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
                         AND NOT (has_table_privilege(c.oid, 'SELECT') AND has_table_privilege(c.oid, 'INSERT')
                                  AND has_table_privilege(c.oid, 'UPDATE') AND has_table_privilege(c.oid, 'DELETE'))),
                     '{}') AS tables
       FROM (SELECT 1) AS one WHERE EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`,
    [names.schema],
  );
  const row = rows[0];
  if (row === undefined) return undefined; // no such schema: the version check says so
  if (!row.usage)
    return new PostgresPermissionError({ schema: names.schema, role: row.role, missing: 'usage on schema' });
  if (row.tables.length > 0)
    return new PostgresPermissionError({
      schema: names.schema,
      role: row.role,
      missing: `select, insert, update, delete on ${row.tables.join(', ')}`,
    });
  return undefined;
}

/** A PostgresPermissionError of `missing` for the role connected. */
async function permissionError(
  pool: Pool,
  names: PostgresNames,
  missing: string,
): Promise<PostgresPermissionError | undefined> {
  const { rows } = await pool.query<{ role: string }>('SELECT current_user::text AS role');
  return rows[0] === undefined
    ? undefined
    : new PostgresPermissionError({ schema: names.schema, role: rows[0].role, missing });
}

/** The SQLSTATE of a server error. */
function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

async function currentVersion(db: Pool | PoolClient, names: PostgresNames): Promise<number> {
  const result = await db.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${names.schemaMigrations}`,
  );
  return result.rows[0]?.version ?? 0;
}
