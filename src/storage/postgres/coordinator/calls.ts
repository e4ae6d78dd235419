/**
 * How the Postgres coordinator calls its SQL functions: one `SELECT * FROM fn($1, …)` per
 * transition on the pool, the one error mapping, and the periodic purge of dead rows.
 *
 * @module
 */
import type { Pool } from 'pg';
import { CoordinationUnavailableError } from '../../../errors.js';
import { PostgresSchemaError } from '../errors.js';
import { checkSchema } from '../migrate.js';
import type { CoordinationFunction, PostgresNames } from '../names.js';

/** Dead rows are purged (in the background) after this many calls. */
export const PURGE_EVERY = 1024;
/** Rows per table one purge deletes at most. */
export const PURGE_LIMIT = 1000;
/** Attempts of a call that Postgres aborted for a deadlock or a serialization failure. */
const ATTEMPTS = 3;

/** SQLSTATEs of a call aborted as a whole (nothing of it happened): sent again at once. */
const TRANSIENT = new Set(['40001', '40P01']);
/** SQLSTATEs of a server that is going away, not taking connections, or too slow to answer: an outage. */
const OUTAGE = new Set(['57P01', '57P02', '57P03', '53300', '57014']);
/** SQLSTATEs of a missing function, table or schema: the schema may not be migrated. */
const MISSING = new Set(['42883', '42P01', '3F000']);

/**
 * The SQL calls of one coordinator. Every call is one statement outside any transaction, so it
 * is one atomic transition and one round trip; a call Postgres aborted (deadlock, serialization
 * failure) changed nothing and is sent again.
 */
export class CoordinationCalls {
  readonly #pool: Pool;
  readonly #names: PostgresNames;
  #calls = 0;
  #purging: Promise<void> | undefined;

  /** @param pool - The connections the calls run on. @param names - The schema's function names. */
  constructor(pool: Pool, names: PostgresNames) {
    this.#pool = pool;
    this.#names = names;
  }

  /**
   * Calls `fn` with `args` and returns its rows.
   *
   * @throws RangeError when the function refused an argument (`RX_ARG`); PostgresSchemaError
   * when the schema is not at this ts-reactor's version; CoordinationUnavailableError when
   * Postgres cannot be reached; any other server error as `pg` reports it (its `code` the SQLSTATE).
   */
  async rows<R>(operation: string, fn: CoordinationFunction, args: readonly unknown[]): Promise<R[]> {
    this.#count();
    const placeholders = args.map((_, index) => `$${index + 1}`).join(', ');
    const text = `SELECT * FROM ${this.#names.coordFunction(fn)}(${placeholders})`;
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.#pool.query(text, args as unknown[])).rows as R[];
      } catch (error) {
        const state = sqlState(error) ?? '';
        if (attempt < ATTEMPTS && TRANSIENT.has(state)) continue;
        // A schema not migrated (to this version) is named as such, with the fix.
        if (MISSING.has(state)) await this.#checkSchema();
        throw toCoordinationError(operation, fn, error);
      }
    }
  }

  /** Calls `fn`, which returns exactly one row. @throws as {@link CoordinationCalls.rows}. */
  async one<R>(operation: string, fn: CoordinationFunction, args: readonly unknown[]): Promise<R> {
    const [row] = await this.rows<R>(operation, fn, args);
    if (row === undefined) throw new CoordinationUnavailableError(operation, new Error(`${fn} returned no row`));
    return row;
  }

  /** Throws the schema check's PostgresSchemaError, if any; a failure of the check itself is left unsaid. */
  async #checkSchema(): Promise<void> {
    try {
      await checkSchema(this.#pool, this.#names);
    } catch (error) {
      if (error instanceof PostgresSchemaError) throw error;
    }
  }

  /** Waits for a purge in flight (on close). */
  async settle(): Promise<void> {
    await this.#purging;
  }

  /** Counts a call; every {@link PURGE_EVERY} calls, purges dead rows in the background. */
  #count(): void {
    this.#calls += 1;
    if (this.#calls % PURGE_EVERY !== 0 || this.#purging !== undefined) return;
    const text = `SELECT ${this.#names.coordFunction('purge')}($1)`;
    // Purging only saves space: a failed purge is tried again PURGE_EVERY calls later.
    this.#purging = this.#pool.query(text, [PURGE_LIMIT]).then(
      () => (this.#purging = undefined),
      () => (this.#purging = undefined),
    );
  }
}

/** The SQLSTATE of a server error, `undefined` for anything else. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * The one error mapping of the coordinator's calls: a connection problem, a server going away or
 * a statement timeout is `CoordinationUnavailableError`; an argument a function refused
 * (SQLSTATE 22023, `RX_ARG …`) a `RangeError`; any other error is returned as it is.
 */
export function toCoordinationError(operation: string, fn: string, error: unknown): unknown {
  const state = sqlState(error);
  const message = error instanceof Error ? error.message : String(error);
  if (state === undefined || state.startsWith('08') || OUTAGE.has(state))
    return new CoordinationUnavailableError(operation, error);
  if (state === '22023' && message.startsWith('RX_ARG'))
    return new RangeError(`${fn}: ${message.slice('RX_ARG '.length)}`, { cause: error });
  return error;
}

/**
 * Durations and limits are whole numbers (the SQL functions refuse anything else too).
 *
 * @throws RangeError when `value` is not a safe integer `>= min`.
 */
export function assertInteger(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer >= ${min}; got ${String(value)}`);
}

/** A Postgres `bigint` (sent as text by `pg`) or `integer` as a number. */
export function toNumber(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}
