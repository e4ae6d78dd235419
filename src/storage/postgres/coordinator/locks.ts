/**
 * The exclusive lock of the Postgres coordinator: reentrant holds with fencing tokens, in table
 * `coord_locks`, through `coord_lock_*`.
 *
 * @module
 */
import type {
  HolderInfo,
  LockAcquireRequest,
  LockAcquireResult,
  LockReleaseResult,
  LockState,
} from '../../../ports/coordinator.js';
import { assertInteger, toNumber, type CoordinationCalls } from './calls.js';

interface AcquireRow {
  readonly acquired: boolean;
  readonly token: string | null;
  readonly nesting: number | null;
  readonly holder_owner: string | null;
  readonly holder_execution_id: string | null;
  readonly holder_reactor: string | null;
  readonly holder_step: string | null;
  readonly ttl_ms: string | null;
}

interface StateRow {
  readonly owner: string;
  readonly execution_id: string | null;
  readonly reactor: string | null;
  readonly step: string | null;
  readonly nesting: number;
  readonly token: string;
  readonly ttl_ms: string;
}

/**
 * The lock calls. A hold expires at its deadline on the database clock; the fencing token is
 * `greatest(last + 1, clock µs)`, kept with the key's row so it grows across holders and
 * restarts.
 */
export class PostgresLocks {
  readonly #calls: CoordinationCalls;

  /** @param calls - The coordinator's SQL calls. */
  constructor(calls: CoordinationCalls) {
    this.#calls = calls;
  }

  /** See `Coordinator.lockAcquire`: one call. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  async acquire(request: LockAcquireRequest): Promise<LockAcquireResult> {
    assertInteger('ttlMs', request.ttlMs, 1);
    const { holder } = request;
    const row = await this.#calls.one<AcquireRow>('lock-acquire', 'lock_acquire', [
      request.key,
      holder.owner,
      holder.executionId ?? '',
      holder.reactor ?? '',
      holder.step ?? '',
      request.ttlMs,
      request.unfenced === true,
    ]);
    if (row.acquired) return { acquired: true, token: row.token ?? '0', nesting: row.nesting ?? 1 };
    return {
      acquired: false,
      holder: toHolder(row.holder_owner ?? '', row.holder_execution_id, row.holder_reactor, row.holder_step),
      ttlMs: toNumber(row.ttl_ms),
    };
  }

  /** See `Coordinator.lockRelease`: one call; the outermost release notifies the key's waiters. */
  async release(key: string, owner: string): Promise<LockReleaseResult> {
    const row = await this.#calls.one<{ released: boolean; nesting: number }>('lock-release', 'lock_release', [
      key,
      owner,
    ]);
    return { released: row.released, nesting: row.nesting };
  }

  /** See `Coordinator.lockExtend`. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  async extend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertInteger('ttlMs', ttlMs, 1);
    const row = await this.#calls.one<{ coord_lock_extend: boolean }>('lock-extend', 'lock_extend', [
      key,
      owner,
      ttlMs,
    ]);
    return row.coord_lock_extend;
  }

  /** See `Coordinator.lockState`: the live hold, `undefined` when free. */
  async state(key: string): Promise<LockState | undefined> {
    const [row] = await this.#calls.rows<StateRow>('lock-state', 'lock_state', [key]);
    if (row === undefined) return undefined;
    return {
      key,
      holder: toHolder(row.owner, row.execution_id, row.reactor, row.step),
      nesting: row.nesting,
      token: row.token,
      ttlMs: toNumber(row.ttl_ms),
    };
  }
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
