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
import { forgetOldest } from '../../../ports/bounded-memo.js';
import { assertInteger, LostReply, toNumber, type CoordinationCalls } from './calls.js';

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

/** Leases this process took, by key and owner, as far as it knows: bounded, oldest forgotten first. */
const KNOWN_LIMIT = 10_000;

/**
 * The semaphore calls. Leases expire at their deadline on the database clock. An acquire or a
 * release is counted: when its connection is lost after it was sent, the key's leases, read once
 * Postgres answers, say whether it took effect — compared with the nesting this process last knew
 * of its lease — and only a call that did not is sent again (docs/decisions/132).
 */
export class PostgresSemaphores {
  readonly #calls: CoordinationCalls;
  /** `key \0 owner` → the lease's nesting after this process's last acquire or release of it. */
  readonly #known = new Map<string, number>();

  /** @param calls - The coordinator's SQL calls. */
  constructor(calls: CoordinationCalls) {
    this.#calls = calls;
  }

  /** See `Coordinator.semaphoreAcquire`: one call. @throws RangeError on a bad `ttlMs` (≥ 1) or `limit` (≥ 0). */
  async acquire(request: SemaphoreAcquireRequest): Promise<SemaphoreAcquireResult> {
    assertInteger('ttlMs', request.ttlMs, 1);
    assertInteger('limit', request.limit, 0);
    const { key, holder } = request;
    const memo = `${key}\u0000${holder.owner}`;
    const before = this.#known.get(memo) ?? 0;
    const send = async (): Promise<SemaphoreAcquireResult> => {
      const row = await this.#calls.one<AcquireRow>(
        'semaphore-acquire',
        'semaphore_acquire',
        [key, holder.owner, JSON.stringify(holder), request.limit, request.ttlMs],
        { settles: true },
      );
      if (row.acquired) return { acquired: true, nesting: row.nesting ?? 1, holders: row.holders };
      return {
        acquired: false,
        holders: row.holders,
        limit: row.lim ?? request.limit,
        retryAfterMs: toNumber(row.retry_after_ms ?? 0),
      };
    };
    let result: SemaphoreAcquireResult;
    try {
      result = await send();
    } catch (error) {
      if (!(error instanceof LostReply)) throw error;
      // Taken by the lost call: this owner's lease is one level deeper than this process knew.
      const settle = async (): Promise<SemaphoreAcquireResult | undefined> => {
        const now = await this.state(key, request.limit);
        const mine = now.holders.find((h) => h.holder.owner === holder.owner);
        return mine === undefined || mine.nesting <= before
          ? undefined
          : { acquired: true, nesting: mine.nesting, holders: now.holders.length };
      };
      result = await this.#calls.settleLost(error, settle, send);
    }
    if (result.acquired) this.#remember(memo, result.nesting);
    return result;
  }

  /** See `Coordinator.semaphoreRelease`: one call; the outermost release notifies the key's waiters. */
  async release(key: string, owner: string): Promise<{ readonly released: boolean; readonly nesting: number }> {
    const memo = `${key}\u0000${owner}`;
    const before = this.#known.get(memo);
    const send = async (): Promise<{ readonly released: boolean; readonly nesting: number }> => {
      const row = await this.#calls.one<{ released: boolean; nesting: number }>(
        'semaphore-release',
        'semaphore_release',
        [key, owner],
        { settles: true },
      );
      return { released: row.released, nesting: row.nesting };
    };
    let result: { readonly released: boolean; readonly nesting: number };
    try {
      result = await send();
    } catch (error) {
      if (!(error instanceof LostReply)) throw error;
      // Released by the lost call: this owner's lease is gone, or one level less deep.
      const settle = async (): Promise<{ readonly released: boolean; readonly nesting: number } | undefined> => {
        const now = await this.state(key);
        const mine = now.holders.find((h) => h.holder.owner === owner);
        if (mine === undefined) return { released: true, nesting: 0 };
        return before !== undefined && mine.nesting < before ? { released: true, nesting: mine.nesting } : undefined;
      };
      result = await this.#calls.settleLost(error, settle, send);
    }
    if (result.nesting > 0) this.#remember(memo, result.nesting);
    else this.#known.delete(memo);
    return result;
  }

  /** Notes a lease's nesting, forgetting the oldest beyond {@link KNOWN_LIMIT}. */
  #remember(memo: string, nesting: number): void {
    this.#known.delete(memo);
    this.#known.set(memo, nesting);
    forgetOldest(this.#known, KNOWN_LIMIT);
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
