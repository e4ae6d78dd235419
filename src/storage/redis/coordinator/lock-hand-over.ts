/**
 * A lock released to a waiter of this process (docs/decisions/037, 043): at once on the
 * releaser's still valid lease, recorded in Redis behind it (`lock-transfer`), or through Redis
 * first when this process cannot vouch for the lease.
 *
 * @module
 */
import type { LockAcquireRequest, LockGrant, LockReleaseResult } from '../../../ports/coordinator.js';
import type { HandOffCandidate } from '../handoff.js';
import { monotonic, type HeldLocks } from '../held-locks.js';
import type { ScriptArg } from '../script.js';
import { scripts, type LockTransferReply } from '../scripts.js';
import type { RedisContext } from './context.js';
import { transferAfterOutage } from './lock-outage.js';

/** Hands a lock from its releaser to a waiter of this process. */
export class LockHandOver {
  readonly #context: RedisContext;
  readonly #held: HeldLocks;

  /**
   * @param context - The connection, keys and script runner.
   * @param held - What this process's owners hold.
   */
  constructor(context: RedisContext, held: HeldLocks) {
    this.#context = context;
    this.#held = held;
  }

  /**
   * Hands `key` to a waiter of this process at once, on the releaser's still valid lease, and
   * records it in Redis behind it (docs/decisions/043): the receiver starts without waiting for
   * the round trip; its grant's `confirmed` tells it whether Redis took the hand-over.
   *
   * @param token - The receiver's token, decided in this process (`HeldLocks.nextToken`).
   */
  async now(key: string, owner: string, candidate: HandOffCandidate, token: string): Promise<LockReleaseResult> {
    const { holder, ttlMs } = candidate.request;
    const sentAt = monotonic(); // no later than the send: a safe start for the receiver's own lease
    const args = [owner, holder.owner, ttlMs, holder.executionId ?? '', holder.reactor ?? '', holder.step ?? '', token];
    // The receiver's path to its step (microtasks) runs first; the script goes out one macrotask later,
    // and before the releaser's own bookkeeping (its terminal record).
    const turn = new Promise<void>((resolve) => setImmediate(resolve));
    const confirmed = turn
      .then(() => this.#runTransfer(key, owner, holder.owner, args))
      .then(
        (reply) => reply.handedOver && reply.token === token,
        () => false,
      );
    const leaseLeftMs = this.#held.leaseLeft(key); // the releaser's lease: the receiver's until Redis confirms (decision 063)
    this.#held.handedOver(key, holder.owner, token, ttlMs, sentAt, confirmed);
    candidate.settle({ acquired: true, token, nesting: 1, confirmed, leaseLeftMs });
    await turn;
    return { released: true, nesting: 0, handedOver: true };
  }

  /** Hands `key` from `owner` to a waiter of this process through Redis; a waiter that got nothing retries its acquire. */
  async transfer(
    key: string,
    owner: string,
    to: LockAcquireRequest,
    settle: (grant: LockGrant | undefined) => void,
  ): Promise<LockReleaseResult> {
    const { holder } = to;
    try {
      const sentAt = monotonic();
      const reply = await this.#runTransfer(key, owner, holder.owner, [
        owner,
        holder.owner,
        to.ttlMs,
        holder.executionId ?? '',
        holder.reactor ?? '',
        holder.step ?? '',
      ]);
      if (reply.handedOver) {
        this.#held.acquired(key, holder.owner, reply.token, 1, to.ttlMs, sentAt);
        settle({
          acquired: true,
          token: reply.token,
          nesting: 1,
          leaseLeftMs: Math.max(0, sentAt + to.ttlMs - monotonic()),
        });
        // The receiver's step starts before the releaser's own bookkeeping (its terminal record).
        await new Promise<void>((resolve) => setImmediate(resolve));
        return { released: true, nesting: 0, handedOver: true };
      }
      this.#held.released(key, owner, reply.released, reply.nesting);
      settle(undefined);
      return { released: reply.released, nesting: reply.nesting };
    } catch (error) {
      settle(undefined);
      throw error;
    }
  }

  /** Sends `lock-transfer` from `from` to `to`; a lost reply is settled from the lock. */
  async #runTransfer(key: string, from: string, to: string, args: readonly ScriptArg[]): Promise<LockTransferReply> {
    const keys = [this.#context.keys.lock(key), this.#context.keys.lockFence(key)];
    try {
      return await this.#context.run(scripts.lockTransfer, keys, args);
    } catch (error) {
      return transferAfterOutage({ context: this.#context, held: this.#held, error, key, keys, args }, from, to);
    }
  }
}
