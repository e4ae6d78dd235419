/**
 * The PostgreSQL Store: one row per execution in `<schema>.executions`, the record's JSON as
 * written (a `json` column) beside columns projected from it at every save (reactor, status,
 * definition version, root and parent ids, tags, the record's times) that `list` filters and pages
 * on; idempotency, correlation and resume claims in their own tables. Every write is one statement
 * (a server-side function per transition, see migrations/0001-store.ts); every expiry is the
 * database's clock. Records are kept unless `recordTtlMs` is set (docs/decisions/125).
 *
 * @module
 */
import type { Pool } from 'pg';
import { RecordVersionError, StoreUnavailableError } from '../../errors.js';
import type { Claim, InterruptClaims } from '../../ports/interrupt-claims.js';
import {
  RECORD_VERSION,
  type ExecutionFilter,
  type ExecutionRecord,
  type IdempotencyClaim,
  type Store,
} from '../../ports/store.js';
import { DEFAULT_LIST_PAGE, decodeListCursor, encodeListCursor } from '../list-cursor.js';
import { DEFAULT_MAX_MAP_STATE_BYTES, joinRecord, splitRecord, type SplitRecord } from '../map-parts.js';
import { checkedRecordTtl } from '../record-ttl.js';
import { postgresConnection, type PostgresConnection, type PostgresConnectionOption } from './connection.js';
import { checkSchema, migrate } from './migrate.js';
import { PostgresNames } from './names.js';
import { forgetOldest } from '../../ports/bounded-memo.js';
import { positiveInteger } from '../positive-integer.js';
import { limitedRecordJson } from '../record-json.js';

/** Default size limit of one serialized record: 512 KiB (as the other stores). */
export const DEFAULT_MAX_RECORD_BYTES = 512 * 1024;
/** How many expired rows of each table one pruning pass deletes at most. */
const PRUNE_BATCH = 500;
/** A store with a retention prunes expired rows at every this many saves (and at each listing's first page). */
const PRUNE_EVERY_SAVES = 1024;

/** Options of {@link PostgresStore}. */
export interface PostgresStoreOptions {
  /** Where to connect: a connection string, a `pg` pool config, or your own `pg.Pool` (never ended by the store). */
  readonly connection: PostgresConnectionOption;
  /** The schema of ts-reactor's tables (default `ts_reactor`); a lower-case SQL identifier. */
  readonly schema?: string;
  /**
   * Apply pending migrations at start (under an advisory lock: workers starting together are
   * safe). Default false: the store checks the schema's version and refuses to run on another one
   * with `PostgresSchemaError`.
   */
  readonly migrate?: boolean;
  /**
   * How long a record (and its idempotency and correlation claims) is kept after its last save, in
   * ms: a positive integer, or `Infinity`. Default `Infinity`: history is kept until you delete it.
   */
  readonly recordTtlMs?: number;
  /** Largest serialized record accepted, in bytes. Default 512 KiB. */
  readonly maxRecordBytes?: number;
  /** Largest serialized element states of one large map (kept apart from the record), in bytes. Default 64 MiB. */
  readonly maxMapStateBytes?: number;
}

/** The SQL types of `save_execution`'s arguments, in order (see migrations/0001-store.ts). */
const SAVE_ARGUMENT_TYPES = [
  'text',
  'json',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'jsonb',
  'text',
  'float8',
  'float8',
  'bigint',
  'boolean',
  'text[]',
  'bigint[]',
  'json[]',
] as const;

/** The position of `p_if_absent` among {@link SAVE_ARGUMENT_TYPES}. */
const IF_ABSENT = 13;

/** `save_execution`'s placeholders, numbered from `offset + 1`. */
function saveArguments(offset: number): string {
  return SAVE_ARGUMENT_TYPES.map((type, i) => `$${offset + i + 1}::${type}`).join(', ');
}

/** Engine-clock milliseconds (a float8 parameter) as a timestamptz, as the migrations project them. */
const msToTimestamp = (placeholder: string): string =>
  `('epoch'::timestamptz + ${placeholder}::float8 * interval '1 millisecond')`;

/** A live row: no retention, or not expired yet (database clock). */
const LIVE = '(expires_at IS NULL OR expires_at > now())';

/**
 * {@link Store} and {@link InterruptClaims} over PostgreSQL (`pg`). The schema is checked (or,
 * with `migrate: true`, migrated) before the first statement; {@link PostgresStore.ready} does it
 * up front. A connection error surfaces as `StoreUnavailableError`.
 */
