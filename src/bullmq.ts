/**
 * `ts-reactor/bullmq`: durable background execution on Redis and BullMQ, in any number of
 * worker processes.
 *
 * @example
 * ```ts
 * import { createRedisRuntime } from 'ts-reactor/bullmq';
 * const runtime = createRedisRuntime({ url: process.env.REDIS_URL!, reactors: [checkout] });
 * const queued = await runtime.engine.start(checkout, { orderId: 'o-1' });
 * const worker = runtime.startWorker({ concurrency: 8 });   // in a worker process
 * // On a Redis Cluster: createRedisRuntime({ cluster: { nodes: [{ host: '10.0.0.1', port: 7000 }] }, reactors: [checkout] })
 * ```
 *
 * @module
 */
import type { AnyReactorDefinition } from './dsl/definition.js';
import type { Engine, EngineOptions } from './engine/engine.js';
import { traceBoundOf } from './engine/model/trace-bound.js';
import type { BullmqConsumerOptions } from './queue/bullmq.js';
import { jobRetentionOf, type JobRetentionOptions } from './queue/job-retention.js';
import { createRedisBullmqBackend } from './queue/redis-backend.js';
import type { Worker, WorkerCloseOptions } from './queue/worker.js';
import type { QueueInspector } from './ports/queue-inspector.js';
import type { BackendHealth } from './ports/health.js';
import { createRuntime, type BackendPart } from './runtime/create-runtime.js';
import type { RuntimeMiddleware } from './schedules/events.js';
import type { Schedules } from './schedules/service.js';
import type { ScheduleInputFn } from './schedules/types.js';
import type { RedisClusterTarget, RedisConnection } from './storage/redis/connection.js';
import type { DurabilityReport } from './storage/redis/durability.js';
import { checkedRecordTtl } from './storage/record-ttl.js';

export * from './queue/bullmq.js';
export { RedisWaitList } from './storage/redis/wait-list.js';
export { RedisEventLog, type RedisEventLogOptions } from './storage/redis/event-log.js';
export { RedisEventWaits, type RedisEventWaitsOptions } from './storage/redis/event-waits.js';
export {
  createRedisBullmqBackend,
  type RedisBullmqBackend,
  type RedisBullmqBackendOptions,
} from './queue/redis-backend.js';
export {
  DEFAULT_JOB_RETENTION,
  type JobRetention,
  type JobRetentionOptions,
  type KeepJobs,
} from './queue/job-retention.js';
export {
  createWorker,
  DEFAULT_SHUTDOWN_GRACE_MS,
  type Worker,
  type WorkerCloseOptions,
  type WorkerCloseReport,
  type WorkerOptions,
} from './queue/worker.js';
export { decodeJob, encodeJob } from './queue/payload.js';
export type { SubscriptionHealth } from './storage/redis/index.js';
export { createBullmqSchedules, scheduleQueueName, type BullmqSchedulesOptions } from './queue/bullmq-schedules.js';
export {
  defineWorker,
  type WorkerContext,
  type WorkerDefinition,
  type WorkerModule,
  type WorkerModuleOptions,
} from './cli/worker-module.js';

