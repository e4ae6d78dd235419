/**
 * The wake-up channels of one Redis coordinator: a lazily created subscriber connection, the
 * waiters registered per channel, and the bookkeeping that keeps a channel subscribed while
 * anybody needs it (docs/decisions/030, 057, 059, 061).
 *
 * - A channel is subscribed when its first waiter arrives or when it is kept (a registration for
 *   a grant may be answered on it), and unsubscribed when neither is left.
 * - A plain message wakes the channel's waiters: every one, or on a wake-one channel (locks,
 *   semaphores) the oldest that did not know yet.
 * - When a subscription takes effect (first, or again after the connection reconnected), the
 *   owner is told, with a function that wakes the watches registered on it: what was published
 *   while the subscription was on its way reached nobody here.
 * - From the connection's loss until each channel's subscription is answered again, the
 *   channels count as not confirmed ({@link WakeChannels.health}, for readiness checks).
 *
 * @module
 */
import type { Redis } from 'ioredis';
import { subscriberOf, type RedisConnection } from './connection.js';
import { afterReconnect } from './cancel-channel.js';
import { RESUBSCRIBE_RETRY_MS, subscriptionHealth, type SubscriptionHealth } from './subscription-health.js';

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
}

/** See the module comment. */
export class WakeChannels {
  readonly #redis: RedisConnection;
  readonly #hooks: WakeChannelHooks;
  #subscriber: Redis | undefined;
  readonly #waiters = new Map<string, Set<Waiter>>();
  /** The waiters that are watches (told about a change at their subscription's confirmation). */
  readonly #watches = new WeakSet<Waiter>();
  /** The channels subscribed (or being subscribed), each with the token of its subscription. */
  readonly #listening = new Map<string, object>();
  /** Channels of locks and semaphores: a release frees one place, so it wakes one waiter here (decision 030). */
  readonly #wakeOne = new Set<string>();
  /** Channels kept subscribed without a waiter (their stop timers). */
  readonly #kept = new Map<string, NodeJS.Timeout>();
  /** Channels whose subscription is to be answered again since the subscriber lost its connection. */
  readonly #awaiting = new Set<string>();
  /** The last failed re-subscription's message, while a channel awaits its answer. */
  #failure: string | undefined;
  #closed = false;

  /** `redis`: the command connection; the subscriber is its duplicate. */
  constructor(redis: RedisConnection, hooks: WakeChannelHooks) {
    this.#redis = redis;
    this.#hooks = hooks;
  }

  /** Registers `waiter` on `channel` (subscribing it if needed). `watch`: it is told at the subscription's confirmation. */
  add(channel: string, waiter: Waiter, options: { readonly wakeOne: boolean; readonly watch?: boolean }): void {
    if (options.wakeOne) this.#wakeOne.add(channel);
    if (options.watch === true) this.#watches.add(waiter);
    let waiters = this.#waiters.get(channel);
    if (waiters === undefined) {
      waiters = new Set<Waiter>();
      this.#waiters.set(channel, waiters);
      this.#listen(channel);
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
    this.#listen(channel);
  }

  /** Whether the channels listened on are subscribed and, since the last reconnect, confirmed again. */
  health(): SubscriptionHealth {
    return subscriptionHealth({
      kind: 'wake-up',
      status: this.#subscriber?.status,
      channels: this.#listening.size,
      awaiting: this.#awaiting.size,
      ...(this.#failure === undefined ? {} : { failure: this.#failure }),
    });
  }

  /** Wakes every waiter, stops the timers; returns the subscriber connection to quit, if any. */
  close(): Redis | undefined {
    this.#closed = true;
    for (const waiters of [...this.#waiters.values()]) for (const wake of [...waiters]) wake();
    for (const timer of this.#kept.values()) clearTimeout(timer);
    this.#kept.clear();
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    return subscriber;
  }

  #listen(channel: string): void {
    if (this.#listening.has(channel)) return;
    const subscription = {};
    this.#listening.set(channel, subscription);
    this.#connection()
      .subscribe(channel)
      .then(
        () => this.#subscribed(channel, subscription),
        () => undefined,
      );
  }

  #unlisten(channel: string): void {
    if (this.#waiters.has(channel) || this.#kept.has(channel) || !this.#listening.delete(channel)) return;
    this.#confirmedAgain(channel);
    this.#hooks.onUnlisten(channel);
    this.#subscriber?.unsubscribe(channel).catch(() => undefined);
  }

  /** The subscription took effect: the owner checks what may have been missed (decisions 057, 061). */
  #subscribed(channel: string, subscription: object): void {
    if (this.#listening.get(channel) !== subscription) return; // unsubscribed meanwhile: a later subscription covers the new waiters
    this.#confirmedAgain(channel);
    this.#hooks.onConfirmed(channel, () => {
      if (this.#listening.get(channel) !== subscription) return;
      for (const wake of [...(this.#waiters.get(channel) ?? [])]) if (this.#watches.has(wake)) wake();
    });
  }

  /** The subscriber reconnected: every channel is subscribed and confirmed again (decision 061). */
  #reconnected(): void {
    for (const channel of [...this.#listening.keys()]) this.#resubscribe(channel);
  }

  /** Subscribes `channel` again, to be confirmed; a refused SUBSCRIBE is sent again after {@link RESUBSCRIBE_RETRY_MS}. */
  #resubscribe(channel: string): void {
    if (this.#closed || this.#subscriber === undefined || !this.#listening.has(channel)) return;
    const subscription = {};
    this.#listening.set(channel, subscription);
    this.#awaiting.add(channel);
    this.#subscriber.subscribe(channel).then(
      () => this.#subscribed(channel, subscription),
      (error: unknown) => {
        if (this.#listening.get(channel) !== subscription) return;
        this.#failure = errorText(error);
        setTimeout(() => {
          if (this.#listening.get(channel) === subscription) this.#resubscribe(channel);
        }, RESUBSCRIBE_RETRY_MS).unref();
      },
    );
  }

  /** The subscriber lost its connection: every channel is to be confirmed again. */
  #disconnected(): void {
    for (const channel of this.#listening.keys()) this.#awaiting.add(channel);
  }

  /** `channel` no longer awaits a confirmation (answered, or no longer listened to). */
  #confirmedAgain(channel: string): void {
    this.#awaiting.delete(channel);
    if (this.#awaiting.size === 0) this.#failure = undefined;
  }

  #connection(): Redis {
    if (this.#subscriber === undefined) {
      const subscriber = subscriberOf(this.#redis, {
        enableOfflineQueue: true,
        autoResubscribe: false, // resubscribed by #reconnected, each confirmed (decision 061)
        maxRetriesPerRequest: null,
        lazyConnect: false,
      });
      subscriber.on('error', () => undefined); // reconnects on its own; each channel is confirmed again once it is back
      afterReconnect(subscriber, () => this.#reconnected());
      subscriber.on('close', () => this.#disconnected());
      subscriber.on('message', (channel: string, message: string) => {
        if (this.#hooks.onMessage(channel, message)) return;
        const waiters = [...(this.#waiters.get(channel) ?? [])];
        // The oldest waiter of a lock or semaphore that did not know yet retries; the others stay asleep (no thundering herd).
        if (!this.#wakeOne.has(channel)) for (const wake of waiters) wake();
        else for (const wake of waiters) if (wake()) break;
      });
      this.#subscriber = subscriber;
    }
    return this.#subscriber;
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
