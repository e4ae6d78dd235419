/**
 * {@link JobLeases} on PostgreSQL: a worker's entry into a job and its fenced writes, each one
 * call of a function of migration 3 (`job_enter`, `job_leave`, `job_save_fenced`): the liveness
 * lease is the coordinator's lock (`coord_locks`), the record is the store's row, and each check
 * and write happen in one statement (docs/decisions/130).
 *
 * @module
 */
import { LeaseLostError } from '../../errors.js';
import type { HolderInfo } from '../../ports/coordinator.js';
import type { JobEnterRequest, JobEnterResult, JobLeases } from '../../ports/job-lease.js';
import type { ExecutionRecord } from '../../ports/store.js';
import { joinRecord } from '../map-parts.js';
import { parseRecord, type PostgresStore } from './store.js';
import { positiveInteger } from '../positive-integer.js';

/** A row of `job_enter`. */
interface EnterRow {
  readonly acquired: boolean;
  readonly holder_owner: string | null;
  readonly holder_execution_id: string | null;
  readonly holder_reactor: string | null;
  readonly holder_step: string | null;
  readonly ttl_ms: string | null;
  readonly record_json: string | null;
  readonly part_paths: string[] | null;
  readonly part_states: string[] | null;
  readonly cancel_requested: boolean | null;
}

/**
 * The job leases of a {@link PostgresStore}'s schema, run on its pool. The schema must be
 * migrated to version 3 or later (the store's check covers it); the coordinator of the same
 * schema sees the leases as its locks.
 */
export class PostgresJobLeases implements JobLeases {
  readonly #store: PostgresStore;

  /** @param store - The store whose rows the leases fence (and whose pool and schema they use). */
  constructor(store: PostgresStore) {
    this.#store = store;
  }

  /** @throws RangeError on a lease `ttlMs` that is not an integer ≥ 1; StoreUnavailableError when Postgres cannot be reached. */
  async enterJob(request: JobEnterRequest): Promise<JobEnterResult> {
    const { lease } = request;
    positiveInteger('ttlMs', lease.ttlMs);
    const { holder } = lease;
    const names = this.#store.names;
    const row = await this.#store.run('job-enter', async () => {
      const { rows } = await this.#store.pool.query<EnterRow>(
        `SELECT * FROM ${names.jobEnter}($1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $7::boolean,
           $8::text, $9::text, $10::text)`,
        [
          lease.key,
          holder.owner,
          holder.executionId ?? '',
          holder.reactor ?? '',
          holder.step ?? '',
          lease.ttlMs,
          lease.unfenced === true,
          request.executionId,
          request.cancel.key,
          request.cancel.bucket,
        ],
      );
      return rows[0];
    });
    if (row === undefined) throw new Error('job_enter returned no row');
    if (!row.acquired)
      return {
        acquired: false,
        holder: toHolder(row.holder_owner ?? '', row.holder_execution_id, row.holder_reactor, row.holder_step),
        ttlMs: Number(row.ttl_ms),
      };
    return { acquired: true, record: decodeRecord(row), cancelRequested: row.cancel_requested === true };
  }

  /** @throws LeaseLostError when `owner` does not hold `key`; RecordTooLargeError over the size limit (nothing released). */
  async saveAndRelease(record: ExecutionRecord, key: string, owner: string): Promise<void> {
    const save = this.#store.saveArguments(record, 2);
    const outcome = await this.#store.run('job-leave', async () => {
      const { rows } = await this.#store.pool.query<{ outcome: number }>(
        `SELECT outcome FROM ${this.#store.names.jobLeave}($1::text, $2::text, ${save.placeholders})`,
        [key, owner, ...save.values],
      );
      return rows[0]?.outcome ?? 0;
    });
    if (outcome === 0) throw new LeaseLostError(record.id, 'taken_over');
    save.saved();
  }

  /** @throws LeaseLostError when `owner` does not hold `key`; RecordTooLargeError over the size limit. */
  async saveFenced(record: ExecutionRecord, key: string, owner: string): Promise<void> {
    const save = this.#store.saveArguments(record, 2);
    const written = await this.#store.run('job-save-fenced', async () => {
      const { rows } = await this.#store.pool.query<{ written: boolean }>(
        `SELECT ${this.#store.names.jobSaveFenced}($1::text, $2::text, ${save.placeholders}) AS written`,
        [key, owner, ...save.values],
      );
      return rows[0]?.written === true;
    });
    if (!written) throw new LeaseLostError(record.id, 'taken_over');
    save.saved();
  }
}

/** The record `job_enter` read, its large maps' element states joined back in. */
function decodeRecord(row: EnterRow): ExecutionRecord | undefined {
  if (row.record_json === null) return undefined;
  const record = parseRecord(row.record_json);
  const paths = row.part_paths ?? [];
  const states = new Map(paths.map((path, i) => [path, row.part_states?.[i]]));
  return joinRecord(record, (path) => states.get(path) ?? undefined);
}

/** A holder as stored (NULL = absent) → the port's shape. */
function toHolder(owner: string, executionId: string | null, reactor: string | null, step: string | null): HolderInfo {
  return {
    owner,
    ...(executionId === null ? {} : { executionId }),
    ...(reactor === null ? {} : { reactor }),
    ...(step === null ? {} : { step }),
  };
}
