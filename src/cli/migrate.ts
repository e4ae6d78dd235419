/**
 * `ts-reactor migrate --postgres <url> [--schema <name>]`: brings a PostgreSQL database's
 * ts-reactor schema to this version (the migration runner of `src/storage/postgres/migrate.ts`:
 * one transaction under an advisory lock, safe beside running workers of the same version), and
 * prints the versions before and after.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { readBackendUrl } from './backend-url.js';
import { redactUrl } from './redis-check.js';

/** The usage text of `ts-reactor migrate`. */
export const MIGRATE_USAGE = `Usage: ts-reactor migrate --postgres <url> [--schema <name>]

Creates or upgrades the PostgreSQL tables of ts-reactor to this version: the pending migrations
in one transaction, under an advisory lock (several runs at once apply each migration once).
Prints the schema's version before and after. A schema newer than this ts-reactor is refused.

Options:
  --postgres <url>         the database (postgres:// or postgresql://)
  --schema <name>          the schema of ts-reactor's tables (default ts_reactor)
  -h, --help               show this help`;

/** Where the command writes. */
export interface MigrateIO {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/** Runs `ts-reactor migrate <args>`; resolves to the exit code (0 done, 1 refused, 2 usage or connection). */
export async function runMigrateCommand(args: readonly string[], io: MigrateIO): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: { postgres: { type: 'string' }, schema: { type: 'string' } },
    }));
  } catch (error) {
    io.err(`ts-reactor migrate: ${(error as Error).message}\n\n${MIGRATE_USAGE}`);
    return 2;
  }
  if (values.postgres === undefined || values.postgres === '') {
    io.err(`ts-reactor migrate: missing --postgres <url>\n\n${MIGRATE_USAGE}`);
    return 2;
  }
  const url = readBackendUrl(values.postgres, 'postgres');
  if (!url.ok) {
    io.err(`ts-reactor migrate: --postgres: ${url.message}`);
    return 2;
  }
  const { loadPg, pingPostgres, unreachablePostgres } = await import('./worker-postgres.js');
  try {
    await loadPg(); // without `pg`: the MissingPeerError naming the package, before the tables' module loads it
  } catch (error) {
    io.err(`ts-reactor migrate: ${unreachablePostgres(url.url, error)}`);
    return 2;
  }
  const { migrate, PostgresNames, postgresConnection } = await import('../storage/postgres/index.js');
  let names;
  try {
    names = new PostgresNames(values.schema, 'ts-reactor migrate');
  } catch (error) {
    io.err(`ts-reactor migrate: --schema: ${(error as Error).message}`);
    return 2;
  }
  const shown = redactUrl(url.url);
  try {
    await pingPostgres(url.url, 5_000);
  } catch (error) {
    io.err(`ts-reactor migrate: ${unreachablePostgres(url.url, error)}`);
    return 2;
  }
  const connection = postgresConnection({ connectionString: url.url, max: 1 });
  try {
    const result = await migrate(connection.pool, names);
    const applied = result.applied.length === 0 ? 'nothing to apply' : `applied ${result.applied.join(', ')}`;
    io.out(
      `ts-reactor migrate: schema "${names.schema}" on ${shown}: version ${result.from} -> ${result.to} (${applied})`,
    );
    return 0;
  } catch (error) {
    // A schema newer than this ts-reactor (PostgresSchemaError), or the server's refusal.
    io.err(`ts-reactor migrate: ${(error as Error).message}`);
    return 1;
  } finally {
    await connection.end();
  }
}
