/**
 * Grants of locks by other processes' releases, as they reach this process (docs/decisions/059):
 * `g <pid> <registration> <token>` on a lock channel, or a key found held by this process's
 * placeholder when a subscription is confirmed (docs/decisions/057, 061). A grant taken is handed
 * on at once — to the oldest waiter here, or the key is freed.
 *
 * @module
 */
import { CLAIM_TTL_MS, type GrantBook } from '../grants.js';
import type { HeldLocks } from '../held-locks.js';
import type { WakeChannels } from '../wake-channels.js';
import type { RedisContext } from './context.js';
import type { RedisLocks } from './locks.js';

/** The lock channels listened on, and the grants that arrive on them. */
export class GrantReceiver {
  readonly #context: RedisContext;
  readonly #grants: GrantBook;
  readonly #held: HeldLocks;
  readonly #channels: WakeChannels;
  readonly #locks: RedisLocks;
  /** The lock key of each lock channel listened on: at its subscription's confirmation, only a free key (or a grant) is news. */
  readonly #lockChannelKeys = new Map<string, string>();
  /** Listeners of {@link GrantReceiver.onFreed}. */
  readonly #freed = new Set<(kind: 'lock', key: string) => void>();

  /**
   * @param context - The connection, keys and script runner.
   * @param grants - This process's side of cross-process grants.
   * @param held - What this process's owners hold (a grant is held by the placeholder until handed on).
   * @param channels - The wake-up channels the lock channels are listened on.
   * @param locks - The locks, to read a key at a confirmation and to hand a grant on.
   */
  constructor(context: RedisContext, grants: GrantBook, held: HeldLocks, channels: WakeChannels, locks: RedisLocks) {
    this.#context = context;
    this.#grants = grants;
    this.#held = held;
    this.#channels = channels;
    this.#locks = locks;
  }

  /** Remembers that `channel` is `key`'s lock channel (a watch on a lock listens on it). */
  track(channel: string, key: string): void {
    this.#lockChannelKeys.set(channel, key);
  }

  /** Listens on `key`'s lock channel for as long as a registration may still be answered by a grant. */
  keepListening(key: string): void {
    if (this.#context.closed()) return;
    const channel = this.#context.keys.lockChannel(key);
    this.#lockChannelKeys.set(channel, key);
    this.#channels.keep(channel, this.#grants.windowMs + CLAIM_TTL_MS);
  }

  /** `channel` is no longer listened on: its registrations can no longer be answered here. */
  unlisten(channel: string): void {
    const key = this.#lockChannelKeys.get(channel);
    if (key !== undefined) this.#grants.drop(key);
    this.#lockChannelKeys.delete(channel);
  }

  /** See `Coordinator.onFreed`: a grant nobody here could take freed the key. */
  onFreed(listener: (kind: 'lock', key: string) => void): () => void {
    this.#freed.add(listener);
    return () => this.#freed.delete(listener);
  }

  /**
   * A message on a channel: `g <pid> <registration> <token>` on a lock channel is a grant, and
   * only the named process acts on it (the others' waiters sleep on: the key is not free).
   *
   * @returns whether the message was a grant (a grant wakes no waiter).
   */
  message(channel: string, message: string): boolean {
    if (!message.startsWith('g ')) return false;
    this.#onGrant(channel, message);
    return true;
  }

  /** `g <pid> <registration> <token>` on a lock channel: a grant; only the named process acts on it. */
  #onGrant(channel: string, message: string): void {
    const [, pid, registration = '', token] = message.split(' ');
    const key = this.#lockChannelKeys.get(channel);
    if (pid !== this.#grants.pid || token === undefined || key === undefined || this.#context.closed()) return;
    this.#granted(key, registration, token);
  }

  /**
   * A subscription took effect (first, or again after a reconnect): what was published while it
   * was on its way reached nobody here (docs/decisions/057, 061). A lock channel reads the lock: a
   * free key wakes its watches, a key held by this process's grant placeholder is a grant to take
   * (decision 059); a held one will be heard of at its next release. Other channels wake their
   * watches at once (their callers try again). One-shot `waitForChange` waiters keep their timeout.
   */
  confirmed(channel: string, wakeWatches: () => void): void {
    const lockKey = this.#lockChannelKeys.get(channel);
    if (lockKey === undefined) return wakeWatches();
    this.#locks.state(lockKey).then(
      (state) => {
        if (state === undefined) wakeWatches();
        else if (state.holder.owner === this.#grants.placeholder) this.#granted(lockKey, '', state.token);
      },
      () => wakeWatches(),
    );
  }

  /**
   * A release in another process granted `key` to this process's placeholder (decision 059): it
   * holds the key at nesting 1 until at least its registration's send time + the claim TTL, and
   * hands it on at once — to the oldest waiter here (in memory when that bound allows), or frees it.
   */
  #granted(key: string, registration: string, token: string): void {
    const since = this.#grants.take(key, registration, token);
    if (since === undefined || this.#context.closed()) return; // taken already (seen by its notification and by a read)
    const placeholder = this.#grants.placeholder;
    this.#held.acquired(key, placeholder, token, 1, CLAIM_TTL_MS, since);
    void this.#locks.release(key, placeholder).then(
      (r) => {
        // Nobody here could take it and it is free now: parked executions are woken as after any release.
        if (r.released && r.nesting === 0 && r.handedOver !== true)
          for (const listener of this.#freed) listener('lock', key);
      },
      () => undefined, // a failure leaves the placeholder to its claim TTL
    );
  }
}
