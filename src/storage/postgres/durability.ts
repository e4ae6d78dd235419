/**
 * The PostgreSQL durability check: reads the two settings that decide whether a commit
 * PostgreSQL acknowledged survives a crash (`SHOW fsync`, `SHOW synchronous_commit`) and says
 * what they mean for executions, jobs and coordination state. A server whose settings cannot be
 * read is reported as unchecked, never as an error. With `required`, a server that is not durable
 * is refused with `DurabilityError` in PostgreSQL's words (docs/decisions/123).
 *
 * @example
 * ```ts
 * const report = await checkPostgresDurability(pool);
 * if (!report.durable) for (const warning of report.warnings) console.warn(warning);
 * ```
 *
 * @module
 */
import type { Pool } from 'pg';
import type { Logger } from '../../dsl/context.js';
import { DurabilityError } from '../../errors.js';

/**
 * How the server keeps what it acknowledged:
 * - `durable`: every commit is flushed to disk before it is acknowledged (`fsync on`,
 *   `synchronous_commit` `on`, `local`, `remote_write` or `remote_apply`);
 * - `async_commit`: `synchronous_commit off`: a crash loses the last commits (up to about three
 *   times `wal_writer_delay`, 600 ms by default); a clean restart loses nothing;
 * - `no_fsync`: `fsync off`: a crash of the machine or of the operating system can lose or corrupt
 *   anything; a clean restart loses nothing;
 * - `unknown`: the settings could not be read.
 */
export type PostgresPersistence = 'durable' | 'async_commit' | 'no_fsync' | 'unknown';

/** The settings as the server reported them (`undefined`: not readable). */
export interface PostgresDurabilitySettings {
  readonly fsync: string | undefined;
  readonly synchronousCommit: string | undefined;
}

/** What {@link checkPostgresDurability} found. */
export interface PostgresDurabilityReport {
  /** False when the settings could not be read: see `reason`. */
  readonly checked: boolean;
  /** Why the settings could not be read (the server's error); absent when `checked`. */
  readonly reason?: string;
  readonly settings: PostgresDurabilitySettings;
  readonly persistence: PostgresPersistence;
  /** Always false: PostgreSQL never evicts rows. */
  readonly evicts: false;
  /** What survives a crash of this server, in one sentence. */
  readonly survives: string;
  /** True when every acknowledged commit survives a crash: what `requireDurability` demands. */
  readonly durable: boolean;
  /** One line per problem found (each names the setting to change); empty when `durable`. */
  readonly warnings: readonly string[];
}

const SURVIVES: Readonly<Record<PostgresPersistence, string>> = {
  durable: 'every commit PostgreSQL acknowledged survives a restart or a crash (fsync on, synchronous commits)',
  async_commit:
    'a clean restart keeps everything; a crash loses the commits of the last moments (synchronous_commit off)',
  no_fsync: 'a clean restart keeps everything; a crash of the machine can lose or corrupt any data (fsync off)',
  unknown: 'unknown: the settings could not be read',
};

/** The `synchronous_commit` values that flush a commit to the local disk before acknowledging it. */
const SYNCHRONOUS = new Set(['on', 'local', 'remote_write', 'remote_apply']);

/**
 * Reads `fsync` and `synchronous_commit` of the server behind `pool` (one `SHOW` each, on one
 * connection: the session's values, so a `synchronous_commit` set for ts-reactor's role or
 * database counts) and judges them. Never rejects.
 */
export async function checkPostgresDurability(pool: Pool): Promise<PostgresDurabilityReport> {
  let settings: PostgresDurabilitySettings;
  try {
    const fsync = await pool.query<{ fsync: string }>('SHOW fsync');
    const commit = await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    settings = { fsync: fsync.rows[0]?.fsync, synchronousCommit: commit.rows[0]?.synchronous_commit };
  } catch (error) {
    return unread(error instanceof Error ? error.message : String(error));
  }
  const warnings: string[] = [];
  if (settings.fsync !== 'on')
    warnings.push(
      `PostgreSQL fsync is ${String(settings.fsync)}: a crash of the machine can lose or corrupt execution records, queued jobs and coordination state; set fsync = on`,
    );
  if (!SYNCHRONOUS.has(settings.synchronousCommit ?? ''))
    warnings.push(
      `PostgreSQL synchronous_commit is ${String(settings.synchronousCommit)}: a crash loses the last acknowledged commits (records, jobs, held locks); set synchronous_commit = on`,
    );
  const persistence: PostgresPersistence =
    settings.fsync !== 'on' ? 'no_fsync' : warnings.length > 0 ? 'async_commit' : 'durable';
  return {
    checked: true,
    settings,
    persistence,
    evicts: false,
    survives: SURVIVES[persistence],
    durable: persistence === 'durable',
    warnings,
  };
}

function unread(reason: string): PostgresDurabilityReport {
  return {
    checked: false,
    reason,
    settings: { fsync: undefined, synchronousCommit: undefined },
    persistence: 'unknown',
    evicts: false,
    survives: SURVIVES.unknown,
    durable: false,
    warnings: [
      `could not check the PostgreSQL durability settings (SHOW failed: ${reason}); executions survive a crash only with fsync = on and synchronous_commit = on: check them on the server`,
    ],
  };
}

/** Options of {@link postgresDurabilityAtStartUp}. */
export interface PostgresStartUpCheckOptions {
  /** Reject with `DurabilityError` unless the report is `durable`. */
  readonly required: boolean;
  /** Where the warnings (or, when `required`, the refusal) are logged. */
  readonly logger: Logger;
}

/**
 * The start-up check of a PostgreSQL runtime: {@link checkPostgresDurability}, then one `warn`
 * per warning, or with `required` one `error` line and a rejection with `DurabilityError` whose
 * message says "PostgreSQL is not durable" and names the settings.
 */
export async function postgresDurabilityAtStartUp(
  pool: Pool,
  options: PostgresStartUpCheckOptions,
): Promise<PostgresDurabilityReport> {
  const report = await checkPostgresDurability(pool);
  const fields = {
    durability: { persistence: report.persistence, checked: report.checked, settings: report.settings },
  };
  if (report.durable) {
    options.logger.debug(fields, `PostgreSQL durability: ${report.survives}`);
    return report;
  }
  if (options.required) {
    const verdict = `PostgreSQL is not durable: ${report.warnings.join('; ')}`;
    const error = new DurabilityError(report, verdict);
    options.logger.error({ ...fields, err: error }, `refusing to start: ${error.message}`);
    throw error;
  }
  for (const warning of report.warnings) options.logger.warn(fields, warning);
  return report;
}
