/**
 * The migration runner and the start-up check. {@link migrate} applies the pending migrations in
 * one transaction under an advisory lock (so workers starting together apply each one once) and
 * records each version in `schema_migrations`; {@link checkSchema} refuses a database whose schema
 * is missing or at another version, with a {@link PostgresSchemaError}.
 *
 * @module
 */
import type { Pool, PoolClient } from 'pg';
import { PostgresSchemaError } from './errors.js';
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
 * The start-up check: resolves when the schema is at `expected` (this ts-reactor's version).
 * @throws PostgresSchemaError naming both versions and the command that migrates.
 */
export async function checkSchema(pool: Pool, names: PostgresNames, expected = SCHEMA_VERSION): Promise<void> {
  const found = await schemaVersion(pool, names);
  if (found !== expected) throw new PostgresSchemaError({ schema: names.schema, found, expected });
}

async function currentVersion(db: Pool | PoolClient, names: PostgresNames): Promise<number> {
  const result = await db.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${names.schemaMigrations}`,
  );
  return result.rows[0]?.version ?? 0;
}
