/**
 * One subscriber connection and the channels it must listen on, each confirmed by the answer to
 * its own `SUBSCRIBE` (docs/decisions/061, 095, 112). Both the wake-up channels and the cancel
 * channel listen through one of these.
 *
 * - A `SUBSCRIBE` is written only while the connection is `ready`; at every `ready` (the first
 *   included) each channel not confirmed on that connection is subscribed. ioredis writes a
 *   `SUBSCRIBE` in its `connect` state (before its ready check), which puts the connection in
 *   subscriber mode, fails the ready check (`INFO`), rejects every command queued, and
 *   reconnects: a channel subscribed then was silently lost (decision 112).
 * - A refused or rejected `SUBSCRIBE` is sent again every {@link RESUBSCRIBE_RETRY_MS}.
 * - A channel not confirmed within {@link SUBSCRIBE_CONFIRM_MS} makes the subscriber *degraded*;
 *   a connection that is up (or stuck in its handshake, or given up) and has had the bound since
 *   it opened or became ready, while a channel stays unconfirmed, is replaced by a fresh one.
 *
 * @module
 */
import type { Redis, RedisOptions } from 'ioredis';
import { subscriberOf, type RedisConnection } from './connection.js';
import {
  RESUBSCRIBE_RETRY_MS,
  SUBSCRIBE_CONFIRM_MS,
  subscriptionHealth,
  type SubscriptionHealth,
} from './subscription-health.js';

/** What the owner of a {@link ChannelSubscriber} is told. */
export interface ChannelSubscriberHooks {
  /** What the subscriber listens for, in health details: `wake-up`, `cancel`. */
  readonly kind: string;
  /** A message on a channel listened on. */
  readonly onMessage: (channel: string, message: string) => void;
  /** `channel`'s subscription was answered (first, or again on a new connection); `token` names this subscription. */
  readonly onConfirmed: (channel: string, token: object) => void;
  /** The subscriber became degraded (a channel unconfirmed longer than the bound), or recovered. */
  readonly onDegraded?: (degraded: boolean) => void;
  /** Its connection was lost (closed), or became ready again. */
  readonly onConnection?: (up: boolean) => void;
  /** Makes its connection (default: {@link subscriberOf} the command connection, with `options`). */
  readonly connect?: (options: RedisOptions) => Redis;
}

/** Options of {@link ChannelSubscriber} (tests shorten the bound). */
export interface ChannelSubscriberOptions {
  /** How long a channel may stay unconfirmed before the subscriber is degraded and its connection replaced. Default {@link SUBSCRIBE_CONFIRM_MS}. */
  readonly confirmMs?: number;
}

interface Channel {
  /** The current subscription (a new object per `SUBSCRIBE` sent, and at the loss of the connection). */
  token: object;
  confirmed: boolean;
  /** Since when (monotonic ms) it is not confirmed. */
  since: number;
  /** It was confirmed on a connection since lost (or replaced): awaiting its answer again. */
  again: boolean;
}

/** Connection states in which a stuck subscription is worth a fresh connection (not while ioredis retries an unreachable server). */
const REPLACEABLE = new Set(['ready', 'connect', 'end']);

const monotonic = (): number => performance.now();

/** See the module comment. */
export class ChannelSubscriber {
  readonly #redis: RedisConnection;
  readonly #hooks: ChannelSubscriberHooks;
  readonly #confirmMs: number;
  readonly #channels = new Map<string, Channel>();
  #connection: Redis | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  /** The last refused `SUBSCRIBE`'s message, while a channel is unconfirmed. */
  #failure: string | undefined;
  /** When the current connection was opened or last became ready: each gets a full bound before it is replaced. */
  #freshAt = -Infinity;
  #replacements = 0;
  #degraded = false;
  #closed = false;

  /** `redis`: the command connection; each subscriber connection is made from it (`subscriberOf`). */
  constructor(redis: RedisConnection, hooks: ChannelSubscriberHooks, options: ChannelSubscriberOptions = {}) {
    this.#redis = redis;
    this.#hooks = hooks;
    this.#confirmMs = options.confirmMs ?? SUBSCRIBE_CONFIRM_MS;
  }