/** Options of {@link createRedisRuntime}: where Redis is (exactly one of `url`, `redis` or `cluster`) and its settings. */
export interface RedisRuntimeOptions extends Partial<Omit<EngineOptions, BackendPart | 'middleware'>> {
  /** Middleware: the engine's events and work scopes, and with `onScheduleEvent` the schedules' events. */
  readonly middleware?: readonly RuntimeMiddleware[];
  /** Connection URL of a single server (e.g. `redis://127.0.0.1:6379`). Exactly one of `url`, `redis` or `cluster`. */
  readonly url?: string;
  /**
   * An ioredis `Redis` or `Cluster` you created (the runtime never quits it; BullMQ gets
   * connections of its own like it). On a `Cluster`, keys are laid out by slot and BullMQ's prefix
   * is hash-tagged, `{<prefix>}` (docs/cluster.md).
   */
  readonly redis?: RedisConnection;
  /** A Redis Cluster's startup nodes and ioredis `Cluster` options (docs/cluster.md). */
  readonly cluster?: RedisClusterTarget;
  /** Key prefix of the store, coordinator, wait lists and queue. Default `rx`. */
  readonly prefix?: string;
  readonly reactors?: readonly AnyReactorDefinition[];
  /** BullMQ queue name. Default `ts-reactor`. On a cluster, BullMQ's keys are `{<prefix>}:<queueName>:…` (one slot per prefix). */
  readonly queueName?: string;
  /** Worker lock / stall detection tunables (how fast a dead worker's job is redelivered). */
  readonly stall?: Pick<BullmqConsumerOptions, 'lockDurationMs' | 'stalledIntervalMs' | 'maxStalledCount'>;
  /**
   * Hand a released lock straight to a waiter of this process (docs/decisions/037, 060), and queue
   * this process for grants of locks released by other processes (docs/decisions/059). Default
   * true; `false` frees the key at every release and takes no grants.
   */
  readonly lockHandOff?: boolean;
  /**
   * Refuse to work on a Redis that does not keep executions across a restart: unless the start-up
   * check finds AOF (`appendonly yes`, `appendfsync always` or `everysec`) and
   * `maxmemory-policy noeviction`, {@link RedisRuntime.ready}, `engine.run`, `start`, `retry` and
   * `resume` reject with `DurabilityError` (code `durability_required`) and workers take no jobs.
   * A server whose settings cannot be read (`CONFIG` disabled or renamed) is refused too. Default
   * false: the check only logs its warnings (docs/background.md, "What survives a Redis restart").
   */
  readonly requireDurability?: boolean;
  /**
   * How long store, coordinator and queue calls ride out a Redis outage (connection lost, server
   * restarting or loading) before they fail: each call is made again with backoff until this
   * long after its first failure (docs/background.md, "Redis outages"). Meanwhile a worker's
   * jobs wait; a job that still cannot write its outcome fails and BullMQ delivers it again.
   * Default 30 s; 0 fails at the first failure.
   */
  readonly outageToleranceMs?: number;
  /**
   * Size limit of one serialized execution record in bytes (docs/limits.md), as
   * `createRedisBackend({ maxRecordBytes })`. Default 512 KiB.
   */
  readonly maxRecordBytes?: number;
  /**
   * How long an execution record (and its idempotency claim, its index entries) is kept after its
   * last write, in ms (docs/operations.md, "Retention"), as `createRedisBackend({ recordTtlMs })`:
   * a positive integer, or `Infinity` to keep records. Default 7 days. Anything else is a
   * `RuntimeOptionError`, thrown before any connection opens. Give every process that writes
   * records (starters, workers, operators) the same value: each write sets the TTL anew.
   */
  readonly recordTtlMs?: number;
  /**
   * How many finished jobs BullMQ keeps of each outcome, and for how long: the `removeOnComplete`
   * / `removeOnFail` of every job this runtime adds (docs/limits.md, "BullMQ's finished jobs").
   * Default: completed ones for 1 hour, at most 1,000; failed ones for 7 days, at most 1,000.
   * `{ completed: { count: 0 } }` removes each job as it completes.
   */
  readonly jobRetention?: JobRetentionOptions;
  /**
   * Size limit of one large map's element states, kept apart from the record (docs/limits.md), as
   * `createRedisBackend({ maxMapStateBytes })`. Default 64 MiB.
   */
  readonly maxMapStateBytes?: number;
  /** Computed schedule inputs by name (a schedule's `inputFrom`), called in the worker with each tick's time (docs/time.md, "Schedules"). */
  readonly scheduleInputs?: Readonly<Record<string, ScheduleInputFn>>;
}

/**
 * What {@link RedisRuntime.health} reports, read at each readiness check: the runtime's pub/sub
 * subscriptions (lock and semaphore wake-ups, grants, cancel announcements), `confirmed` while
 * each channel listened on is subscribed on a connected subscriber and, after a reconnect,
 * answered again; true when nothing is listened on.
 */
export type RuntimeHealth = BackendHealth;

