/**
 * How the Postgres coordinator calls its SQL functions: one `SELECT * FROM fn($1, …)` per
 * transition on the pool, the one error mapping, the periodic purge of dead rows, and riding out
 * a lost connection (docs/decisions/132): a call that could not get a connection ran nothing and
 * is sent again with backoff until the outage tolerance has passed; a call whose connection was
 * lost after it was sent is sent again only when it is {@link REPEATABLE}, and a counted one
 * (an acquire, a release) only through its caller's {@link CoordinationCalls.settleLost}, which
 * first reads whether the lost call took effect.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Pool, PoolClient, QueryConfig } from 'pg';
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
 * SQLSTATEs of a prepared statement the connection does not have (26000) or already has (42P05):
 * the connection's statements are not the ones `pg` remembers (a pooler between, or a `pg` that
 * kept a statement whose preparation failed). Nothing ran; the call is sent again once on a
 * fresh connection.
 */
const STATEMENT_MISMATCH = new Set(['26000', '42P05']);

/** How long a call rides out a lost or refused connection unless told otherwise: 30 s. */
export const DEFAULT_COORDINATION_OUTAGE_TOLERANCE_MS = 30_000;

/**
 * Functions whose second call after a lost reply changes nothing the first did not: reads,
 * extensions (a deadline set again from now), a lock's wanted mark, a period's mark and an
 * ordered position's heartbeat.
 */
const REPEATABLE: ReadonlySet<CoordinationFunction> = new Set<CoordinationFunction>([
  'time',
  'lock_state',
  'lock_extend',
  'lock_want',
  'semaphore_state',
  'semaphore_extend',
  'rate_state',
  'period_mark',
  'period_state',
  'ordered_state',
  'ordered_heartbeat',
]);

/**
 * A counted call's connection was lost after the call was sent: it may or may not have taken
 * effect. Thrown only to a caller that asked for it (`settles`), which settles it with
 * {@link CoordinationCalls.settleLost}; never leaves the coordinator.
 */
export class LostReply extends Error {
  readonly operation: string;
  override readonly cause: unknown;
  constructor(operation: string, cause: unknown) {
    super(`${operation}: the connection was lost after the call was sent`);
    this.name = 'LostReply';
    this.operation = operation;
    this.cause = cause;
  }
}

/** A call's statement: its text and, when prepared, the name each connection keeps it under. */
interface Statement {
  readonly text: string;
  readonly name: string | undefined;
}

/**
 * The SQL calls of one coordinator. Every call is one statement outside any transaction, so it
 * is one atomic transition and one round trip; a call Postgres aborted (deadlock, serialization
 * failure) changed nothing and is sent again.
 *
 * A call's statement is prepared once per connection, under a name derived from its text
 * (`rx_` and 24 hex digits of its SHA-1), and later calls on that connection only bind and
 * execute it: the server parses and plans it once (docs/decisions/155). Off (`prepare: false`),
 * every call is parsed and planned again.
 */
export class CoordinationCalls {
  readonly #pool: Pool;
  readonly #names: PostgresNames;
  readonly #toleranceMs: number;
  readonly #prepare: boolean;
  /** `fn/argument count` → its statement. */
  readonly #statements = new Map<string, Statement>();
  #calls = 0;
  #purging: Promise<void> | undefined;

  /**
   * @param pool - The connections the calls run on. @param names - The schema's function names.
   * @param toleranceMs - How long a call rides out a lost or refused connection (0: fails at the first).
   * @param prepare - Whether each connection prepares a call's statement once (default true).
   */
  constructor(
    pool: Pool,
    names: PostgresNames,
    toleranceMs = DEFAULT_COORDINATION_OUTAGE_TOLERANCE_MS,
    prepare = true,
  ) {
    if (!Number.isFinite(toleranceMs) || toleranceMs < 0)
      throw new RangeError(`outageToleranceMs must be a finite number >= 0; got ${String(toleranceMs)}`);
    this.#pool = pool;
    this.#names = names;
    this.#toleranceMs = toleranceMs;
    this.#prepare = prepare;
  }

