/**
 * Where the wake-up channels are subscribed: one {@link ChannelSubscriber} on a single server; on
 * a cluster, one per node that serves a channel's slot (docs/decisions/137).
 *
 * A wake-up channel carries its key's hash tag, so it has the key's slot, and the script that
 * publishes on it runs on the master of that slot. A subscriber connected to that master hears the
 * message as it is published; one connected elsewhere hears it only once the cluster bus forwards
 * it, which adds up to tens of milliseconds to a hand-over. So on a cluster:
 *
 * - each channel is subscribed on the master that serves its slot (from the cluster connection's
 *   slot map), on a connection to that node made for its channels;
 * - a node whose subscriber connection is lost, or whose channels stay unconfirmed past the bound,
 *   counts as down: its channels move to the *roaming* subscriber, which connects to any live
 *   node (see `subscriberOf`) and hears every channel through the bus; the cluster connection is
 *   asked to refresh its slot map;
 * - every {@link REROUTE_MS} (and at each change) each channel is moved where it belongs now: to
 *   a new master after a failover, back to its node {@link RETRY_DOWN_MS} after it went down. A
 *   move is an unsubscribe and a subscribe; the owner is told when the new subscription is
 *   confirmed, as after any reconnect, so what was published meanwhile is covered.
 *
 * @module
 */
import { Redis, type Cluster } from 'ioredis';
import { isCluster, quit, type RedisConnection } from './connection.js';
import { ChannelSubscriber, type ChannelSubscriberHooks, type ChannelSubscriberOptions } from './channel-subscriber.js';
import { keySlot } from './key-slot.js';
import { combinedHealth, SUBSCRIBE_CONFIRM_MS, type SubscriptionHealth } from './subscription-health.js';

/** How often the channels are checked against the cluster's slot map. */
export const REROUTE_MS = 500;

/** How long after a node went down its channels are tried on it again (when it still serves them). */
export const RETRY_DOWN_MS = 5_000;

const monotonic = (): number => performance.now();

/** The subscribers of a set of channels, each channel on one of them; see the module comment. */
export class ChannelRouter {
  readonly #redis: RedisConnection;
  readonly #hooks: ChannelSubscriberHooks;
  readonly #options: ChannelSubscriberOptions;
  readonly #cluster: Cluster | undefined;
  /** The subscriber of a single server, or a cluster's roaming one (any live node). */
  #roaming: ChannelSubscriber | undefined;
  /** A cluster's subscribers per node (`host:port`). */
  readonly #nodes = new Map<string, ChannelSubscriber>();
  /** Each channel's subscriber. */
  readonly #where = new Map<string, ChannelSubscriber>();
  /** Nodes counted as down, since when (monotonic ms). */
  readonly #down = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  /** Connections of subscribers left empty, to quit at close if they are still open. */
  readonly #retired = new Set<Redis>();
  #closed = false;

  /** Whether the owner was last told the subscriptions are degraded. */
  #degraded = false;

  /** `redis`: the command connection; `hooks` are shared by every subscriber made here. */
  constructor(redis: RedisConnection, hooks: ChannelSubscriberHooks, options: ChannelSubscriberOptions = {}) {
    this.#redis = redis;
    this.#options = options;
    this.#cluster = isCluster(redis) ? redis : undefined;
    // Degradation is told for all subscribers together: a node's subscriber may be retired while degraded.
    this.#hooks = {
      kind: hooks.kind,
      onMessage: hooks.onMessage,
      onConfirmed: (channel, token) => {
        hooks.onConfirmed(channel, token);
        if (this.#degraded) this.#degradedCheck();
      },
      onDegraded: () => this.#degradedCheck(),
    };
    this.#onDegraded = hooks.onDegraded;
  }

  readonly #onDegraded: ((degraded: boolean) => void) | undefined;

