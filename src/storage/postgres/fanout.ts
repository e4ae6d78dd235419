/**
 * The Postgres fan-out ledger: one row per map in `fanout_ledgers`, one per settled element in
 * `fanout_elements`, changed only by the `fanout_*` functions of migration 4, each one call that
 * locks the map's row: settlements from any number of workers are counted once and claim
 * distinct elements (docs/decisions/130).
 *
 * @module
 */
import type {
  ElementSettlement,
  ElementView,
  FanOutLedger,
  FanOutOpen,
  LedgerSnapshot,
  SettleReply,
  UndoneReply,
} from '../../ports/fanout.js';
import { ledgerSnapshot, phaseOf, SETTLEMENT_CODES, statusOfCode, unknownLedger } from '../fanout-codes.js';
import type { PostgresStore } from './store.js';
import { positiveInteger } from '../positive-integer.js';

/** Default lifetime of a ledger after its last write: 7 days (as on Redis). */
export const DEFAULT_LEDGER_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Options of {@link PostgresFanOutLedger}. */
export interface PostgresFanOutLedgerOptions {
  /** The store whose schema (migrated to version 4 or later) and pool the ledgers use. */
  readonly store: PostgresStore;
  /** How long a ledger lives after its last write, in ms; default {@link DEFAULT_LEDGER_TTL_MS}. */
  readonly ttlMs?: number;
}

/** A row of `fanout_view` (and of `fanout_register`). */
interface ViewRow {
  readonly total: number;
  readonly next_index: number;
  readonly settled: number;
  readonly failed: number;
  readonly stopped: boolean;
  readonly phase: string;
  readonly wake_job: string | null;
  readonly codes: string;
}

/** The SQLSTATE the functions raise for an unknown map or element. */
const UNKNOWN = 'P0002';

/** Fan-out ledgers in PostgreSQL, shared by every worker process. */
export class PostgresFanOutLedger implements FanOutLedger {
  readonly #store: PostgresStore;
  /** How long a ledger lives after its last write, in ms. */
  readonly ttlMs: number;

  /** @throws RangeError when `ttlMs` is not a positive integer. */
  constructor(options: PostgresFanOutLedgerOptions) {
    this.#store = options.store;
    this.ttlMs = positiveInteger('ttlMs', options.ttlMs ?? DEFAULT_LEDGER_TTL_MS);
  }

  async open(mapId: string, options: FanOutOpen): Promise<{ readonly next: number; readonly created: boolean }> {
    const [row] = await this.#call<{ next_index: number; created: boolean }>(
      mapId,
      'fanout-open',
      `SELECT next_index, created FROM ${this.#store.names.fanOutOpen}($1::text, $2::integer, $3::integer, $4::boolean, $5::bigint)`,
      [options.total, options.batchSize, options.atomic, this.ttlMs],
    );
    return { next: row?.next_index ?? 0, created: row?.created === true };
  }

  async settle(mapId: string, index: number, outcome: ElementSettlement): Promise<SettleReply> {
    const [row] = await this.#call<{
      counted: boolean;
      claim: number;
      done: boolean;
      wake_job: string | null;
      rolling_back: boolean;
    }>(
      mapId,
      'fanout-settle',
      `SELECT * FROM ${this.#store.names.fanOutSettle}($1::text, $2::integer, $3::"char", $4::bigint)`,
      [index, SETTLEMENT_CODES[outcome], this.ttlMs],
    );
    if (row === undefined) throw unknownLedger(mapId, 'fanout-settle');
    return {
      first: row.counted,
      claim: row.claim,
      done: row.done,
      wakeJob: row.wake_job ?? undefined,
      rollback: row.rolling_back,
    };
  }

  async register(mapId: string, wakeJob: string, phase: 'collect' | 'rollback'): Promise<LedgerSnapshot> {
    const [row] = await this.#call<ViewRow>(
      mapId,
      'fanout-register',
      `SELECT * FROM ${this.#store.names.fanOutRegister}($1::text, $2::text, $3::text, $4::bigint)`,
      [wakeJob, phase, this.ttlMs],
    );
    if (row === undefined) throw unknownLedger(mapId, 'fanout-register');
    return decodeLedger(row);
  }

  async undone(mapId: string, index: number): Promise<UndoneReply> {
    const [row] = await this.#call<{ target: number; wake_job: string | null }>(
      mapId,
      'fanout-undone',
      `SELECT target, wake_job FROM ${this.#store.names.fanOutUndone}($1::text, $2::integer, $3::bigint)`,
      [index, this.ttlMs],
    );
    if (row === undefined) throw unknownLedger(mapId, 'fanout-undone');
    return { target: row.target, wakeJob: row.wake_job ?? undefined };
  }

  async snapshot(mapId: string): Promise<LedgerSnapshot | undefined> {
    const [row] = await this.#call<ViewRow>(
      mapId,
      'fanout-snapshot',
      `SELECT * FROM ${this.#store.names.fanOutView}($1::text)`,
      [],
    );
    return row === undefined ? undefined : decodeLedger(row);
  }

  async element(mapId: string, index: number): Promise<ElementView | undefined> {
    const names = this.#store.names;
    // Read only: the map's row, the element's row, and (rolling back) the highest completed element.
    const [row] = await this.#call<{ phase: string; stopped: boolean; status: string | null; target: number }>(
      mapId,
      'fanout-element',
      `SELECT l.phase, l.stopped, e.status::text AS status,
         CASE WHEN l.phase = 'rollback'
              THEN coalesce((SELECT max(c.idx) FROM ${names.fanOutElements} AS c
                             WHERE c.map_id = l.map_id AND c.status = 'c'), -1)
              ELSE -1 END AS target
       FROM ${names.fanOutLedgers} AS l
       LEFT JOIN ${names.fanOutElements} AS e ON e.map_id = l.map_id AND e.idx = $2::integer
       WHERE l.map_id = $1::text AND l.expires_at > now()`,
      [index],
    );
    if (row === undefined) return undefined;
    return { phase: phaseOf(row.phase), stopped: row.stopped, status: statusOfCode(row.status), target: row.target };
  }

  /** Runs one statement with `mapId` as `$1`; an unknown ledger or element is a {@link FanOutError}, as in memory. */
  async #call<R>(mapId: string, operation: string, sql: string, args: readonly unknown[]): Promise<R[]> {
    try {
      return await this.#store.run(operation, async () => (await this.#store.pool.query(sql, [mapId, ...args])).rows);
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === UNKNOWN) throw unknownLedger(mapId, operation);
      throw error;
    }
  }
}

/** A `fanout_view` row as the port's snapshot. */
function decodeLedger(row: ViewRow): LedgerSnapshot {
  return ledgerSnapshot({
    total: row.total,
    next: row.next_index,
    settled: row.settled,
    failed: row.failed,
    stopped: row.stopped,
    phase: row.phase,
    statuses: Array.from(row.codes, statusOfCode),
  });
}