export class PostgresStore implements Store, InterruptClaims {
  /** The names of the schema's tables and functions. */
  readonly names: PostgresNames;
  /** Size limit of one record in bytes. */
  readonly maxRecordBytes: number;
  /** Size limit of one large map's element states in bytes. */
  readonly maxMapStateBytes: number;
  /** How long a record is kept after its last save, in ms (`Infinity`: kept). */
  readonly recordTtlMs: number;
  readonly #connection: PostgresConnection;
  readonly #migrate: boolean;
  #ready: Promise<void> | undefined;
  #saves = 0;
  /** Revisions of large maps' element states this process wrote, by `id\u0000path` (bounded, oldest dropped first). */
  readonly #partRevs = new Map<string, number>();

  /** @throws RuntimeOptionError for a schema name or `recordTtlMs` that is not valid. */
  constructor(options: PostgresStoreOptions) {
    this.names = new PostgresNames(options.schema, 'PostgresStore');
    this.recordTtlMs = checkedRecordTtl('PostgresStore', options.recordTtlMs) ?? Infinity;
    this.maxRecordBytes = positiveInteger('maxRecordBytes', options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES);
    this.maxMapStateBytes = positiveInteger(
      'maxMapStateBytes',
      options.maxMapStateBytes ?? DEFAULT_MAX_MAP_STATE_BYTES,
    );
    this.#migrate = options.migrate === true;
    this.#connection = postgresConnection(options.connection);
  }

  /** The pool statements run on. */
  get pool(): Pool {
    return this.#connection.pool;
  }

  /**
   * Checks the schema's version (or applies the pending migrations with `migrate: true`); every
   * other call does it first. A success is kept; a failure is tried again by the next call.
   * @throws PostgresSchemaError when the schema is missing or at another version.
   */
  ready(): Promise<void> {
    this.#ready ??= (async () => {
      if (this.#migrate) await migrate(this.pool, this.names);
      else await checkSchema(this.pool, this.names);
    })().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  /** Ends the pool when the store created it (an application's own pool is left open). */
  close(): Promise<void> {
    return this.#connection.end();
  }