  /** Listens on `channel` (no-op when it already does, or after close). */
  add(channel: string): void {
    if (this.#closed || this.#channels.has(channel)) return;
    const entry: Channel = { token: {}, confirmed: false, since: monotonic(), again: false };
    this.#channels.set(channel, entry);
    const connection = this.#open();
    if (connection.status === 'ready') this.#send(connection, channel, entry);
  }

  /** Stops listening on `channel`; false when it did not. */
  delete(channel: string): boolean {
    if (!this.#channels.delete(channel)) return false;
    const connection = this.#connection;
    if (connection?.status === 'ready') connection.unsubscribe(channel).catch(() => undefined);
    this.#settled();
    return true;
  }

  /** The token of `channel`'s subscription, once confirmed and while it holds. */
  confirmedToken(channel: string): object | undefined {
    const entry = this.#channels.get(channel);
    return entry?.confirmed === true ? entry.token : undefined;
  }

  /** How many channels it listens on. */
  get size(): number {
    return this.#channels.size;
  }

  /** Whether every channel is subscribed and confirmed on the current connection (see {@link subscriptionHealth}). */
  health(): SubscriptionHealth {
    const now = monotonic();
    let awaiting = 0;
    let again = false;
    let oldest = now;
    for (const entry of this.#channels.values()) {
      if (entry.confirmed) continue;
      oldest = Math.min(oldest, entry.since);
      // A first SUBSCRIBE in flight is not a fault until the bound; one awaited again after a lost connection is.
      if (entry.again || now - entry.since > this.#confirmMs) awaiting++;
      again ||= entry.again;
    }
    return subscriptionHealth({
      kind: this.#hooks.kind,
      status: this.#connection?.status,
      channels: this.#channels.size,
      awaiting,
      again,
      unconfirmedForMs: now - oldest,
      confirmMs: this.#confirmMs,
      replacements: this.#replacements,
      ...(this.#failure === undefined ? {} : { failure: this.#failure }),
    });
  }

  /** Stops the watchdog; returns the connection to quit, if any. */
  close(): Redis | undefined {
    this.#closed = true;
    clearInterval(this.#watchdog);
    this.#watchdog = undefined;
    const connection = this.#connection;
    this.#connection = undefined;
    return connection;
  }

  #open(): Redis {
    if (this.#connection !== undefined) return this.#connection;
    const options: RedisOptions = {
      enableOfflineQueue: true,
      autoResubscribe: false, // subscribed at each `ready` by #ready, each confirmed (decisions 061, 112)
      maxRetriesPerRequest: null,
      lazyConnect: false,
    };
    const connection = this.#hooks.connect?.(options) ?? subscriberOf(this.#redis, options);
    connection.on('error', () => undefined); // reconnects on its own; the health and the watchdog tell the rest
    connection.on('ready', () => {
      if (this.#connection === connection) this.#ready(connection);
    });
    connection.on('close', () => {
      if (this.#connection === connection) this.#lost();
    });
    connection.on('message', (channel: string, message: string) => {
      if (this.#connection === connection && this.#channels.has(channel)) this.#hooks.onMessage(channel, message);
    });
    this.#connection = connection;
    this.#freshAt = monotonic();
    if (this.#watchdog === undefined) {
      this.#watchdog = setInterval(() => this.#watch(), Math.max(10, Math.floor(this.#confirmMs / 4)));
      this.#watchdog.unref();
    }
    return connection;
  }

  /** The connection is ready (first or again): every channel not confirmed on it is subscribed. */
  #ready(connection: Redis): void {
    this.#freshAt = monotonic();
    this.#hooks.onConnection?.(true);
    for (const [channel, entry] of this.#channels) if (!entry.confirmed) this.#send(connection, channel, entry);
  }

  /** The connection was lost: every channel awaits its answer again, on the next `ready`. */
  #lost(): void {
    const now = monotonic();
    for (const entry of this.#channels.values()) this.#unconfirm(entry, now);
    this.#hooks.onConnection?.(false);
  }

  #unconfirm(entry: Channel, now: number): void {
    if (entry.confirmed) entry.since = now;
    entry.confirmed = false;
    entry.again = true;
    entry.token = {};
  }

  #send(connection: Redis, channel: string, entry: Channel): void {
    const token = {};
    entry.token = token;
    const current = (): boolean =>
      this.#connection === connection && this.#channels.get(channel) === entry && entry.token === token;
    connection.subscribe(channel).then(
      () => {
        if (!current()) return;
        entry.confirmed = true;
        entry.again = false;
        this.#settled();
        this.#hooks.onConfirmed(channel, token);
      },
      (error: unknown) => {
        if (!current()) return; // rejected with its lost connection: sent again at the next `ready`
        this.#failure = error instanceof Error ? error.message : String(error);
        setTimeout(() => {
          if (current() && connection.status === 'ready') this.#send(connection, channel, entry);
        }, RESUBSCRIBE_RETRY_MS).unref();
      },
    );
  }

  /** A channel was confirmed or dropped: forget the failure once none awaits, and tell a recovery. */
  #settled(): void {
    for (const entry of this.#channels.values()) if (!entry.confirmed) return;
    this.#failure = undefined;
    if (this.#connection?.status === 'ready') this.#setDegraded(false);
  }

  /** The watchdog: degraded past the bound, and a stuck connection replaced by a fresh one. */
  #watch(): void {
    if (this.#closed) return;
    const now = monotonic();
    let oldest: number | undefined;
    for (const entry of this.#channels.values())
      if (!entry.confirmed) oldest = Math.min(oldest ?? entry.since, entry.since);
    if (oldest === undefined || now - oldest <= this.#confirmMs) {
      if (oldest === undefined) this.#setDegraded(false);
      return;
    }
    this.#setDegraded(true);
    const status = this.#connection?.status ?? 'end';
    if (REPLACEABLE.has(status) && now - this.#freshAt > this.#confirmMs) this.#replace(now);
  }

  /** Drops the connection and opens a fresh one, whose `ready` subscribes every channel. */
  #replace(now: number): void {
    const old = this.#connection;
    this.#connection = undefined;
    this.#replacements++;
    for (const entry of this.#channels.values()) {
      const { confirmed, since } = entry;
      this.#unconfirm(entry, now);
      if (!confirmed) entry.since = since; // still unconfirmed since then
    }
    old?.disconnect();
    if (this.#channels.size > 0) this.#open();
  }

  #setDegraded(degraded: boolean): void {
    if (this.#degraded === degraded) return;
    this.#degraded = degraded;
    this.#hooks.onDegraded?.(degraded);
  }
}
