/**
 * Waiting for a change of a primitive on its pub/sub channel: one-shot `waitForChange` and the
 * `watch` registered before a try (docs/decisions/030, 057), which may offer to take a lock at a
 * release by this process (docs/decisions/037).
 *
 * @module
 */
import type { ChangeWatch, LockAcquireRequest, LockGrant, PrimitiveKind } from '../../../ports/coordinator.js';
import type { GrantBook } from '../grants.js';
import type { HandOffs } from '../handoff.js';
import type { WakeChannels } from '../wake-channels.js';
import type { RedisContext } from './context.js';
import type { GrantReceiver } from './grant-receiver.js';

/** What {@link RedisWatches} works with besides the context. */
export interface RedisWatchParts {
  /** The wake-up channels and their subscriber connection. */
  readonly channels: WakeChannels;
  /** Grants from other processes: a watch that offers keeps this process queued for them (docs/decisions/059). */
  readonly grants: GrantBook;
  /** The lock channels listened on. */
  readonly receiver: GrantReceiver;
  /** Waiters of this process offering to take a lock at its release (docs/decisions/037). */
  readonly handOffs: HandOffs;
  /** Whether a released lock may go straight to a waiter of this process. */
  readonly lockHandOff: boolean;
}

/** The waits on the primitives' channels. */
export class RedisWatches {
  readonly #context: RedisContext;
  readonly #channels: WakeChannels;
  readonly #grants: GrantBook;
  readonly #receiver: GrantReceiver;
  readonly #handOffs: HandOffs;
  readonly #lockHandOff: boolean;

  /**
   * @param context - The connection, keys and script runner.
   * @param parts - The channels, grants and hand-over offers.
   */
  constructor(context: RedisContext, parts: RedisWatchParts) {
    this.#context = context;
    this.#channels = parts.channels;
    this.#grants = parts.grants;
    this.#receiver = parts.receiver;
    this.#handOffs = parts.handOffs;
    this.#lockHandOff = parts.lockHandOff;
  }

  /** See `Coordinator.waitForChange`: a message on the channel, the timeout or the signal, whichever comes first. */
  waitForChange(kind: PrimitiveKind, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#context.closed() || signal?.aborted === true) return Promise.resolve();
    const channel = this.#channel(kind, key);
    return new Promise<void>((resolve) => {
      const done = (): boolean => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.#channels.remove(channel, done);
        resolve();
        return true;
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      signal?.addEventListener('abort', done, { once: true });
      this.#channels.add(channel, done, { wakeOne: wakesOne(kind) });
    });
  }

  /**
   * Registers a waiter now; its timer starts at `wait` (a release in between is kept, not lost).
   * With an `offer` (a lock), each `wait` also offers to take the key at a release by this process.
   */
  watch(kind: PrimitiveKind, key: string, offer?: LockAcquireRequest): ChangeWatch {
    const channel = this.#channel(kind, key);
    let changed = this.#context.closed();
    let wake: (() => void) | undefined;
    // The listener stays registered until `close` (a caller's next watch is registered before it closes
    // this one), so the channel stays subscribed between tries instead of flapping (docs/decisions/057).
    const listener = (): boolean => {
      if (changed) return false;
      changed = true;
      wake?.();
      return true;
    };
    if (kind === 'lock') this.#receiver.track(channel, key);
    if (!changed) this.#channels.add(channel, listener, { wakeOne: wakesOne(kind), watch: true });
    // While a watch offers, this process has a waiter that can take a grant from another process (decision 059).
    const stopOffering = offer !== undefined && kind === 'lock' ? this.#grants.offer(key) : () => undefined;
    return {
      wait: (timeoutMs) =>
        changed
          ? Promise.resolve(undefined)
          : new Promise<LockGrant | undefined>((resolve) => {
              let selected = false;
              const settle = (grant: LockGrant | undefined): void => {
                clearTimeout(timer);
                wake = undefined;
                withdraw();
                resolve(grant);
              };
              // Once a release picked this offer, only its outcome ends the wait (a grant is never dropped).
              const done = (): void => {
                if (!selected) settle(undefined);
              };
              const timer = setTimeout(done, Math.max(0, timeoutMs));
              wake = done;
              const withdraw =
                offer === undefined || this.#context.closed() || !this.#lockHandOff
                  ? () => undefined
                  : this.#handOffs.offer(offer.key, { request: offer, select: () => (selected = true), settle });
            }),
      close: () => {
        stopOffering();
        this.#channels.remove(channel, listener);
      },
    };
  }

  #channel(kind: PrimitiveKind, key: string): string {
    const { keys } = this.#context;
    switch (kind) {
      case 'lock':
        return keys.lockChannel(key);
      case 'semaphore':
        return keys.semaphoreChannel(key);
      case 'ordered':
        return keys.orderedChannel(key);
      case 'rate':
        return keys.rateChannel(key);
      case 'period':
        return keys.periodChannel(key);
    }
  }
}

/** Locks and semaphores: a release frees one place, so it wakes one waiter per process (docs/decisions/030). */
function wakesOne(kind: PrimitiveKind): boolean {
  return kind === 'lock' || kind === 'semaphore';
}
