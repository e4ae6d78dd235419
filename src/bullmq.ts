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
import { createEngine, type Engine, type EngineOptions } from './engine/engine.js';
import {
  createBullmqConsumer,
  createBullmqQueue,
  type BullmqConnection,
  type BullmqConsumerOptions,
} from './queue/bullmq.js';
import type { QueueInspector } from './ports/queue-inspector.js';
import { RedisWaitList } from './storage/redis/wait-list.js';
import { createWorker, type Worker, type WorkerCloseOptions } from './queue/worker.js';
import { hostWorkerName } from './queue/worker-name.js';
import { Cluster } from 'ioredis';
import { createRedisBackend, DEFAULT_PREFIX, type SubscriptionHealth } from './storage/redis/index.js';
import {
  isCluster,
  quit,
  startupNodesOf,
  type RedisClusterTarget,
  type RedisConnection,
} from './storage/redis/connection.js';
import { durabilityAtStartUp, type DurabilityReport } from './storage/redis/durability.js';
import { silentLogger } from './engine/model/logger.js';
import { traceBoundOf } from './engine/model/trace-bound.js';
import type { JobConsumer } from './ports/queue.js';
import type { Logger } from './dsl/context.js';
import { createBullmqSchedules } from './queue/bullmq-schedules.js';
import { Schedules } from './schedules/service.js';
import { scheduleObservers, type RuntimeMiddleware } from './schedules/events.js';
import type { ScheduleInputFn } from './schedules/types.js';
import { systemClock } from './ports/clock.js';
import { checkedRecordTtl } from './storage/record-ttl.js';
import { jobRetentionOf, type JobRetentionOptions } from './queue/job-retention.js';

export * from './queue/bullmq.js';
export { RedisWaitList } from './storage/redis/wait-list.js';
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
export interface RedisRuntimeOptions extends Partial<
  Omit<EngineOptions, 'store' | 'coordinator' | 'queue' | 'waitList' | 'fanOut' | 'jobLeases' | 'middleware'>
