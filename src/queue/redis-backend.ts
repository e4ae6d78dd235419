/**
 * The Redis backend as one {@link Backend}: the Redis store, coordinator, job leases and fan-out
 * ledger (`createRedisBackend`), the Redis wait lists, jobs and schedules on BullMQ (on
 * connections of BullMQ's own), and the start-up durability check. `createRedisRuntime` builds
 * one and hands it to `createRuntime`.
 *
 * @module
 */
import { Cluster } from 'ioredis';
import type { Logger } from '../dsl/context.js';
import { silentLogger } from '../engine/model/logger.js';
import type { Backend } from '../ports/backend.js';
import { createRedisBackend, DEFAULT_PREFIX } from '../storage/redis/index.js';
import {
  isCluster,
  startupNodesOf,
  type RedisClusterTarget,
  type RedisConnection,
} from '../storage/redis/connection.js';
import { quit } from '../storage/redis/connection.js';
import { durabilityAtStartUp, type DurabilityReport } from '../storage/redis/durability.js';
import { checkedRecordTtl } from '../storage/record-ttl.js';
import {
  createBullmqConsumer,
  createBullmqQueue,
  type BullmqConnection,
  type BullmqConsumerOptions,
} from './bullmq.js';
import { createBullmqSchedules } from './bullmq-schedules.js';
import { consumerLogging } from './consumer-logging.js';
import { jobRetentionOf, type JobRetentionOptions } from './job-retention.js';
import { RedisWaitList } from '../storage/redis/wait-list.js';

/** Options of {@link createRedisBullmqBackend}: where Redis is (exactly one of `url`, `redis` or `cluster`) and its settings, as `createRedisRuntime` documents them. */
export interface RedisBullmqBackendOptions {
  /** Connection URL of a single server. */
  readonly url?: string | undefined;
  /** An ioredis `Redis` or `Cluster` you created (never quit by the backend). */
  readonly redis?: RedisConnection | undefined;
  /** A Redis Cluster's startup nodes and ioredis `Cluster` options. */
  readonly cluster?: RedisClusterTarget | undefined;
  /** Key prefix of the store, coordinator, wait lists and queue. Default `rx`. */
  readonly prefix?: string | undefined;
  /** BullMQ queue name. Default `ts-reactor`. */
  readonly queueName?: string | undefined;
  /** Worker lock / stall detection tunables of each consumer. */
  readonly stall?: Pick<BullmqConsumerOptions, 'lockDurationMs' | 'stalledIntervalMs' | 'maxStalledCount'> | undefined;
  /** Lock hand-off and cross-process grants. Default true. */
  readonly lockHandOff?: boolean | undefined;
  /** Refuse work on a Redis that does not keep executions across a restart ({@link Backend.ready}). Default false. */
  readonly requireDurability?: boolean | undefined;
  /** How long calls ride out a Redis outage. Default 30 s. */
  readonly outageToleranceMs?: number | undefined;
  /** Size limit of one serialized execution record in bytes. Default 512 KiB. */
  readonly maxRecordBytes?: number | undefined;
  /** Size limit of one large map's element states in bytes. Default 64 MiB. */
  readonly maxMapStateBytes?: number | undefined;
  /** How long an execution record is kept after its last write, in ms. Default 7 days. */
  readonly recordTtlMs?: number | undefined;
  /** How many finished jobs BullMQ keeps of each outcome, and for how long. */
  readonly jobRetention?: JobRetentionOptions | undefined;
  /** Where the durability check's warnings and the consumers' infrastructure failures are logged. Default: nowhere. */
  readonly logger?: Logger | undefined;
}

/** The Redis backend: a shared {@link Backend}, its durability check and its command connection. */
export interface RedisBullmqBackend extends Backend {
  readonly shared: true;
  readonly queue: ReturnType<typeof createBullmqQueue>;
  /** The start-up durability check, run once when the backend is created (resolves with the report unless `requireDurability` refuses). */
  readonly durability: Promise<DurabilityReport>;
  /** The command connection of the store and coordinator. */
  readonly redis: RedisConnection;
}

/**
 * Builds the Redis backend. Options are checked before any connection opens.
 *
 * @throws RangeError unless exactly one of `url`, `redis` or `cluster` is given.
 * @throws RuntimeOptionError when `recordTtlMs` or `jobRetention` is not valid.
 * @example
 * ```ts
 * const runtime = createRuntime(createRedisBullmqBackend({ url: process.env.REDIS_URL! }), { reactors: [checkout] });
 * ```
 */
