/**
 * Cancel announcements over Redis pub/sub (docs/decisions/053, 058, 061): a `PUBLISH` on the
 * prefix's cancel channel, and a subscriber connection of its own (a {@link ChannelSubscriber},
 * decision 112) that listens while anyone does. Announcements are a fast path only: a listener is
 * told when the subscription is in place (at first, and again after every reconnect or
 * replacement of the connection) so that it can re-read what it may have missed.
 *
 * @module
 */
import type { Redis } from 'ioredis';
import type { RedisConnection } from './connection.js';
import { ChannelSubscriber, type ChannelSubscriberOptions } from './channel-subscriber.js';
import { runCommand } from './script.js';
import type { SubscriptionHealth } from './subscription-health.js';

type Listener = (executionId: string) => void;

/** The cancel channel of one coordinator. */
export class CancelChannel {
  readonly #redis: RedisConnection;
  readonly #channel: string;
  /** Listeners, each with its `onListening`. */
  readonly #listeners = new Map<Listener, (() => void) | undefined>();
  readonly #subscriber: ChannelSubscriber;
  #closed = false;

  /** `redis`: the command connection (announcements go out on it; the subscriber is made from it). */
  constructor(
    redis: RedisConnection,
    channel: string,
    onDegraded?: (degraded: boolean) => void,
    options: ChannelSubscriberOptions = {},
  ) {
    this.#redis = redis;
    this.#channel = channel;
    this.#subscriber = new ChannelSubscriber(
      redis,
      {
        kind: 'cancel',
        onMessage: (_channel, message) => {
          for (const listener of [...this.#listeners.keys()]) listener(message);
        },
        // Announcements made before (or while the connection was lost) were missed: every listener looks again (decisions 058, 061).
        onConfirmed: () => {
          for (const [listener, onListening] of [...this.#listeners])
            if (onListening !== undefined && this.#listeners.has(listener)) onListening();
        },
        ...(onDegraded === undefined ? {} : { onDegraded }),
      },
      options,
    );
  }

  /** Publishes `executionId` to every listening process. */
  async announce(executionId: string): Promise<void> {
    await runCommand('cancel-announce', () => this.#redis.publish(this.#channel, executionId), this.#redis); // a repeated announcement aborts nothing twice
  }

  /** See `CancelAnnouncements.onCancelAnnounced`; returns the unsubscribe function. */
  listen(listener: Listener, onListening?: () => void): () => void {
    // Until SUBSCRIBE is answered, announcements pass this process by: `onListening` lets the caller look again.
    if (this.#listeners.size === 0 && !this.#closed) this.#subscriber.add(this.#channel);
    this.#listeners.set(listener, onListening);
    // Already in place: this listener looks once now (the others did at the confirmation).
    if (onListening !== undefined && this.#subscriber.confirmedToken(this.#channel) !== undefined)
      queueMicrotask(() => {
        if (this.#listeners.get(listener) === onListening) onListening();
      });
    return () => {
      if (!this.#listeners.delete(listener) || this.#listeners.size > 0) return;
      this.#subscriber.delete(this.#channel);
    };
  }

  /** Whether the channel, while anyone listens, is subscribed and confirmed (see {@link ChannelSubscriber.health}). */
  health(): SubscriptionHealth {
    return this.#subscriber.health();
  }

  /** Stops listening; returns the subscriber connection to quit, if any. */
  close(): Redis | undefined {
    this.#closed = true;
    return this.#subscriber.close();
  }
}
