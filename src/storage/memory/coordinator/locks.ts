/**
 * The exclusive lock of the memory coordinator: reentrant holds with fencing tokens.
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
import { assertInteger, type PrimitiveContext } from './context.js';
import type { Sweepable } from './sweep.js';

interface LockHold {
  readonly holder: HolderInfo;
  readonly token: string;
  nesting: number;
  expiresAt: number;
}

interface LockEntry {
  /** The last fencing token handed out for this key (µs scale). Outlives the hold. */
  lastToken: number;
  hold: LockHold | undefined;
}

/** How long a free key's last fencing token is remembered (it only matters while ≥ now in µs). */
const TOKEN_MEMORY_MS = 24 * 60 * 60 * 1000;

/**
 * The lock entries, one per key. A hold expires lazily at its deadline; the fencing token is
 * `max(last + 1, now × 1000)` as a decimal string, so it grows across holders.
 */
export class MemoryLocks implements Sweepable {
  readonly #context: PrimitiveContext;
  readonly #locks = new Map<string, LockEntry>();

  /** @param context - The shared tick and notifier. */
  constructor(context: PrimitiveContext) {
    this.#context = context;
  }

  /** See `Coordinator.lockAcquire`. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  acquire(request: LockAcquireRequest): LockAcquireResult {
    assertInteger('ttlMs', request.ttlMs, 1);
    const now = this.#context.tick();
    const entry = this.#locks.get(request.key) ?? { lastToken: 0, hold: undefined };
    this.#locks.set(request.key, entry);
    const hold = liveHold(entry, now);
    if (hold === undefined) {
      const token = Math.max(entry.lastToken + 1, now * 1000);
      entry.lastToken = token;
      entry.hold = { holder: request.holder, token: String(token), nesting: 1, expiresAt: now + request.ttlMs };
      return { acquired: true, token: String(token), nesting: 1 };
    }
    if (hold.holder.owner === request.holder.owner) {
      hold.nesting += 1;
      hold.expiresAt = Math.max(hold.expiresAt, now + request.ttlMs);
      return { acquired: true, token: hold.token, nesting: hold.nesting };
    }
    return { acquired: false, holder: hold.holder, ttlMs: hold.expiresAt - now };
  }

  /** See `Coordinator.lockRelease`; the outermost release notifies the key's waiters. */
  release(key: string, owner: string): LockReleaseResult {
    const now = this.#context.tick();
    const entry = this.#locks.get(key);
    const hold = entry === undefined ? undefined : liveHold(entry, now);
    if (entry === undefined || hold === undefined || hold.holder.owner !== owner)
      return { released: false, nesting: 0 };
    hold.nesting -= 1;
    if (hold.nesting > 0) return { released: true, nesting: hold.nesting };
    entry.hold = undefined;
    this.#context.notify('lock', key);
    return { released: true, nesting: 0 };
  }

  /** See `Coordinator.lockExtend`. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  extend(key: string, owner: string, ttlMs: number): boolean {
    assertInteger('ttlMs', ttlMs, 1);
    const now = this.#context.tick();
    const entry = this.#locks.get(key);
    const hold = entry === undefined ? undefined : liveHold(entry, now);
    if (hold === undefined || hold.holder.owner !== owner) return false;
    hold.expiresAt = now + ttlMs;
    return true;
  }

  /** See `Coordinator.lockState`: the live hold, `undefined` when free. */
  state(key: string): LockState | undefined {
    const now = this.#context.tick();
    const entry = this.#locks.get(key);
    const hold = entry === undefined ? undefined : liveHold(entry, now);
    if (hold === undefined) return undefined;
    return { key, holder: hold.holder, nesting: hold.nesting, token: hold.token, ttlMs: hold.expiresAt - now };
  }

  /** The keys held now (for the inspector). */
  liveKeys(): string[] {
    const now = this.#context.tick();
    return [...this.#locks].filter(([, entry]) => liveHold(entry, now) !== undefined).map(([key]) => key);
  }

  /** Forgets free keys whose last token is a day older than the clock. */
  sweep(now: number): void {
    for (const [key, entry] of this.#locks) {
      if (liveHold(entry, now) === undefined && entry.lastToken < (now - TOKEN_MEMORY_MS) * 1000)
        this.#locks.delete(key);
    }
  }
}

function liveHold(entry: LockEntry, now: number): LockHold | undefined {
  if (entry.hold !== undefined && entry.hold.expiresAt <= now) entry.hold = undefined;
  return entry.hold;
}