  /** Listens on `channel` (no-op when it already does, or after close). */
  add(channel: string): void {
    if (this.#closed || this.#where.has(channel)) return;
    const subscriber = this.#target(channel);
    this.#where.set(channel, subscriber);
    subscriber.add(channel);
    this.#schedule();
  }

  /** Stops listening on `channel`; false when it did not. */
  delete(channel: string): boolean {
    const subscriber = this.#where.get(channel);
    if (subscriber === undefined) return false;
    this.#where.delete(channel);
    subscriber.delete(channel);
    this.#retireIfEmpty(subscriber);
    return true;
  }

  /** The token of `channel`'s subscription, once confirmed and while it holds. */
  confirmedToken(channel: string): object | undefined {
    return this.#where.get(channel)?.confirmedToken(channel);
  }

  /** The subscriptions' health, all subscribers together. */
  health(): SubscriptionHealth {
    const parts = [...(this.#roaming === undefined ? [] : [this.#roaming]), ...this.#nodes.values()];
    if (parts.length === 1) return parts[0]!.health();
    return combinedHealth(parts.map((subscriber) => subscriber.health()));
  }

  /** Stops the timers; returns the connections to quit. */
  close(): Redis[] {
    this.#closed = true;
    clearInterval(this.#timer);
    const connections = [...this.#retired];
    for (const subscriber of [this.#roaming, ...this.#nodes.values()]) {
      const connection = subscriber?.close();
      if (connection !== undefined) connections.push(connection);
    }
    this.#nodes.clear();
    return connections;
  }

  /** The subscriber `channel` belongs on now. */
  #target(channel: string): ChannelSubscriber {
    const node = this.#cluster === undefined ? undefined : this.#cluster.slots[keySlot(channel)]?.[0];
    if (node === undefined) return this.#roamingSubscriber();
    const downSince = this.#down.get(node);
    if (downSince !== undefined && monotonic() - downSince < RETRY_DOWN_MS) return this.#roamingSubscriber();
    this.#down.delete(node);
    return this.#nodeSubscriber(node);
  }

  #roamingSubscriber(): ChannelSubscriber {
    this.#roaming ??= new ChannelSubscriber(this.#redis, this.#hooks, this.#options);
    return this.#roaming;
  }

  #nodeSubscriber(node: string): ChannelSubscriber {
    let subscriber = this.#nodes.get(node);
    if (subscriber !== undefined) return subscriber;
    const at = node.lastIndexOf(':');
    const address = { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
    const redisOptions = this.#cluster!.options.redisOptions ?? {};
    subscriber = new ChannelSubscriber(
      this.#redis,
      {
        ...this.#hooks,
        connect: (options) => new Redis({ ...redisOptions, ...options, ...address }),
        onConnection: (up) => {
          if (!up) this.#goneDown(node);
        },
        onDegraded: (degraded) => {
          if (degraded) this.#goneDown(node);
          this.#degradedCheck();
        },
      },
      this.#options,
    );
    this.#nodes.set(node, subscriber);
    return subscriber;
  }

  /** `node`'s subscriber lost its connection or stayed unconfirmed: its channels roam until it is back. */
  #goneDown(node: string): void {
    if (this.#closed || this.#down.has(node)) return;
    this.#down.set(node, monotonic());
    this.#cluster?.refreshSlotsCache();
    queueMicrotask(() => this.#reroute());
  }

  /** Moves every channel that is not where it belongs now. */
  #reroute(): void {
    if (this.#closed) return;
    for (const [channel, current] of [...this.#where]) {
      const target = this.#target(channel);
      if (target === current) continue;
      current.delete(channel);
      this.#where.set(channel, target);
      target.add(channel);
      this.#retireIfEmpty(current);
    }
    for (const subscriber of this.#nodes.values()) this.#retireIfEmpty(subscriber);
    if (this.#degraded) this.#degradedCheck();
  }

  /** Tells the owner when the subscriptions as a whole became degraded or recovered. */
  #degradedCheck(): void {
    const degraded = this.health().degraded === true;
    if (degraded === this.#degraded || this.#closed) return;
    this.#degraded = degraded;
    this.#onDegraded?.(degraded);
  }

  /** A node's subscriber with no channel left is closed (a later channel opens a fresh one). */
  #retireIfEmpty(subscriber: ChannelSubscriber): void {
    if (subscriber.size > 0 || subscriber === this.#roaming) return;
    for (const [node, candidate] of this.#nodes)
      if (candidate === subscriber) {
        this.#nodes.delete(node);
        const connection = subscriber.close();
        if (connection !== undefined) {
          this.#retired.add(connection);
          void quit(connection).finally(() => this.#retired.delete(connection));
        }
      }
  }

  /** On a cluster, the periodic check against the slot map. */
  #schedule(): void {
    if (this.#cluster === undefined || this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#reroute(), Math.min(REROUTE_MS, SUBSCRIBE_CONFIRM_MS));
    this.#timer.unref();
  }
}
