/**
 * The exclusive lock of the Redis coordinator: acquire, release, extend and read (`lock-*`
 * scripts). A release goes to a waiter of this process when one offers (`lock-hand-over.ts`),
 * else to the process queued first for a grant, else frees the key (docs/decisions/037, 059).
 *
 * @module
 */
import type {
  LockAcquireRequest,
  LockAcquireResult,
  LockReleaseResult,
  LockState,
} from '../../../ports/coordinator.js';
import { CLAIM_TTL_MS, GRANT_PLACEHOLDER, type GrantBook } from '../grants.js';
import type { HandOffs } from '../handoff.js';
import { monotonic, type HeldLocks } from '../held-locks.js';
import { scripts, type LockAcquireReply, type LockReleaseReply } from '../scripts.js';
import { assertPositiveInteger, type RedisContext } from './context.js';
import { toHolder } from './holder.js';
import { LockHandOver } from './lock-hand-over.js';
import { acquireAfterOutage, releaseAfterOutage } from './lock-outage.js';

/** What {@link RedisLocks} works with besides the context: this process's side of holds, hand-overs and grants. */
export interface RedisLockParts {
  /** What this process knows of the locks its owners hold, for in-memory hand-overs (docs/decisions/043). */
  readonly held: HeldLocks;
  /** Waiters of this process offering to take a lock at its release (docs/decisions/037). */
  readonly handOffs: HandOffs;
  /** Grants from other processes (docs/decisions/059). */
  readonly grants: GrantBook;
  /** Listens on `key`'s lock channel for as long as a registration may still be answered by a grant. */
  readonly keepListening: (key: string) => void;
}

/** The lock transitions. */
export class RedisLocks {
  readonly #context: RedisContext;
  readonly #held: HeldLocks;
  readonly #handOffs: HandOffs;
  readonly #grants: GrantBook;
  readonly #keepListening: (key: string) => void;
  readonly #handOver: LockHandOver;

  /**
   * @param context - The connection, keys and script runner.
   * @param parts - This process's holds, hand-over offers and grants.
   */
  constructor(context: RedisContext, parts: RedisLockParts) {
    this.#context = context;
    this.#held = parts.held;
    this.#handOffs = parts.handOffs;
    this.#grants = parts.grants;
    this.#keepListening = parts.keepListening;
    this.#handOver = new LockHandOver(context, parts.held);
  }

  /** See `Coordinator.lockAcquire`. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  async acquire(request: LockAcquireRequest): Promise<LockAcquireResult> {
    assertPositiveInteger('ttlMs', request.ttlMs);
    const { holder, key } = request;
    const pending = this.#held.pending(key, holder.owner);
    if (pending !== undefined) await pending;
    const end = this.#held.begin(key, holder.owner);
    const sentAt = monotonic();
    // A refused caller that waits here queues this process for a grant by another process's release (decision 059).
    const registration = request.waits === true || this.#grants.offering(key) ? this.#grants.register(key, sentAt) : '';
    const args = [
      holder.owner,
      request.ttlMs,
      holder.executionId ?? '',
      holder.reactor ?? '',
      holder.step ?? '',
      this.#grants.pid,
      registration,
      this.#grants.windowMs,
      request.unfenced === true ? '1' : '',
    ];
    const lockKeys = [this.#context.keys.lock(key), this.#context.keys.lockFence(key)];
    let reply: LockAcquireReply;
    try {
      reply = await this.#context.run(scripts.lockAcquire, lockKeys, args);
    } catch (error) {
      reply = await acquireAfterOutage(
        { context: this.#context, held: this.#held, error, key, keys: lockKeys, args },
        holder.owner,
      );
    } finally {
      end();
    }
    if (reply.acquired || !reply.registered) this.#grants.forget(registration);
    else this.#keepListening(key);
    if (reply.acquired) {
      this.#held.acquired(key, holder.owner, reply.token, reply.nesting, request.ttlMs, sentAt);
      return reply;
    }
    return { acquired: false, holder: toHolder(reply.holder), ttlMs: reply.ttlMs };
  }

  /** See `Coordinator.lockRelease`: to a waiter of this process when one offers, else through Redis. */
  async release(key: string, owner: string): Promise<LockReleaseResult> {
    const pending = this.#held.pending(key, owner);
    if (pending !== undefined) await pending;
    const candidate = this.#context.closed() ? undefined : this.#handOffs.take(key);
    if (candidate === undefined) return this.#release(key, owner);
    const token = this.#held.nextToken(key, owner);
    if (token !== undefined) return this.#handOver.now(key, owner, candidate, token);
    return this.#handOver.transfer(key, owner, candidate.request, candidate.settle);
  }

  /**
   * A plain release: frees the key, or grants it to the process queued first for it; with waiters
   * of its own still offering, this process queues up again behind the others (decision 059).
   */
  async #release(key: string, owner: string): Promise<LockReleaseResult> {
    const end = this.#held.begin(key, owner);
    const requeue = this.#grants.offering(key) ? this.#grants.register(key, monotonic()) : '';
    const args = [
      owner,
      this.#context.keys.lockChannel(key),
      this.#grants.pid,
      CLAIM_TTL_MS,
      GRANT_PLACEHOLDER,
      requeue,
      this.#grants.windowMs,
    ];
    const lockKeys = [this.#context.keys.lock(key), this.#context.keys.lockFence(key)];
    let reply: LockReleaseReply;
    try {
      reply = await this.#context.run(scripts.lockRelease, lockKeys, args);
    } catch (error) {
      reply = await releaseAfterOutage(
        { context: this.#context, held: this.#held, error, key, keys: lockKeys, args },
        owner,
      );
    } finally {
      end();
    }
    this.#held.released(key, owner, reply.released, reply.nesting);
    if (reply.requeued === true) this.#keepListening(key);
    else this.#grants.forget(requeue);
    return reply.granted === undefined
      ? { released: reply.released, nesting: reply.nesting }
      : { released: true, nesting: 0, handedOver: true };
  }

  /** See `Coordinator.lockExtend`. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  async extend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertPositiveInteger('ttlMs', ttlMs);
    const pending = this.#held.pending(key, owner);
    if (pending !== undefined) await pending;
    const end = this.#held.begin(key, owner);
    const sentAt = monotonic();
    const ok = await this.#context.run(scripts.lockExtend, [this.#context.keys.lock(key)], [owner, ttlMs]).finally(end);
    this.#held.extended(key, owner, ok, ttlMs, sentAt);
    return ok;
  }

  /** See `Coordinator.lockState`: the hold, `undefined` when free. */
  async state(key: string): Promise<LockState | undefined> {
    // A hand-over of this process not recorded in Redis yet is read as done (this process reads its own writes).
    const pending = this.#held.pendingAny(key);
    if (pending !== undefined) await pending;
    const reply = await this.#context.run(scripts.lockState, [this.#context.keys.lock(key)], []);
    if (reply === undefined) return undefined;
    return { key, holder: toHolder(reply.holder), nesting: reply.nesting, token: reply.token, ttlMs: reply.ttlMs };
  }
}