export function createRedisBullmqBackend(options: RedisBullmqBackendOptions): RedisBullmqBackend {
  const { url, redis, cluster, prefix, queueName, stall, lockHandOff, outageToleranceMs, logger } = options;
  // Refused before any connection opens:
  const recordTtlMs = checkedRecordTtl('createRedisBullmqBackend', options.recordTtlMs);
  const retention = jobRetentionOf('createRedisBullmqBackend', options.jobRetention);
  const target = [url, redis, cluster].filter((given) => given !== undefined).length;
  if (target !== 1)
    throw new RangeError(`createRedisBullmqBackend needs exactly one of url, redis or cluster; got ${String(target)}`);
  const outage = outageToleranceMs === undefined ? {} : { outageToleranceMs };
  const backend = createRedisBackend({
    ...(url === undefined ? {} : { url }),
    ...(redis === undefined ? {} : { redis }),
    ...(cluster === undefined ? {} : { cluster }),
    ...(prefix === undefined ? {} : { prefix }),
    ...(lockHandOff === undefined ? {} : { lockHandOff }),
    ...(options.maxRecordBytes === undefined ? {} : { maxRecordBytes: options.maxRecordBytes }),
    ...(options.maxMapStateBytes === undefined ? {} : { maxMapStateBytes: options.maxMapStateBytes }),
    ...(recordTtlMs === undefined ? {} : { recordTtlMs }),
    ...outage,
  });
  let closing = false;
  const required = options.requireDurability === true;
  const durability = durabilityAtStartUp(backend.redis, {
    required,
    logger: logger ?? silentLogger,
    closing: () => closing,
  });
  const names = {
    ...(queueName === undefined ? {} : { name: queueName }),
    // On a cluster every key of a BullMQ queue must share one slot: a hash-tagged prefix.
    ...(isCluster(backend.redis)
      ? { prefix: `{${prefix ?? DEFAULT_PREFIX}}` }
      : prefix === undefined
        ? {}
        : { prefix }),
  };
  // BullMQ gets connections of its own: its many scripts would otherwise ride along every store transaction.
  const bullmq = bullmqConnection(url, backend.redis);
  const connection = bullmq.connection;
  const queue = createBullmqQueue({ connection, ...names, ...outage, jobRetention: retention });
  const schedules = createBullmqSchedules({ connection, ...names });
  return {
    name: 'redis',
    shared: true,
    store: backend.store,
    coordinator: backend.coordinator,
    interruptClaims: backend.interruptClaims,
    jobLeases: backend.jobLeases,
    waitList: new RedisWaitList({ redis: backend.redis, ...(prefix === undefined ? {} : { prefix }) }),
    fanOut: backend.fanOut,
    events: backend.events,
    eventWaits: backend.eventWaits,
    executionStream: backend.executionStream,
    queue,
    queueInspector: queue,
    consumer: () =>
      createBullmqConsumer({ connection, ...names, ...stall, ...(logger ? consumerLogging(logger) : {}) }),
    schedules,
    ...(required ? { ready: durability } : {}),
    durability,
    redis: backend.redis,
    health: () => ({ subscriptions: backend.subscriptions() }),
    close: async () => {
      closing = true;
      await schedules.close();
      await queue.close();
      await bullmq.close();
      await backend.close();
    },
  };
}

/**
 * BullMQ's connection: the URL, or (a connection was passed or a cluster named) a connection of
 * its own like the backend's — a duplicate of a `Redis`, or a `Cluster` over the same nodes with
 * `maxRetriesPerRequest: null` (BullMQ's workers block) — closed with the runtime.
 */
function bullmqConnection(
  url: string | undefined,
  redis: RedisConnection,
): { readonly connection: BullmqConnection; close(): Promise<void> } {
  if (url !== undefined) return { connection: { url }, close: async () => undefined };
  const own: RedisConnection = isCluster(redis)
    ? new Cluster(startupNodesOf(redis), {
        ...redis.options,
        redisOptions: { ...redis.options.redisOptions, maxRetriesPerRequest: null },
      })
    : redis.duplicate({ maxRetriesPerRequest: null, autoResendUnfulfilledCommands: true });
  own.on('error', () => undefined); // BullMQ's calls report their own failures
  return { connection: own, close: () => quit(own) };
}