  /** The TTL argument of the SQL functions: null when records are kept. */
  get #ttl(): number | null {
    return this.recordTtlMs === Infinity ? null : this.recordTtlMs;
  }

  async save(record: ExecutionRecord): Promise<void> {
    const split = this.#split(record);
    await this.#run('store-save', async () => {
      await this.pool.query(
        `SELECT ${this.names.saveExecution}(${saveArguments(0)})`,
        this.#saveValues(record, split, false),
      );
      if (this.#ttl !== null && ++this.#saves % PRUNE_EVERY_SAVES === 0) await this.#prune();
    });
    this.#rememberParts(record.id, split);
  }

  async get(id: string): Promise<ExecutionRecord | undefined> {
    return this.#run('store-get', async () => {
      const { rows } = await this.pool.query<{ record: string }>(
        `SELECT record::text AS record FROM ${this.names.executions} WHERE id = $1 AND ${LIVE}`,
        [id],
      );
      const json = rows[0]?.record;
      if (json === undefined) return undefined;
      const record = parseRecord(json);
      if (record.mapParts === undefined || record.mapParts.length === 0) return record;
      const parts = await this.pool.query<{ path: string; states: string }>(
        `SELECT path, states::text AS states FROM ${this.names.executionMapParts} WHERE execution_id = $1`,
        [id],
      );
      const byPath = new Map(parts.rows.map((row) => [row.path, row.states]));
      return joinRecord(record, (path) => byPath.get(path));
    });
  }

  async list(
    filter: ExecutionFilter = {},
  ): Promise<{ readonly records: readonly ExecutionRecord[]; readonly cursor?: string }> {
    const limit = positiveInteger('list limit', filter.limit ?? DEFAULT_LIST_PAGE);
    const after = filter.cursor === undefined ? undefined : decodeListCursor(filter.cursor);
    const where = [LIVE];
    const values: unknown[] = [];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    if (filter.reactor !== undefined) where.push(`reactor = ${param(filter.reactor)}`);
    if (filter.status !== undefined) where.push(`status = ${param(filter.status)}`);
    if (filter.tags !== undefined && Object.keys(filter.tags).length > 0)
      where.push(`tags @> ${param(JSON.stringify(filter.tags))}::jsonb`);
    if (filter.createdFrom !== undefined) where.push(`created_at >= ${msToTimestamp(param(filter.createdFrom))}`);
    if (filter.createdTo !== undefined) where.push(`created_at < ${msToTimestamp(param(filter.createdTo))}`);
    // Keyset: strictly after the cursor's (createdAt, id), so records created meanwhile (newer) never shift a page.
    if (after !== undefined)
      where.push(`(created_at, id) < (${msToTimestamp(param(after.createdAt))}, ${param(after.id)}::text COLLATE "C")`);
    const sql = `SELECT record::text AS record FROM ${this.names.executions}
      WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${param(limit + 1)}`;
    return this.#run('store-list', async () => {
      if (after === undefined && this.#ttl !== null) await this.#prune(); // once per listing, at its first page
      const { rows } = await this.pool.query<{ record: string }>(sql, values);
      const found = rows.map((row) => parseRecord(row.record));
      const records = found.slice(0, limit);
      const last = records[records.length - 1];
      return found.length > limit && last !== undefined
        ? { records, cursor: encodeListCursor({ createdAt: last.createdAt, id: last.id }) }
        : { records };
    });
  }

  async claimIdempotency(
    reactor: string,
    key: string,
    executionId: string,
    pending?: ExecutionRecord,
  ): Promise<IdempotencyClaim> {
    const split = pending === undefined ? undefined : this.#split(pending); // refused over the limit, before claiming
    const claim = `${this.names.claimIdempotency}($1::text, $2::text, $3::text, $4::bigint)`;
    const head = [reactor, key, executionId, this.#ttl];
    const holder = await this.#run('idempotency-claim', async () => {
      if (pending === undefined || split === undefined) {
        const { rows } = await this.pool.query<{ holder: string }>(`SELECT ${claim} AS holder`, head);
        return rows[0]?.holder;
      }
      // The claim and the first record in one statement, so one transaction (docs/decisions/056).
      const { rows } = await this.pool.query<{ holder: string }>(
        `WITH c AS (SELECT ${claim} AS holder)
         SELECT c.holder, CASE WHEN c.holder = $3::text THEN ${this.names.saveExecution}(${saveArguments(4)}) END AS written
         FROM c`,
        [...head, ...this.#saveValues(pending, split, true)],
      );
      return rows[0]?.holder;
    });
    if (holder === undefined)
      throw new StoreUnavailableError('idempotency-claim', new Error('the claim returned no row'));
    if (holder !== executionId) return { claimed: false, executionId: holder };
    if (pending !== undefined && split !== undefined) this.#rememberParts(pending.id, split);
    return { claimed: true };
  }

  async idempotencyHolder(reactor: string, key: string): Promise<string | undefined> {
    return this.#run('idempotency-get', async () => {
      const { rows } = await this.pool.query<{ execution_id: string }>(
        `SELECT execution_id FROM ${this.names.idempotencyClaims} WHERE reactor = $1 AND key = $2 AND ${LIVE}`,
        [reactor, key],
      );
      return rows[0]?.execution_id;
    });
  }

  async claimCorrelation(
    correlationId: string,
    executionId: string,
    options: { readonly replace?: string } = {},
  ): Promise<Claim> {
    const holder = await this.#run('correlation-claim', async () => {
      const { rows } = await this.pool.query<{ holder: string }>(
        `SELECT ${this.names.claimCorrelation}($1::text, $2::text, $3::text, $4::bigint) AS holder`,
        [correlationId, executionId, options.replace ?? null, this.#ttl],
      );
      return rows[0]?.holder ?? '';
    });
    return holder === executionId ? { claimed: true } : { claimed: false, holder };
  }

  async correlation(correlationId: string): Promise<string | undefined> {
    return this.#run('correlation-get', async () => {
      const { rows } = await this.pool.query<{ execution_id: string }>(
        `SELECT execution_id FROM ${this.names.correlationClaims} WHERE correlation_id = $1 AND ${LIVE}`,
        [correlationId],
      );
      return rows[0]?.execution_id;
    });
  }

  async claimResume(executionId: string, step: string, claimant: string, ttlMs: number): Promise<Claim> {
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)
      throw new RangeError(`claimResume: ttlMs must be a positive integer, got ${String(ttlMs)}`);
    return this.#run('resume-claim', async () => {
      const { rows } = await this.pool.query<{ claimed: boolean; holder: string | null }>(
        `SELECT claimed, holder FROM ${this.names.claimResume}($1::text, $2::text, $3::text, $4::bigint)`,
        [executionId, step, claimant, ttlMs],
      );
      const row = rows[0];
      return row?.claimed === true ? { claimed: true } : { claimed: false, holder: row?.holder ?? '' };
    });
  }

  async releaseResume(executionId: string, step: string, claimant: string): Promise<void> {
    await this.#run('resume-release', () =>
      this.pool.query(
        `DELETE FROM ${this.names.resumeClaims} WHERE execution_id = $1 AND step = $2 AND claimant = $3`,
        [executionId, step, claimant],
      ),
    );
  }

  /**
   * A save of `record` made inside another transition's SQL function (the job leases pass it to
   * `save_execution`): its arguments' values (`save_execution`'s, without `p_if_absent`), their
   * typed placeholders numbered from `offset + 1`, and `saved`, to call once the transition wrote it.
   * @throws RecordTooLargeError when the record, or a large map's element states, is over its limit.
   */
  saveArguments(
    record: ExecutionRecord,
    offset: number,
  ): { readonly values: readonly unknown[]; readonly placeholders: string; saved(): void } {
    const split = this.#split(record);
    const values = this.#saveValues(record, split, false).filter((_, i) => i !== IF_ABSENT);
    const placeholders = SAVE_ARGUMENT_TYPES.filter((_, i) => i !== IF_ABSENT)
      .map((type, i) => `$${offset + i + 1}::${type}`)
      .join(', ');
    return { values, placeholders, saved: () => this.#rememberParts(record.id, split) };
  }

  /**
   * Runs `work`, a statement of a transition over the store's tables, once the schema is checked;
   * a lost or refused connection becomes `StoreUnavailableError` naming `operation`.
   */
  run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    return this.#run(operation, work);
  }

  /** Runs `work` once the schema is checked; a lost or refused connection becomes `StoreUnavailableError`. */
  async #run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      await this.ready();
      return await work();
    } catch (error) {
      if (isUnavailable(error)) throw new StoreUnavailableError(operation, error);
      throw error;
    }
  }

  /** Deletes a batch of expired rows of every table that expires. */
  async #prune(): Promise<void> {
    await this.pool.query(`SELECT ${this.names.pruneExpired}($1)`, [PRUNE_BATCH]);
  }

  /** The record's JSON and its large maps' states, each refused when larger than its limit. */
  #split(record: ExecutionRecord): SplitRecord {
    if (record.mapStates === undefined && record.mapParts === undefined)
      return { json: limitedRecordJson(record, this.maxRecordBytes), parts: [] };
    return splitRecord(
      record,
      { maxRecordBytes: this.maxRecordBytes, maxMapStateBytes: this.maxMapStateBytes },
      (path) => this.#partRevs.get(`${record.id}\u0000${path}`),
    );
  }

  /** Notes the map revisions a write stored, so unchanged states are not sent again. */
  #rememberParts(id: string, split: SplitRecord): void {
    for (const part of split.parts) {
      const memo = `${id}\u0000${part.path}`;
      this.#partRevs.delete(memo);
      this.#partRevs.set(memo, part.rev);
      forgetOldest(this.#partRevs, 10_000);
    }
  }

  /** The values of `save_execution`'s arguments for `record` (see {@link SAVE_ARGUMENT_TYPES}). */
  #saveValues(record: ExecutionRecord, split: SplitRecord, ifAbsent: boolean): unknown[] {
    const parts = split.parts;
    return [
      record.id,
      split.json,
      record.reactor,
      record.status,
      record.version ?? null,
      record.fingerprint ?? null,
      record.rootId,
      record.parentId ?? null,
      JSON.stringify(record.tags ?? {}),
      record.idempotencyKey ?? null,
      record.createdAt,
      record.updatedAt,
      this.#ttl,
      ifAbsent,
      parts.length === 0 ? null : parts.map((p) => p.path),
      parts.length === 0 ? null : parts.map((p) => p.rev),
      parts.length === 0 ? null : parts.map((p) => p.json ?? null),
    ];
  }
}

/**
 * Whether `error` says the database could not be reached or went away (rather than refusing the
 * statement): a socket error, a connection `pg` saw end, SQLSTATE class 08 (connection exception)
 * or 57P0x (the server shutting down or starting up).
 */
function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string')
    return (
      code.startsWith('08') ||
      /^57P0[1-3]$/.test(code) ||
      ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND'].includes(code)
    );
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message);
}

/** Parses a stored record, checking its schema version. @throws RecordVersionError when it is not readable. */
export function parseRecord(json: string): ExecutionRecord {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new RecordVersionError('unparseable', RECORD_VERSION);
  }
  const version = typeof value === 'object' && value !== null ? (value as { v?: unknown }).v : undefined;
  if (version !== RECORD_VERSION) throw new RecordVersionError(version, RECORD_VERSION);
  return value as ExecutionRecord;
}
