/**
 * What this process knows of the locks its owners hold (docs/decisions/043): per key, the owner,
 * its fencing token, the nesting Redis last reported, until when the lease is surely still in
 * Redis on this process's monotonic clock (the *send* time of the command that set it, plus its
 * TTL: Redis started the TTL after that), the commands of that owner still in flight, and the
 * hand-over still in flight. A release hands a key over in memory only on what this knows.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';

/** A lock this process's owner holds, as far as this process knows. */
interface HeldLock {
  owner: string;
  token: string;
  nesting: number;
  ttlMs: number;
  /** Monotonic ms until which the lease is surely still held in Redis. */
  validUntil: number;
  /** Commands of `owner` on this key sent and not answered yet. */
  inflight: number;
  /** A hand-over to `owner` not confirmed by Redis yet: later commands on the key wait for it. */
  pending: Promise<boolean> | undefined;
}

/** Monotonic milliseconds of this process. */
export const monotonic = (): number => performance.now();

/** The locks held by owners of this process. */
export class HeldLocks {
  readonly #held = new Map<string, HeldLock>();

  /** The hand-over to `owner` in flight on `key`, if any: the owner's commands on the key wait for it, so they reach Redis after it. */
  pending(key: string, owner: string): Promise<boolean> | undefined {
    const held = this.#held.get(key);
    return held?.owner === owner ? held.pending : undefined;
  }

  /** The hand-over in flight on `key` to whichever owner: a read of the key waits for it. */
  pendingAny(key: string): Promise<boolean> | undefined {
    return this.#held.get(key)?.pending;
  }

  /** Counts a command of `owner` on `key` in flight (its reply may change the nesting); returns its end. */
  begin(key: string, owner: string): () => void {
    const held = this.#held.get(key);
    if (held?.owner !== owner) return () => undefined;
    held.inflight++;
    return () => held.inflight--;
  }

  /** An acquire (or re-entry) of `owner` sent at `sentAt` succeeded. */
  acquired(key: string, owner: string, token: string, nesting: number, ttlMs: number, sentAt: number): void {
    const held = this.#held.get(key);
    if (held?.owner === owner) {
      held.nesting = nesting;
      held.validUntil = Math.max(held.validUntil, sentAt + ttlMs);
      return;
    }
    this.#held.set(key, { owner, token, nesting, ttlMs, validUntil: sentAt + ttlMs, inflight: 0, pending: undefined });
  }

  /** An extend of `owner` sent at `sentAt` answered `ok`. */
  extended(key: string, owner: string, ok: boolean, ttlMs: number, sentAt: number): void {
    const held = this.#held.get(key);
    if (held?.owner !== owner) return;
    if (ok) held.validUntil = Math.max(held.validUntil, sentAt + ttlMs);
    else this.#held.delete(key);
  }

  /** A release of `owner` answered: `nesting` left (0: free), or `released: false` (it did not hold the key). */
  released(key: string, owner: string, released: boolean, nesting: number): void {
    const held = this.#held.get(key);
    if (held?.owner !== owner) return;
    if (!released || nesting === 0) this.#held.delete(key);
    else held.nesting = nesting;
  }

  /**
   * The key's new fencing token when `owner` may hand it over in memory now: it holds the key at
   * nesting 1 with nothing of its own in flight, and its lease stays valid for more than half
   * its TTL — the hand-over script lands long before it could lapse. Otherwise `undefined`.
   */
  nextToken(key: string, owner: string): string | undefined {
    const held = this.#held.get(key);
    if (held?.owner !== owner || held.nesting !== 1 || held.inflight > 0) return undefined;
    if (held.validUntil - monotonic() <= held.ttlMs / 2) return undefined;
    return (BigInt(held.token) + 1n).toString();
  }

  /** The nesting Redis last reported for `owner` on `key` (0 when this process knows of no hold): what a counted call whose reply was lost is judged against. */
  nesting(key: string, owner: string): number {
    const held = this.#held.get(key);
    return held?.owner === owner ? held.nesting : 0;
  }

  /** How long `key`'s lease surely stays in Redis from now, as far as this process knows (0 when unknown). */
  leaseLeft(key: string): number {
    const held = this.#held.get(key);
    return held === undefined ? 0 : Math.max(0, held.validUntil - monotonic());
  }

  /**
   * Records an in-memory hand-over of `key` to `to` with `token`: until `confirmed` settles, the
   * receiver relies on the releaser's lease (it inherits its validity); then on its own (`sentAt + ttlMs`).
   */
  handedOver(key: string, to: string, token: string, ttlMs: number, sentAt: number, confirmed: Promise<boolean>): void {
    const from = this.#held.get(key);
    const held: HeldLock = {
      owner: to,
      token,
      nesting: 1,
      ttlMs,
      validUntil: from?.validUntil ?? 0,
      inflight: 0,
      pending: confirmed,
    };
    this.#held.set(key, held);
    void confirmed.then((ok) => {
      if (this.#held.get(key) !== held) return;
      held.pending = undefined;
      if (ok) held.validUntil = Math.max(held.validUntil, sentAt + ttlMs);
      else this.#held.delete(key);
    });
  }
}
