/**
 * The Redis backend: a {@link Store} for execution records and a {@link Coordinator} for the
 * five coordination primitives, over one ioredis connection (plus a lazily created subscriber
 * connection for wake-ups). Requires Redis ≥ 7 with `maxmemory-policy noeviction`.
 *
 * @example
 * ```ts
 * const backend = createRedisBackend({ url: 'redis://127.0.0.1:6379' });
 * // … use backend.store and backend.coordinator …
 * await backend.close();
 * ```
 *
 * @module
 */
import { Cluster, Redis } from 'ioredis';
import type { Coordinator } from '../../ports/coordinator.js';
import type { Store } from '../../ports/store.js';
import type { EventLog } from '../../ports/event-log.js';
import type { EventWaits } from '../../ports/event-waits.js';
import { coalesceWrites } from './coalesce.js';
import { RedisCoordinator } from './coordinator.js';
import { RedisKeys } from './keys.js';
import { isCluster, layoutOf, quit, type RedisClusterTarget, type RedisConnection } from './connection.js';
import { RedisStore, redisRecordTtl } from './store.js';
import { RedisEventLog } from './event-log.js';
import { RedisEventWaits } from './event-waits.js';
import { setOutageTolerance } from './script.js';
import { RedisFanOutLedger } from './fanout.js';
import { RedisExecutionStream } from './execution-stream.js';
import type { ExecutionStream } from '../../ports/execution-stream.js';
import type { FanOutLedger } from '../../ports/fanout.js';
import type { JobLeases } from '../../ports/job-lease.js';
import type { InterruptClaims } from '../../ports/interrupt-claims.js';
import type { SubscriptionHealth } from './subscription-health.js';
import { checkedRecordTtl } from '../record-ttl.js';

export { coalesceWrites } from './coalesce.js';
export { RedisCoordinator, type RedisCoordinatorOptions } from './coordinator.js';
export { CLUSTER_SLOT_GROUPS, DEFAULT_PREFIX, RedisKeys, slotGroupOf, type KeyLayout } from './keys.js';
export { isCluster, parseClusterNodes, type RedisClusterTarget, type RedisConnection } from './connection.js';
export { CLAIM_REPAIR_MS } from './store.js';
export { RedisEventLog, type RedisEventLogOptions } from './event-log.js';
export { RedisEventWaits, type RedisEventWaitsOptions } from './event-waits.js';
export { DEFAULT_OUTAGE_TOLERANCE_MS, outageTolerance, setOutageTolerance } from './script.js';
export {
  checkDurability,
  durabilityAtStartUp,
  type DurabilityConnection,
  type DurabilityReport,
  type DurabilitySettings,
  type PersistenceMode,
  type StartUpCheckOptions,
} from './durability.js';
export { RedisFanOutLedger, type RedisFanOutLedgerOptions } from './fanout.js';
export type { SubscriptionHealth } from './subscription-health.js';
export {
  DEFAULT_MAX_RECORD_BYTES,
  DEFAULT_RECORD_TTL_MS,
  RETAIN_FOREVER_TTL_MS,
  RedisStore,
  type RedisStoreOptions,
} from './store.js';

