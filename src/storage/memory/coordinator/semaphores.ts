/**
 * The semaphore of the memory coordinator: at most `limit` reentrant leases per key, one per owner.
 *
 * @module
 */
import type {
  HolderInfo,
  SemaphoreAcquireRequest,
  SemaphoreAcquireResult,
  SemaphoreState,
} from '../../../ports/coordinator.js';
import { assertInteger, type PrimitiveContext } from './context.js';
import type { Sweepable } from './sweep.js';

interface Lease {
  readonly holder: HolderInfo;
  nesting: number;
  expiresAt: number;
}

interface SemaphoreEntry {
  /** The limit of the latest acquire, reported by `semaphoreState` when none is given. */
  limit: number;
  readonly leases: Map<string, Lease>;
}

/** The semaphore entries, one per key. Leases expire lazily at their deadline. */
export class MemorySemaphores implements Sweepable {
  readonly #context: PrimitiveContext;
  readonly #semaphores = new Map<string, SemaphoreEntry>();

  /** @param context - The shared tick and notifier. */
  constructor(context: PrimitiveContext) {
    this.#context = context;
  }

  /** See `Coordinator.semaphoreAcquire`. @throws RangeError on a bad `ttlMs` (≥ 1) or `limit` (≥ 0). */
  acquire(request: SemaphoreAcquireRequest): SemaphoreAcquireResult {
    assertInteger('ttlMs', request.ttlMs, 1);
    assertInteger('limit', request.limit, 0);
    const now = this.#context.tick();
    const entry = this.#semaphores.get(request.key) ?? { limit: request.limit, leases: new Map<string, Lease>() };
    this.#semaphores.set(request.key, entry);
    entry.limit = request.limit;
    pruneLeases(entry, now);
    const own = entry.leases.get(request.holder.owner);
    if (own !== undefined) {
      own.nesting += 1;
      own.expiresAt = Math.max(own.expiresAt, now + request.ttlMs);
      return { acquired: true, nesting: own.nesting, holders: entry.leases.size };
    }
    if (entry.leases.size < request.limit) {
      entry.leases.set(request.holder.owner, { holder: request.holder, nesting: 1, expiresAt: now + request.ttlMs });
      return { acquired: true, nesting: 1, holders: entry.leases.size };
    }
    let earliest = Number.POSITIVE_INFINITY;
    for (const lease of entry.leases.values()) earliest = Math.min(earliest, lease.expiresAt);
    // With no lease at all (a limit of 0) no expiry can help: nothing to wait for.
    const retryAfterMs = Number.isFinite(earliest) ? earliest - now : 0;
    return { acquired: false, holders: entry.leases.size, limit: request.limit, retryAfterMs };
  }

  /** See `Coordinator.semaphoreRelease`; the outermost release notifies the key's waiters. */
  release(key: string, owner: string): { readonly released: boolean; readonly nesting: number } {
    const now = this.#context.tick();
    const entry = this.#semaphores.get(key);
    if (entry === undefined) return { released: false, nesting: 0 };
    pruneLeases(entry, now);
    const lease = entry.leases.get(owner);
    if (lease === undefined) return { released: false, nesting: 0 };
    lease.nesting -= 1;
    if (lease.nesting > 0) return { released: true, nesting: lease.nesting };
    entry.leases.delete(owner);
    this.#context.notify('semaphore', key);
    return { released: true, nesting: 0 };
  }

  /** See `Coordinator.semaphoreExtend`. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  extend(key: string, owner: string, ttlMs: number): boolean {
    assertInteger('ttlMs', ttlMs, 1);
    const now = this.#context.tick();
    const entry = this.#semaphores.get(key);
    if (entry === undefined) return false;
    pruneLeases(entry, now);
    const lease = entry.leases.get(owner);
    if (lease === undefined) return false;
    lease.expiresAt = now + ttlMs;
    return true;
  }

  /** See `Coordinator.semaphoreState`: the live leases, and `limit` or else the latest acquire's. */
  state(key: string, limit?: number): SemaphoreState {
    const now = this.#context.tick();
    const entry = this.#semaphores.get(key);
    if (entry === undefined) return { key, limit: limit ?? 0, holders: [] };
    pruneLeases(entry, now);
    const holders = [...entry.leases.values()].map((lease) => ({
      holder: lease.holder,
      nesting: lease.nesting,
      ttlMs: lease.expiresAt - now,
    }));
    return { key, limit: limit ?? entry.limit, holders };
  }

  /** The keys with at least one live lease (for the inspector). */
  liveKeys(): string[] {
    const now = this.#context.tick();
    return [...this.#semaphores]
      .filter(([, entry]) => (pruneLeases(entry, now), entry.leases.size > 0))
      .map(([key]) => key);
  }

  /** Drops expired leases, and keys left with none. */
  sweep(now: number): void {
    for (const [key, entry] of this.#semaphores) {
      pruneLeases(entry, now);
      if (entry.leases.size === 0) this.#semaphores.delete(key);
    }
  }
}

function pruneLeases(entry: SemaphoreEntry, now: number): void {
  for (const [owner, lease] of entry.leases) if (lease.expiresAt <= now) entry.leases.delete(owner);
}