  /** The statement calling `fn` with `count` arguments. */
  #statement(fn: CoordinationFunction, count: number): Statement {
    const id = `${fn}/${count}`;
    let statement = this.#statements.get(id);
    if (statement === undefined) {
      const placeholders = Array.from({ length: count }, (_, index) => `$${index + 1}`).join(', ');
      const text = `SELECT * FROM ${this.#names.coordFunction(fn)}(${placeholders})`;
      const name = this.#prepare ? `rx_${createHash('sha1').update(text).digest('hex').slice(0, 24)}` : undefined;
      statement = { text, name };
      this.#statements.set(id, statement);
    }
    return statement;
  }

  /**
   * Calls `fn` with `args` and returns its rows. A connection that cannot be had, or one lost
   * under a {@link REPEATABLE} call, is ridden out up to the tolerance. With `settles`, a counted
   * call whose connection was lost after it was sent rejects with {@link LostReply} at once, for
   * the caller to settle; without, with `CoordinationUnavailableError`.
   *
   * @throws RangeError when the function refused an argument (`RX_ARG`); PostgresSchemaError
   * when the schema is not at this ts-reactor's version; CoordinationUnavailableError when
   * Postgres cannot be reached; any other server error as `pg` reports it (its `code` the SQLSTATE).
   */
  async rows<R>(
    operation: string,
    fn: CoordinationFunction,
    args: readonly unknown[],
    options: { readonly settles?: boolean } = {},
  ): Promise<R[]> {
    this.#count();
    const { text, name } = this.#statement(fn, args.length);
    const query: QueryConfig =
      name === undefined ? { text, values: args as unknown[] } : { name, text, values: args as unknown[] };
    let since: number | undefined;
    let mismatched = false;
    for (let attempt = 1, outage = 0; ;) {
      let client: PoolClient;
      try {
        client = await checkout(this.#pool);
      } catch (error) {
        // No connection: nothing was sent, so any call may be sent again.
        since ??= performance.now();
        await this.#outlast(operation, fn, error, since, outage++);
        continue;
      }
      try {
        const rows = (await client.query<R & object>(query)).rows as R[];
        client.removeListener('error', ignore);
        client.release();
        return rows;
      } catch (error) {
        const state = sqlState(error) ?? '';
        const mismatch = name !== undefined && STATEMENT_MISMATCH.has(state);
        const lost = isConnectionLoss(error);
        client.removeListener('error', ignore);
        // A connection whose statements are not what `pg` remembers is ended (its successor starts afresh).
        client.release(lost || mismatch ? asError(error) : undefined);
        if (mismatch && !mismatched) {
          mismatched = true;
          continue;
        }
        if (attempt++ < ATTEMPTS && TRANSIENT.has(state)) continue;
        if (lost && REPEATABLE.has(fn)) {
          since ??= performance.now();
          await this.#outlast(operation, fn, error, since, outage++);
          continue;
        }
        if (lost && options.settles === true) throw new LostReply(operation, error);
        // A schema not migrated (to this version) is named as such, with the fix.
        if (MISSING.has(state)) await this.#checkSchema();
        throw toCoordinationError(operation, fn, error);
      }
    }
  }

  /** Calls `fn`, which returns exactly one row (`settles`: as {@link CoordinationCalls.rows}). @throws as `rows`. */
  async one<R>(
    operation: string,
    fn: CoordinationFunction,
    args: readonly unknown[],
    options: { readonly settles?: boolean } = {},
  ): Promise<R> {
    const [row] = await this.rows<R>(operation, fn, args, options);
    if (row === undefined) throw new CoordinationUnavailableError(operation, new Error(`${fn} returned no row`));
    return row;
  }

  /**
   * The slow path of a counted call whose reply was lost (`lost`): once Postgres answers again,
   * `settle` reads what the lost call did — its result when it took effect, `undefined` when it
   * did not — and only a call that did not is sent again (`again`), until the tolerance has
   * passed since the loss. `settle` and `again` reject with {@link LostReply} or
   * `CoordinationUnavailableError` on their own connection problems; this loop rides them out.
   *
   * @throws CoordinationUnavailableError once the tolerance has passed.
   */
  async settleLost<R>(lost: LostReply, settle: () => Promise<R | undefined>, again: () => Promise<R>): Promise<R> {
    const since = performance.now();
    let error: unknown = lost.cause;
    for (let outage = 0; ; outage++) {
      await this.#outlast(lost.operation, undefined, error, since, outage);
      try {
        const settled = await settle();
        return settled === undefined ? await again() : settled;
      } catch (failed) {
        if (failed instanceof LostReply) error = failed.cause;
        else if (failed instanceof CoordinationUnavailableError) error = failed.cause ?? failed;
        else throw failed;
      }
    }
  }

  /**
   * Between two sends of a call whose connection failed: throws the call's typed error when the
   * failure is not a connection problem or the tolerance has passed since `since`, else waits a
   * backoff (50 ms doubling to 1 s, never past the tolerance).
   */
  async #outlast(
    operation: string,
    fn: CoordinationFunction | undefined,
    error: unknown,
    since: number,
    outage: number,
  ): Promise<void> {
    const waitedMs = performance.now() - since;
    if (!isConnectionLoss(error) || waitedMs >= this.#toleranceMs)
      throw toCoordinationError(operation, fn ?? operation, error);
    const delay = Math.min(50 * 2 ** Math.min(outage, 5), 1_000, this.#toleranceMs - waitedMs);
    await new Promise((resolve) => setTimeout(resolve, delay));
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

/** Socket errors of a connection that could not be made or went away. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Whether `error` says the connection could not be had or was lost (rather than the call being
 * refused): a socket error, `pg`'s "Connection terminated" and connection timeouts, a connection
 * exception (SQLSTATE class 08), or a server going away, not taking connections yet, or out of
 * connection slots (57P01–57P03, 53300). A statement timeout (57014) is not: the call ran.
 */
export function isConnectionLoss(error: unknown): boolean {
  const state = sqlState(error);
  if (state !== undefined) return state.startsWith('08') || (OUTAGE.has(state) && state !== '57014');
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|Connection closed/i.test(
    message,
  );
}

/** The `error` listener of a checked-out client: the lost connection rejects the call itself. */
function ignore(): void {}

/**
 * A client of `pool`, with {@link ignore} listening for its errors from the moment it is handed
 * over: a checked-out client has no listener of the pool's, and the server's message ending the
 * connection may be parsed in the same read as the reply that freed the client, before an
 * `await` could attach one.
 */
function checkout(pool: Pool): Promise<PoolClient> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error !== undefined && error !== null) reject(error);
      else if (client === undefined) reject(new Error('the pool handed over no client'));
      else {
        client.on('error', ignore);
        resolve(client);
      }
    });
  });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
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