/** Options of {@link createRedisBackend}. */
export interface RedisBackendOptions {
  /** Connection URL (e.g. `redis://127.0.0.1:6379`); ignored when `redis` or `cluster` is given. */
  readonly url?: string;
  /**
   * An existing connection to use — an ioredis `Redis`, or a `Cluster` for a Redis Cluster (keys
   * then laid out by slot, docs/decisions/090); the backend never quits it.
   */
  readonly redis?: RedisConnection;
  /**
   * A Redis Cluster to connect to (startup nodes and ioredis `Cluster` options); the backend
   * creates the `Cluster` with {@link COORDINATION_CONNECTION_OPTIONS} and quits it on close.
   * Ignored when `redis` is given.
   */
  readonly cluster?: RedisClusterTarget;
  /** Key prefix; default `rx`. */
  readonly prefix?: string;
  /**
   * TTL of execution records and idempotency claims in ms (`Infinity`: keep them); default 7 days.
   * Anything but a positive integer or `Infinity` is a `RuntimeOptionError`, before any connection opens.
   */
  readonly recordTtlMs?: number;
  /** Size limit of one serialized execution record in bytes; default 512 KiB. */
  readonly maxRecordBytes?: number;
  /** Size limit of one large map's element states, kept apart from the record (docs/limits.md); default 64 MiB. */
  readonly maxMapStateBytes?: number;
  /**
   * Hand a released lock straight to a waiter of this process (docs/decisions/037, 060), and queue
   * this process for grants of locks released by other processes (docs/decisions/059). Default
   * true; `false` frees the key at every release and takes no grants.
   */
  readonly lockHandOff?: boolean;
  /**
   * Send the commands of one event-loop tick in one socket write (docs/decisions/041). Default
   * true for the connection the backend creates, false for a passed-in `redis` (which is then
   * left as it is).
   */
  readonly coalesceWrites?: boolean;
  /**
   * How long store and coordinator calls ride out a Redis outage (connection lost, server
   * restarting, loading or busy) before they fail with `StoreUnavailableError` /
   * `CoordinationUnavailableError`: each call is sent again with backoff until this long after
   * its first failure (docs/decisions/065). Default 30 s; 0 fails at the first failure. Set on
   * the connection, so a passed-in `redis` shared with another backend shares it too.
   */
  readonly outageToleranceMs?: number;
}

/** A Redis store and coordinator sharing one connection (`C`: a `Redis` by default, or a `Cluster` / either, `RedisConnection`). */
export interface RedisBackend<C extends RedisConnection = Redis> {
  readonly store: Store;
  readonly coordinator: Coordinator;
  /** Ledgers of fan-out maps (same connection, same prefix, the records' TTL). */
  readonly fanOut: FanOutLedger;
  /** A worker's liveness lease with its record read and its terminal write, one script each (the store, over the coordinator's lock keys; docs/decisions/040). */
  readonly jobLeases: JobLeases;
  /** The correlation-id and resume claims of interrupts (the store: a Lua script and `SET NX`). */
  readonly interruptClaims: InterruptClaims;
  /** The log of sent events (same connection, same prefix, kept for the records' TTL). */
  readonly events: EventLog;
  /** The index of executions waiting for an event (same connection, same prefix). */
  readonly eventWaits: EventWaits;
  /** Each execution's events in a Redis stream (`engine.watch`; same connection and prefix, the records' TTL). */
  readonly executionStream: ExecutionStream;
  /** The command connection (created from `url` or `cluster`, or the one passed in). */
  readonly redis: C;
  /** Whether the coordinator's pub/sub subscriptions are confirmed (see `RedisCoordinator.subscriptions`). */
  subscriptions(): SubscriptionHealth;
  /** Closes the subscriber connection, and the command connection if the backend created it. */
  close(): Promise<void>;
}

/**
 * Connection options of a connection the backend creates (use them for a connection you pass
 * in): ioredis never sends a command again by itself (a counted call — a re-entrant acquire, a
 * release — must not be repeated blindly after its reply was lost), and every command still
 * waiting when the connection drops fails at once, in flight or queued: the backend's calls
 * then ride out the outage themselves, up to `outageToleranceMs` (docs/decisions/065). With
 * ioredis' own retries instead, a command in flight when the connection dropped and came back
 * within those retries would never settle. Reconnect attempts come at least every 500 ms.
 */
export const COORDINATION_CONNECTION_OPTIONS = Object.freeze({
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  retryStrategy: reconnectDelay,
});

/** Delay before reconnect attempt `times`: 50 ms more each time, at most 500 ms (calls ride an outage out at this pace, and are back within 0.5 s of Redis). */
function reconnectDelay(times: number): number {
  return Math.min(times * 50, 500);
}

