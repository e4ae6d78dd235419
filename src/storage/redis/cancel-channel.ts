/**
 * Cancel announcements over Redis pub/sub (docs/decisions/053, 058, 061): a `PUBLISH` on the
 * prefix's cancel channel, and a subscriber connection of its own that listens while anyone
 * does. Announcements are a fast path only: a listener is told when the subscription is in place
 * (at first, and again after every reconnect) so that it can re-read what it may have missed.
 *
 * @module
 */
import type { Redis } from 'ioredis';
import { subscriberOf, type RedisConnection } from './connection.js';
import { runCommand } from './script.js';
import { RESUBSCRIBE_RETRY_MS, subscriptionHealth, type SubscriptionHealth } from './subscription-health.js';

type Listener = (executionId: string) => void;

/** Calls `again` at every `ready` of `connection` after its first one: it has reconnected. */
export function afterReconnect(connection: Redis, again: () => void): void {
  let connected = false;
  connection.on('ready', () => {
    if (connected) again();
    connected = true;
  });
}

/** The cancel channel of one coordinator. */
export class CancelChannel {
  readonly #redis: RedisConnection;
  readonly #channel: string;
  /** Listeners, each with its `onListening`. */
  readonly #listeners = new Map<Listener, (() => void) | undefined>();
  /** Whether the channel's subscription was answered (false: it failed); undefined while nobody listens. */
  #subscribed: Promise<boolean> | undefined;
  #subscriber: Redis | undefined;
  /** Since the subscriber lost its connection, the channel's subscription is to be answered again (undefined: it was, or nobody listens). */
  #awaiting: Promise<boolean> | true | undefined;
  /** The last failed SUBSCRIBE's message. */
  #failure: string | undefined;
  #closed = false;

  /** `redis`: the command connection (announcements go out on it; the subscriber is its duplicate). */
  constructor(redis: RedisConnection, channel: string) {
    this.#redis = redis;
    this.#channel = channel;
  }

  /** Publishes `executionId` to every listening process. */
  async announce(executionId: string): Promise<void> {
    await runCommand('cancel-announce', () => this.#redis.publish(this.#channel, executionId), this.#redis); // a repeated announcement aborts nothing twice
  }

  /** See `Coordinator.onCancelAnnounced`; returns the unsubscribe function. */
  listen(listener: Listener, onListening?: () => void): () => void {
    // Until SUBSCRIBE is answered, announcements pass this process by: `onListening` lets the caller look again.
    if (this.#listeners.size === 0 && !this.#closed) this.#subscribed = this.#subscribe();
    this.#listeners.set(listener, onListening);
    if (onListening !== undefined) this.#whenListening(listener, onListening);
    return () => {
      if (!this.#listeners.delete(listener) || this.#listeners.size > 0) return;
      this.#subscribed = undefined;
      this.#awaiting = undefined;
      this.#subscriber?.unsubscribe(this.#channel).catch(() => undefined);
    };
  }

  /** Whether the channel, while anyone listens, is subscribed and, since the last reconnect, confirmed again. */
  health(): SubscriptionHealth {
    const listening = this.#listeners.size > 0;
    return subscriptionHealth({
      kind: 'cancel',
      status: this.#subscriber?.status,
      channels: listening ? 1 : 0,
      awaiting: listening && this.#awaiting !== undefined ? 1 : 0,
      ...(this.#failure === undefined ? {} : { failure: this.#failure }),
    });
  }

  /** Stops listening; returns the subscriber connection to quit, if any. */
  close(): Redis | undefined {
    this.#closed = true;
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    return subscriber;
  }

  #subscribe(): Promise<boolean> {
    return this.#connection()
      .subscribe(this.#channel)
      .then(
        () => {
          this.#failure = undefined;
          return true;
        },
        (error: unknown) => {
          this.#failure = error instanceof Error ? error.message : String(error);
          return false;
        },
      );
  }

  #whenListening(listener: Listener, onListening: () => void): void {
    void this.#subscribed?.then((subscribed) => subscribed && this.#listeners.has(listener) && onListening());
  }

  /** The subscriber reconnected: announcements made meanwhile were lost, so every listener looks again once it is back (decision 061). */
  #reconnected(): void {
    this.#resubscribe();
  }

  /** Subscribes again, to be confirmed; a refused SUBSCRIBE is sent again after {@link RESUBSCRIBE_RETRY_MS}. */
  #resubscribe(): void {
    if (this.#listeners.size === 0 || this.#closed) return;
    const subscribed = (this.#subscribed = this.#awaiting = this.#subscribe());
    void subscribed.then((ok) => {
      if (this.#awaiting !== subscribed) return;
      if (ok) this.#awaiting = undefined;
      else
        setTimeout(() => {
          if (this.#awaiting === subscribed) this.#resubscribe();
        }, RESUBSCRIBE_RETRY_MS).unref();
    });
    for (const [listener, onListening] of this.#listeners)
      if (onListening !== undefined) this.#whenListening(listener, onListening);
  }

  /** The connection announcements arrive on: apart from the wake-up subscriber, whose channels come and go with the waits. */
  #connection(): Redis {
    if (this.#subscriber === undefined) {
      const subscriber = subscriberOf(this.#redis, {
        enableOfflineQueue: true,
        autoResubscribe: false, // resubscribed by #reconnected, each confirmed (decision 061)
        maxRetriesPerRequest: null,
        lazyConnect: false,
      });
      subscriber.on('error', () => undefined); // reconnects on its own; the listeners look again once it is back
      subscriber.on('message', (channel: string, message: string) => {
        if (channel === this.#channel) for (const listener of [...this.#listeners.keys()]) listener(message);
      });
      afterReconnect(subscriber, () => this.#reconnected());
      subscriber.on('close', () => {
        if (this.#listeners.size > 0) this.#awaiting = true; // to be confirmed again once it is back
      });
      this.#subscriber = subscriber;
    }
    return this.#subscriber;
  }
}
