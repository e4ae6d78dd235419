/**
 * The wake-up channels of one Redis coordinator: lazily created subscriber connections, the
 * waiters registered per channel, and the bookkeeping that keeps a channel subscribed while
 * anybody needs it (docs/decisions/030, 057, 059, 061).
 *
 * - A channel is subscribed when its first waiter arrives or when it is kept (a registration for
 *   a grant may be answered on it), and unsubscribed when neither is left.
 * - A plain message wakes the channel's waiters: every one, or on a wake-one channel (locks,
 *   semaphores) the oldest that did not know yet.
 * - When a subscription takes effect (first, or again after the connection reconnected or was
 *   replaced), the owner is told, with a function that wakes the watches registered on it: what
 *   was published while the subscription was on its way reached nobody here.
 * - Where each channel is subscribed is a {@link ChannelRouter}'s (on a cluster, on the node that
 *   serves its key, decision 137); the connection and the confirmation of each channel are a
 *   `ChannelSubscriber`'s
 *   (decision 112): from the connection's loss until each channel's subscription is answered
 *   again, the channels count as not confirmed ({@link WakeChannels.health}, for readiness
 *   checks), and past a bound the wake-ups are degraded.
 *
 * @module
 */
import type { Redis } from 'ioredis';
import type { RedisConnection } from './connection.js';
import type { ChannelSubscriberOptions } from './channel-subscriber.js';
import { ChannelRouter } from './channel-router.js';
import type { SubscriptionHealth } from './subscription-health.js';

/** A waiter's wake-up; returns whether it was news to the waiter (a watch already woken says no). */
export type Waiter = () => boolean;

/** What the owner of the channels decides. */
export interface WakeChannelHooks {
  /** A message for the owner (a grant) rather than a wake-up: returns true when it took it. */
  readonly onMessage: (channel: string, message: string) => boolean;
  /** The subscription to `channel` took effect; `wakeWatches` wakes the watches on it (while it is still this subscription). */
  readonly onConfirmed: (channel: string, wakeWatches: () => void) => void;
  /** `channel` is no longer listened to. */
  readonly onUnlisten: (channel: string) => void;
  /** The wake-ups became degraded (a subscription unconfirmed past the bound), or recovered. */
  readonly onDegraded?: (degraded: boolean) => void;
}

/** See the module comment. */
export class WakeChannels {
  readonly #hooks: WakeChannelHooks;
  readonly #subscriber: ChannelRouter;
  readonly #waiters = new Map<string, Set<Waiter>>();
  /** The waiters that are watches (told about a change at their subscription's confirmation). */
  readonly #watches = new WeakSet<Waiter>();
  /** Channels of locks and semaphores: a release frees one place, so it wakes one waiter here (decision 030). */
  readonly #wakeOne = new Set<string>();
  /** Channels kept subscribed without a waiter (their stop timers). */
  readonly #kept = new Map<string, NodeJS.Timeout>();
  #closed = false;

  /** `redis`: the command connection; the subscriber is made from it. */
  constructor(redis: RedisConnection, hooks: WakeChannelHooks, options: ChannelSubscriberOptions = {}) {
    this.#hooks = hooks;
    this.#subscriber = new ChannelRouter(
      redis,
      {
        kind: 'wake-up',
        onMessage: (channel, message) => this.#message(channel, message),
        onConfirmed: (channel, token) =>
          hooks.onConfirmed(channel, () => {
            if (this.#subscriber.confirmedToken(channel) !== token) return;
            for (const wake of [...(this.#waiters.get(channel) ?? [])]) if (this.#watches.has(wake)) wake();
          }),
        ...(hooks.onDegraded === undefined ? {} : { onDegraded: hooks.onDegraded }),
      },
      options,
    );
  }

  /** Registers `waiter` on `channel` (subscribing it if needed). `watch`: it is told at the subscription's confirmation. */
  add(channel: string, waiter: Waiter, options: { readonly wakeOne: boolean; readonly watch?: boolean }): void {
    if (options.wakeOne) this.#wakeOne.add(channel);
    if (options.watch === true) this.#watches.add(waiter);
    let waiters = this.#waiters.get(channel);
    if (waiters === undefined) {
      waiters = new Set<Waiter>();
      this.#waiters.set(channel, waiters);
      this.#subscriber.add(channel);
    }
    waiters.add(waiter);
  }

  /** Removes `waiter`; the channel is unsubscribed once nothing needs it. */
  remove(channel: string, waiter: Waiter): void {
    const waiters = this.#waiters.get(channel);
    if (waiters === undefined || !waiters.delete(waiter) || waiters.size > 0) return;
    this.#waiters.delete(channel);
    this.#wakeOne.delete(channel);
    this.#unlisten(channel);
  }

  /** Keeps `channel` subscribed for `ms` from now (a later call extends it). */
  keep(channel: string, ms: number): void {
    if (this.#closed) return;
    clearTimeout(this.#kept.get(channel));
    const timer = setTimeout(() => {
      this.#kept.delete(channel);
      this.#unlisten(channel);
    }, ms);
    timer.unref();
    this.#kept.set(channel, timer);
    this.#subscriber.add(channel);
  }

  /** Whether the channels listened on are subscribed and confirmed (see {@link ChannelRouter.health}). */
  health(): SubscriptionHealth {
    return this.#subscriber.health();
  }

  /** Wakes every waiter, stops the timers; returns the subscriber connections to quit. */
  close(): Redis[] {
    this.#closed = true;
    for (const waiters of [...this.#waiters.values()]) for (const wake of [...waiters]) wake();
    for (const timer of this.#kept.values()) clearTimeout(timer);
    this.#kept.clear();
    return this.#subscriber.close();
  }

  #unlisten(channel: string): void {
    if (this.#waiters.has(channel) || this.#kept.has(channel) || !this.#subscriber.delete(channel)) return;
    this.#hooks.onUnlisten(channel);
  }

  #message(channel: string, message: string): void {
    if (this.#hooks.onMessage(channel, message)) return;
    const waiters = [...(this.#waiters.get(channel) ?? [])];
    // The oldest waiter of a lock or semaphore that did not know yet retries; the others stay asleep (no thundering herd).
    if (!this.#wakeOne.has(channel)) for (const wake of waiters) wake();
    else for (const wake of waiters) if (wake()) break;
  }
}
