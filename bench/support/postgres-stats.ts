/**
 * What the Postgres benchmarks read off their throwaway server: its durability settings, and
 * counters that tell what a piece of work cost the database.
 *
 * - write transactions: the next transaction id (`pg_snapshot_xmax(pg_current_snapshot())`, which
 *   assigns none itself); only a transaction that writes takes one, and only those flush the WAL
 *   at commit. Exact at once, for the whole server.
 * - WAL bytes: `pg_current_wal_lsn()`, exact at once.
 * - statements: `pg_stat_statements` calls, per database, exact at once (the server must preload
 *   the library: {@link STATEMENT_SETTINGS}); `BEGIN`/`COMMIT` count as statements.
 * - commits (`pg_stat_database.xact_commit`, read-only transactions included): a backend reports
 *   its counts at most once a second while busy, ten seconds after it went idle, and at exit, so
 *   this one is read only once every connection to the database has closed ({@link committedWhenClosed}).
 *
 * @module
 */
import type pg from 'pg';

/** Server settings that load `pg_stat_statements` (for `startPostgresServer`'s `settings`). */
export const STATEMENT_SETTINGS: Readonly<Record<string, string>> = {
  shared_preload_libraries: 'pg_stat_statements',
  'pg_stat_statements.track': 'top',
  'pg_stat_statements.max': '5000',
};

/** The settings that decide what a commit waits for. */
export interface DurabilitySettings {
  readonly fsync: string;
  readonly synchronous_commit: string;
  readonly wal_sync_method: string;
  readonly full_page_writes: string;
}

/** Reads the server's durability settings. */
export async function durabilitySettings(client: pg.ClientBase): Promise<DurabilitySettings> {
  const read = async (name: string): Promise<string> =>
    ((await client.query(`SHOW ${name}`)).rows[0] as Record<string, string>)[name]!;
  return {
    fsync: await read('fsync'),
    synchronous_commit: await read('synchronous_commit'),
    wal_sync_method: await read('wal_sync_method'),
    full_page_writes: await read('full_page_writes'),
  };
}

/** Counters at one moment. */
export interface ServerCounters {
  /** The next transaction id. */
  readonly nextXid: bigint;
  /** The WAL insert position, bytes. */
  readonly walLsn: bigint;
  /** `pg_stat_statements` calls per database name (the reading's own statements excluded by the caller's arithmetic). */
  readonly statements: ReadonlyMap<string, number>;
}

/** Reads the counters (three statements on `client`; none of them takes a transaction id). */
export async function readCounters(client: pg.ClientBase): Promise<ServerCounters> {
  const head = await client.query<{ xid: string; lsn: string }>(
    "SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid, (pg_current_wal_lsn() - '0/0'::pg_lsn)::text AS lsn",
  );
  const rows = await client.query<{ datname: string; calls: string }>(
    'SELECT d.datname, sum(s.calls)::text AS calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid GROUP BY d.datname',
  );
  return {
    nextXid: BigInt(head.rows[0]!.xid),
    walLsn: BigInt(head.rows[0]!.lsn.split('.')[0]!),
    statements: new Map(rows.rows.map((r) => [r.datname, Number(r.calls)])),
  };
}

/** after − before: write transactions, WAL bytes, and the statements of database `database`. */
export function counterDelta(
  before: ServerCounters,
  after: ServerCounters,
  database: string,
): { writeTransactions: number; walBytes: number; statements: number } {
  return {
    writeTransactions: Number(after.nextXid - before.nextXid),
    walBytes: Number(after.walLsn - before.walLsn),
    statements: (after.statements.get(database) ?? 0) - (before.statements.get(database) ?? 0),
  };
}

/** The statements of database `database` most called since `pg_stat_statements_reset()`, as `{ query, calls }`. */
export async function topStatements(
  client: pg.ClientBase,
  database: string,
  limit = 12,
): Promise<{ query: string; calls: number }[]> {
  const result = await client.query<{ query: string; calls: string }>(
    `SELECT s.query, s.calls::text AS calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = $1 ORDER BY s.calls DESC LIMIT $2`,
    [database, limit],
  );
  return result.rows.map((r) => ({ query: r.query.replace(/\s+/g, ' ').slice(0, 160), calls: Number(r.calls) }));
}

/**
 * `xact_commit` of database `database`, read once no other connection to it is left (each
 * backend reports its last counts when it exits), waiting a bounded while for them to go.
 */
export async function committedWhenClosed(client: pg.ClientBase, database: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const open = await client.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    if (open.rows[0]!.n === '0') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, 100)); // an exiting backend reports as it goes
  const row = await client.query<{ c: string }>(
    'SELECT xact_commit::text AS c FROM pg_stat_database WHERE datname = $1',
    [database],
  );
  return Number(row.rows[0]?.c ?? 0);
}

/** Creates database `name` on the server at `url` (whose database is another one) and returns its URL. */
export async function createDatabase(admin: pg.ClientBase, url: string, name: string): Promise<string> {
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
