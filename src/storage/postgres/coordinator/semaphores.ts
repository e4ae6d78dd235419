/**
 * The semaphore of the Postgres coordinator: at most `limit` reentrant leases per key, one per
 * owner, in tables `coord_semaphores` and `coord_semaphore_leases`, through `coord_semaphore_*`.
 *
 * @module
 */
import type {
  HolderInfo,
  SemaphoreAcquireRequest,
  SemaphoreAcquireResult,
  SemaphoreState,
} from '../../../ports/coordinator.js';
import { assertInteger, toNumber, type CoordinationCalls } from './calls.js';

interface AcquireRow {
  readonly acquired: boolean;
  readonly nesting: number | null;
  readonly holders: number;
  readonly lim: number | null;
  readonly retry_after_ms: string | null;
}

interface StoredLease {
  readonly owner: string;
  readonly holder: Partial<HolderInfo> | null;
  readonly nesting: number;
  readonly ttl_ms: number;
}

/** The semaphore calls. Leases expire at their deadline on the database clock. */
export class PostgresSemaphores {
  readonly #calls: CoordinationCalls;

  /** @param calls - The coordinator's SQL calls. */
  constructor(calls: CoordinationCalls) {
    this.#calls = calls;
  }

  /** See `Coordinator.semaphoreAcquire`: one call. @throws RangeError on a bad `ttlMs` (≥ 1) or `limit` (≥ 0). */
  async acquire(request: SemaphoreAcquireRequest): Promise<SemaphoreAcquireResult> {
    assertInteger('ttlMs', request.ttlMs, 1);
    assertInteger('limit', request.limit, 0);
    const row = await this.#calls.one<AcquireRow>('semaphore-acquire', 'semaphore_acquire', [
      request.key,
      request.holder.owner,
      JSON.stringify(request.holder),
      request.limit,
      request.ttlMs,
    ]);
    if (row.acquired) return { acquired: true, nesting: row.nesting ?? 1, holders: row.holders };
    return {
      acquired: false,
      holders: row.holders,
      limit: row.lim ?? request.limit,
      retryAfterMs: toNumber(row.retry_after_ms ?? 0),
    };
  }

  /** See `Coordinator.semaphoreRelease`: one call; the outermost release notifies the key's waiters. */
  async release(key: string, owner: string): Promise<{ readonly released: boolean; readonly nesting: number }> {
    const row = await this.#calls.one<{ released: boolean; nesting: number }>(
      'semaphore-release',
      'semaphore_release',
      [key, owner],
    );
    return { released: row.released, nesting: row.nesting };
  }

  /** See `Coordinator.semaphoreExtend`. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  async extend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertInteger('ttlMs', ttlMs, 1);
    const row = await this.#calls.one<{ coord_semaphore_extend: boolean }>('semaphore-extend', 'semaphore_extend', [
      key,
      owner,
      ttlMs,
    ]);
    return row.coord_semaphore_extend;
  }

  /** See `Coordinator.semaphoreState`: the live leases, and `limit` or else the latest acquire's. */
  async state(key: string, limit?: number): Promise<SemaphoreState> {
    const row = await this.#calls.one<{ lim: number | null; leases: StoredLease[] }>(
      'semaphore-state',
      'semaphore_state',
      [key],
    );
    return {
      key,
      limit: limit ?? row.lim ?? 0,
      holders: row.leases.map((lease) => ({
        holder: toHolder(lease.owner, lease.holder),
        nesting: lease.nesting,
        ttlMs: lease.ttl_ms,
      })),
    };
  }
}

/** A lease's stored holder JSON → the port's shape (the owner column is the truth). */
function toHolder(owner: string, stored: Partial<HolderInfo> | null): HolderInfo {
  return {
    owner,
    ...(typeof stored?.executionId === 'string' ? { executionId: stored.executionId } : {}),
    ...(typeof stored?.reactor === 'string' ? { reactor: stored.reactor } : {}),
    ...(typeof stored?.step === 'string' ? { step: stored.step } : {}),
  };
}