> {
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

/** What {@link RedisRuntime.health} reports, read at each readiness check. */
export interface RuntimeHealth {
  /**
   * The runtime's pub/sub subscriptions (lock and semaphore wake-ups, grants, cancel
   * announcements): `confirmed` while each channel listened on is subscribed on a connected
   * subscriber and, after a reconnect, answered again; true when nothing is listened on.
   */
  readonly subscriptions: SubscriptionHealth;
}

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

/** Wires the Redis store and coordinator, the BullMQ queue and the Redis wait lists into one engine. */
export function createRedisRuntime(options: RedisRuntimeOptions): RedisRuntime {
  const {
    url,
    redis,
    cluster,
    prefix,
    queueName,
    stall,
    lockHandOff,
    requireDurability = false,
    outageToleranceMs,
    maxRecordBytes,
    maxMapStateBytes,
    recordTtlMs: askedTtl,
    jobRetention,
    reactors = [],
    scheduleInputs = {},
    ...engineOptions
  } = options;
  // Refused before any connection opens:
  traceBoundOf(engineOptions.maxTraceEntries, 'createRedisRuntime');
  const recordTtlMs = checkedRecordTtl('createRedisRuntime', askedTtl);
  const retention = jobRetentionOf('createRedisRuntime', jobRetention);
  const outage = outageToleranceMs === undefined ? {} : { outageToleranceMs };
  const target = [url, redis, cluster].filter((given) => given !== undefined).length;
  if (target !== 1)
    throw new RangeError(`createRedisRuntime needs exactly one of url, redis or cluster; got ${String(target)}`);
  const backend = createRedisBackend({
    ...(url === undefined ? {} : { url }),
    ...(redis === undefined ? {} : { redis }),
    ...(cluster === undefined ? {} : { cluster }),
    ...(prefix === undefined ? {} : { prefix }),
    ...(lockHandOff === undefined ? {} : { lockHandOff }),
    ...(maxRecordBytes === undefined ? {} : { maxRecordBytes }),
    ...(maxMapStateBytes === undefined ? {} : { maxMapStateBytes }),
    ...(recordTtlMs === undefined ? {} : { recordTtlMs }),
    ...outage,
  });
  const ready = durabilityAtStartUp(backend.redis, {
    required: requireDurability,
    logger: engineOptions.logger ?? silentLogger,
    closing: () => closing !== undefined,
  });
  const onCluster = isCluster(backend.redis);
  const names = {
    ...(queueName === undefined ? {} : { name: queueName }),
    // On a cluster every key of a BullMQ queue must share one slot: a hash-tagged prefix.
    ...(onCluster ? { prefix: `{${prefix ?? DEFAULT_PREFIX}}` } : prefix === undefined ? {} : { prefix }),
  };
  // BullMQ gets connections of its own: its many scripts would otherwise ride along every store transaction.
  const bullmq = bullmqConnection(url, backend.redis);
  const connection = bullmq.connection;
  const queue = createBullmqQueue({ connection, ...names, ...outage, jobRetention: retention });
  const waitList = new RedisWaitList({ redis: backend.redis, ...(prefix === undefined ? {} : { prefix }) });
  const created = createEngine({
    workerName: hostWorkerName(),
    ...engineOptions,
    store: backend.store,
    coordinator: backend.coordinator,
    jobLeases: backend.jobLeases,
    queue,
    waitList,
    fanOut: backend.fanOut,
    reactors,
  });
  const engine = requireDurability ? engineAfter(created, ready) : created;
  const workers: Worker[] = [];
  let closing: Promise<void> | undefined;
  const ticks = createBullmqSchedules({ connection, ...names });
  const schedules = new Schedules({
    backend: ticks,
    engine,
    clock: engineOptions.clock ?? systemClock,
    reactors,
    inputs: scheduleInputs,
    maxInputBytes: backend.store.maxRecordBytes, // a fixed input must fit a record
    observers: scheduleObservers(engineOptions.middleware),
    ...(engineOptions.logger === undefined ? {} : { logger: engineOptions.logger }),
  });
  let stopTicks: (() => Promise<void>) | undefined;
  return {
    engine,
    schedules,
    queueInspector: queue,
    ready: () => ready,
    health: () => ({ subscriptions: backend.subscriptions() }),
    startWorker: (workerOptions: { readonly concurrency?: number; readonly shutdownTimeoutMs?: number } = {}) => {
      const consumer = createBullmqConsumer({
        connection,
        ...names,
        ...stall,
        ...(engineOptions.logger ? consumerLogging(engineOptions.logger) : {}),
      });
      const worker = createWorker({
        engine,
        consumer: requireDurability ? consumerAfter(consumer, ready, engineOptions.logger ?? silentLogger) : consumer,
        ...(workerOptions.concurrency === undefined ? {} : { concurrency: workerOptions.concurrency }),
        ...(workerOptions.shutdownTimeoutMs === undefined
          ? {}
          : { shutdownTimeoutMs: workerOptions.shutdownTimeoutMs }),
      });
      workers.push(worker);
      stopTicks ??= schedules.consume();
      return worker;
    },
    close: (closeOptions?: WorkerCloseOptions) =>
      (closing ??= (async () => {
        // Workers first (their jobs finish), then the wake-ups those jobs started, then the connections:
        // nothing is sent on a closed connection, so nothing rejects unobserved (docs/decisions/048).
        await stopTicks?.();
        await Promise.all(workers.map((w) => w.close(closeOptions)));
        await engine.idle();
        await ticks.close();
        await queue.close();
        await bullmq.close();
        await backend.close();
      })()),
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

/** Infrastructure failures of a worker, logged with the execution they concern (the job id starts with it). */
function consumerLogging(logger: Logger): Pick<BullmqConsumerOptions, 'onError' | 'onFailed'> {
  return {
    onError: (error) => logger.error({ err: error }, 'BullMQ worker error (it reconnects)'),
    onFailed: ({ jobId, error, final }) => {
      const fields = { executionId: jobId.split(':')[0], jobId, final, err: error };
      if (final) logger.error(fields, `job ${jobId} failed for good: ${error.message}`);
      else logger.warn(fields, `job ${jobId} failed; BullMQ delivers it again: ${error.message}`);
    },
  };
}

/** `engine` whose calls that start or continue executions wait for `ready`, and reject with its error (requireDurability). */
function engineAfter(engine: Engine, ready: Promise<unknown>): Engine {
  const gate = <F extends (...args: never[]) => Promise<unknown>>(call: F): F =>
    (async (...args: Parameters<F>) => {
      await ready;
      return call(...args);
    }) as unknown as F;
  return {
    ...engine,
    run: gate(engine.run),
    start: gate(engine.start),
    startMany: gate(engine.startMany),
    retry: gate(engine.retry),
    resume: gate(engine.resume),
    retryStep: gate(engine.retryStep),
    skipStep: gate(engine.skipStep),
    fork: gate(engine.fork),
  };
}

/** `consumer` that starts taking jobs only once `ready` resolves; when it rejects, never (requireDurability). */
function consumerAfter(consumer: JobConsumer, ready: Promise<unknown>, logger: Logger): JobConsumer {
  let stopped = false;
  return {
    ...consumer,
    start: (processor, startOptions) => {
      ready
        .then(() => {
          if (!stopped) consumer.start(processor, startOptions);
        })
        .catch((error: unknown) =>
          logger.error(
            { err: error },
            `this worker takes no jobs: ${error instanceof Error ? error.message : String(error)}`,
          ),
        );
    },
    stop: (...args: Parameters<JobConsumer['stop']>) => {
      stopped = true;
      return consumer.stop(...args);
    },
  };
}
