/**
 * TEMPORARY until the migration runner lands: applies `0002_coordination` to a fresh schema.
 */
import { readFileSync } from 'node:fs';
import type pg from 'pg';

/** Creates `schema` and applies the coordination migration to it. */
export async function migrateCoordination(pool: pg.Pool, schema: string): Promise<void> {
  const sql = readFileSync(
    new URL('../../src/storage/postgres/coordinator/0002_coordination.sql', import.meta.url),
    'utf8',
  )
    .replaceAll('__SCHEMA__', `"${schema}"`)
    .replaceAll('__CHANNEL__', `'${schema}_coord'`);
  await pool.query(`CREATE SCHEMA "${schema}"`);
  await pool.query(sql);
}
