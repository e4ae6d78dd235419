/**
 * `ts-reactor worker --metrics-port`: the worker's Prometheus metrics and health routes
 * (`ts-reactor/metrics`), loaded only when asked for, so a worker without `prom-client` runs.
 * Besides the engine's events, the metrics sample at each scrape what the queue holds (jobs by
 * state, the oldest runnable job's wait) and the unfinished executions by state (parked,
 * sleeping, paused …), on connections of their own, over Redis or over PostgreSQL.
 *
 * @module
 */
import type { Cluster, Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { Middleware } from '../engine/model/events.js';
import type { GaugeSources } from '../otel/metric-spec.js';
import { boundedRead as bounded } from '../metrics/bounded-read.js';
import type { SubscriptionsState } from '../metrics/readiness.js';
import type { BullmqQueueStats } from '../queue/bullmq-stats.js';
import { MissingPeerError } from './redis-check.js';
import { openConnection, placeOptions, type RedisPlace } from './redis-place.js';

/** The worker's operations server: its middleware, then its routes once the worker runs. */
export interface WorkerOperations {
  /** Add it to the runtime's middleware: the metrics observe every event. */
  readonly middleware: Middleware;
  /** Serves `/metrics`, `/healthz` and `/readyz` (Redis or PostgreSQL, the runtime's subscriptions or LISTEN connection, the worker); resolves to the server's base URL. */
  start(workerRunning: () => boolean, subscriptions?: () => SubscriptionsState): Promise<string>;
  close(): Promise<void>;
}

/** Where the worker's queue and records are: the runtime's names. */
export interface WorkerTarget extends RedisPlace {
  readonly prefix: string | undefined;
  readonly queueName: string | undefined;
}

/** The gauges' sources of a worker, on connections of their own; close them when the worker stops. */
export interface WorkerGauges {
  /** For `prometheusMetrics({ gauges })` or `otelMetrics({ gauges })`. */
  readonly sources: GaugeSources;
  /** The connection of the store reads, also the readiness check's: Redis (PING) or a PostgreSQL pool (SELECT 1). */
  readonly datastore: { readonly redis: Redis | Cluster } | { readonly postgres: Pool };
  close(): Promise<void>;
}

/** The operations of a worker on `port` (0: a free one), its gauges read from `gauges`. @throws MissingPeerError without `prom-client`. */
export async function workerOperations(port: number, gauges: WorkerGauges): Promise<WorkerOperations> {
  const module = await import('../metrics/index.js').catch((error: unknown) => {
    const missing = (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND';
    if (missing && String((error as Error).message).includes("'prom-client'"))
      throw new MissingPeerError('prom-client', error);
    throw error;
  });
  const metrics = module.prometheusMetrics({ gauges: gauges.sources });
  let close = async (): Promise<void> => undefined;
  return {
    middleware: metrics.middleware,
    async start(workerRunning, subscriptions) {
      const checked = { workerRunning, ...(subscriptions === undefined ? {} : { subscriptions }) };
      const { datastore } = gauges;
      const readiness =
        'redis' in datastore
          ? module.redisReadiness({ redis: datastore.redis, ...checked })
          : module.postgresReadiness({ pool: datastore.postgres, ...checked });
      const server = await module.serveOperations({ port, metrics, readiness });
      close = () => server.close();
      return server.url;
    },
    close: () => close(),
  };
}

/**
 * The gauges' sources over `target`: a connection of their own for the store reads and a BullMQ
 * queue reader. `subscriptions`: the runtime's subscription health once it exists (the
 * `ts_reactor_wakeups_degraded` gauge reads 0 before).
 */
export async function workerGauges(
  target: WorkerTarget,
  subscriptions: () => SubscriptionsState | undefined = () => undefined,
): Promise<WorkerGauges> {
  const redis = await openConnection(target); // readiness reports its errors
  const [{ createRedisBackend }, { createBullmqQueueStats }, { executionCounts }] = await Promise.all([
    import('../storage/redis/index.js'),
    import('../queue/bullmq-stats.js'),
    import('../otel/execution-counts.js'),
  ]);
  const prefix = target.prefix === undefined ? {} : { prefix: target.prefix };
  const backend = createRedisBackend({ redis, ...prefix });
  const stats: BullmqQueueStats = createBullmqQueueStats({
    ...placeOptions(target),
    ...prefix,
    ...(target.queueName === undefined ? {} : { name: target.queueName }),
  });
  const counts = executionCounts(backend.store);
  return {
    sources: {
      queueJobs: () => bounded(stats.jobCounts()),
      queueOldestWaitingMs: () => bounded(stats.oldestWaitingMs()),
      executionsByStatus: () => bounded(counts()),
      wakeUpsDegraded: () => subscriptions()?.degraded === true,
    },
    datastore: { redis },
    close: async () => {
      await stats.close().catch(() => undefined);
      await backend.close().catch(() => undefined);
      redis.disconnect();
    },
  };
}

/** Where a PostgreSQL worker's queue and records are. */
export interface PostgresWorkerTarget {
  /** The connection string. */
  readonly url: string;
  /** The schema of ts-reactor's tables (default `ts_reactor`). */
  readonly schema: string | undefined;
  readonly queueName: string | undefined;
}

/**
 * The gauges' sources of a worker over PostgreSQL: a pool of their own for the store reads (also
 * the readiness check's) and a BullMQ queue reader on PostgreSQL.
 */
export async function postgresWorkerGauges(
  target: PostgresWorkerTarget,
  subscriptions: () => SubscriptionsState | undefined = () => undefined,
): Promise<WorkerGauges> {
  const [{ PostgresStore }, { createBullmqPostgresQueueStats }, { executionCounts }] = await Promise.all([
    import('../storage/postgres/store.js'),
    import('../queue/bullmq-postgres.js'),
    import('../otel/execution-counts.js'),
  ]);
  const store = new PostgresStore({
    connection: { connectionString: target.url, max: 2 },
    ...(target.schema === undefined ? {} : { schema: target.schema }),
  });
  const stats: BullmqQueueStats = createBullmqPostgresQueueStats({
    connection: { url: target.url, poolSize: 1 },
    ...(target.queueName === undefined ? {} : { name: target.queueName }),
  });
  const counts = executionCounts(store);
  return {
    sources: {
      queueJobs: () => bounded(stats.jobCounts()),
      queueOldestWaitingMs: () => bounded(stats.oldestWaitingMs()),
      executionsByStatus: () => bounded(counts()),
      wakeUpsDegraded: () => subscriptions()?.degraded === true,
    },
    datastore: { postgres: store.pool },
    close: async () => {
      await stats.close().catch(() => undefined);
      await store.close().catch(() => undefined);
    },
  };
}