/** An engine over Redis + BullMQ, and a way to start workers for it. */
export interface RedisRuntime {
  readonly engine: Engine;
  /**
   * Schedules on BullMQ's job schedulers (docs/time.md, "Schedules"): any process may upsert,
   * list or remove them; the ticks are taken by this runtime's workers (from the first
   * `startWorker`), each tick by one of them.
   */
  readonly schedules: Schedules;
  /** The runtime's BullMQ queue for operators: job counts, delayed and active jobs, workers online (the dashboard's `queue` option). */
  readonly queueInspector: QueueInspector;
  /**
   * The start-up durability check, run once when the runtime is created: what Redis keeps across
   * a restart. Its warnings are logged through the engine's `logger`. With `requireDurability`
   * it rejects with `DurabilityError` when Redis is not durable; await it before starting work
   * to fail fast.
   *
   * @example
   * ```ts
   * const report = await runtime.ready();
   * if (!report.durable) console.warn(report.warnings.join('\n'));
   * ```
   */
  ready(): Promise<DurabilityReport>;
  /**
   * The runtime's health now, for a readiness check: e.g.
   * `redisReadiness({ redis, subscriptions: () => runtime.health().subscriptions })` of
   * `ts-reactor/metrics` makes `/readyz` answer 503 while the subscriptions are not confirmed.
   */
  health(): RuntimeHealth;
  /**
   * Starts a worker in this process. `shutdownTimeoutMs`: the deadline of its close (and of
   * {@link RedisRuntime.close}): jobs still running that long after the close began have their
   * steps' `ctx.signal` aborted with `WorkerShutdownError` and are handed back to the queue, to
   * resume on another worker at once (docs/background.md, "Shutdown"). Default: no deadline.
   */
  startWorker(options?: { readonly concurrency?: number; readonly shutdownTimeoutMs?: number }): Worker;
  /**
   * Closes the workers started here (`worker.close(options)`: their in-flight jobs finish, or are
   * handed back at the deadline — `timeoutMs`, else each worker's `shutdownTimeoutMs`), waits for
   * the wake-ups they started ({@link Engine.idle}), then closes every connection. Calling it
   * again returns the same promise.
   */
  close(options?: WorkerCloseOptions): Promise<void>;
}

/**
 * Wires the Redis store and coordinator, the BullMQ queue and the Redis wait lists into one
 * engine: builds the Redis backend (`createRedisBullmqBackend`) and runs `createRuntime` over it.
 *
 * @throws RangeError unless exactly one of `url`, `redis` or `cluster` is given, or when
 *   `maxTraceEntries` is out of range; RuntimeOptionError when `recordTtlMs` or `jobRetention`
 *   is not valid — all before any connection opens.
 */
export function createRedisRuntime(options: RedisRuntimeOptions): RedisRuntime {
  const {
    url,
    redis,
    cluster,
    prefix,
    queueName,
    stall,
    lockHandOff,
    requireDurability,
    outageToleranceMs,
    maxRecordBytes,
    maxMapStateBytes,
    recordTtlMs,
    jobRetention,
    ...runtimeOptions
  } = options;
  // Refused before any connection opens, under this factory's name:
  traceBoundOf(runtimeOptions.maxTraceEntries, 'createRedisRuntime');
  checkedRecordTtl('createRedisRuntime', recordTtlMs);
  jobRetentionOf('createRedisRuntime', jobRetention);
  const target = [url, redis, cluster].filter((given) => given !== undefined).length;
  if (target !== 1)
    throw new RangeError(`createRedisRuntime needs exactly one of url, redis or cluster; got ${String(target)}`);
  const backend = createRedisBullmqBackend({
    url,
    redis,
    cluster,
    prefix,
    queueName,
    stall,
    lockHandOff,
    requireDurability,
    outageToleranceMs,
    maxRecordBytes,
    maxMapStateBytes,
    recordTtlMs,
    jobRetention,
    logger: runtimeOptions.logger,
  });
  const runtime = createRuntime(backend, runtimeOptions);
  return {
    engine: runtime.engine,
    schedules: runtime.schedules,
    queueInspector: runtime.queueInspector,
    ready: () => backend.durability,
    health: () => runtime.health(),
    startWorker: (workerOptions) => runtime.startWorker(workerOptions),
    close: (closeOptions) => runtime.close(closeOptions),
  };
}