/** The connection a backend creates: a `Cluster` from `cluster`, else a `Redis` from `url` (or the default address). */
function connect(options: RedisBackendOptions): RedisConnection {
  if (options.cluster !== undefined) return createClusterConnection(options.cluster);
  return options.url === undefined
    ? new Redis(COORDINATION_CONNECTION_OPTIONS)
    : new Redis(options.url, COORDINATION_CONNECTION_OPTIONS);
}

/**
 * A `Cluster` over `target`'s startup nodes with {@link COORDINATION_CONNECTION_OPTIONS} on each
 * node's connection (and ioredis's offline queue kept for the moments it looks up the slots).
 */
export function createClusterConnection(target: RedisClusterTarget): Cluster {
  const options = target.options ?? {};
  return new Cluster([...target.nodes], {
    ...options,
    clusterRetryStrategy: options.clusterRetryStrategy ?? reconnectDelay,
    redisOptions: { ...options.redisOptions, ...COORDINATION_CONNECTION_OPTIONS },
  });
}

/** Creates the Redis store and coordinator over one connection: a single server's `Redis` from `url` or the one passed in. */
export function createRedisBackend(
  options?: RedisBackendOptions & { readonly redis?: Redis; readonly cluster?: undefined },
): RedisBackend<Redis>;
/** Creates the Redis store and coordinator over one connection: a `Cluster` from `cluster` or the one passed in (keys laid out by slot). */
export function createRedisBackend(options: RedisBackendOptions): RedisBackend<RedisConnection>;
export function createRedisBackend(options: RedisBackendOptions = {}): RedisBackend<RedisConnection> {
  checkedRecordTtl('createRedisBackend', options.recordTtlMs);
  const owned = options.redis === undefined;
  const redis = options.redis ?? connect(options);
  // Calls report their own failures; without a listener ioredis would also log every reconnect error.
  if (owned) redis.on('error', () => undefined);
  // A cluster's commands leave on one connection per node, which ioredis manages: not coalesced.
  if ((options.coalesceWrites ?? owned) && !isCluster(redis)) coalesceWrites(redis);
  if (options.outageToleranceMs !== undefined) setOutageTolerance(redis, options.outageToleranceMs);
  const keys = new RedisKeys(options.prefix, layoutOf(redis));
  const coordinator = new RedisCoordinator({
    redis,
    keys,
    ...(options.lockHandOff === undefined ? {} : { lockHandOff: options.lockHandOff }),
  });
  const store = new RedisStore({
    redis,
    keys,
    ...(options.recordTtlMs === undefined ? {} : { recordTtlMs: options.recordTtlMs }),
    ...(options.maxRecordBytes === undefined ? {} : { maxRecordBytes: options.maxRecordBytes }),
    ...(options.maxMapStateBytes === undefined ? {} : { maxMapStateBytes: options.maxMapStateBytes }),
  });
  const fanOut = new RedisFanOutLedger({
    redis,
    keys,
    ...(options.recordTtlMs === undefined ? {} : { ttlMs: redisRecordTtl(options.recordTtlMs) }),
  });
  const events = new RedisEventLog({ redis, keys, ttlMs: redisRecordTtl(options.recordTtlMs) });
  const executionStream = new RedisExecutionStream({
    redis,
    keys,
    ttlMs: redisRecordTtl(options.recordTtlMs),
    sharesStoreConnection: !isCluster(redis), // one server: appends and record writes run in the order sent
  });
  let closing: Promise<void> | undefined;
  return {
    store,
    coordinator,
    fanOut,
    events,
    eventWaits: new RedisEventWaits({ redis, keys }),
    executionStream,
    jobLeases: store,
    interruptClaims: store,
    redis,
    subscriptions: () => coordinator.subscriptions(),
    close: () =>
      (closing ??= (async () => {
        await executionStream.close();
        await coordinator.close();
        if (owned) await quit(redis);
      })()),
  };
}
