/**
 * `ts-reactor dashboard`: serves the dashboard standalone over Redis until SIGTERM or SIGINT.
 * With `--module`, the module's reactors get their graphs drawn, their secrets hidden by their
 * contracts, and retry / cancel / undo run through an engine that enqueues to the workers.
 *
 * @module
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Pool } from 'pg';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import { connect, readTarget, TARGET_OPTIONS, type OpsIO } from './ops-target.js';
import { redactUrl } from './redis-check.js';
import { closeModule, closeWarning } from './module-close.js';
import { loadWorkerApp, needPg, UsageError } from './worker.js';
import { openConnection, placeOptions, type RedisPlace } from './redis-place.js';
import type { QueueInspector } from '../ports/queue-inspector.js';
import type { PrometheusMetrics } from '../metrics/prometheus.js';
import type { Readiness } from '../metrics/server.js';
import type { SubscriptionsState } from '../metrics/readiness.js';
import type { Store } from '../ports/store.js';

/** Usage of `ts-reactor dashboard`. */
export const DASHBOARD_USAGE = `Usage: ts-reactor dashboard [--redis <url> | --redis-cluster <nodes>] [options]

Serves the dashboard (executions with search and bulk actions, execution detail with its
timeline, coordination view, queue and workers, actions) over Redis, with /metrics, /healthz
and /readyz.

Options:
  --redis <url>         Redis URL; default: the REDIS_URL variable
  --redis-cluster <nodes>
                        a Redis Cluster instead: host:port,host:port,… (any of its nodes)
  --prefix <prefix>     key prefix of the store, coordinator and queue (default: the
                        module's prefix, else the TS_REACTOR_PREFIX variable, else rx)
  --queue <name>        BullMQ queue name retries are enqueued to (default: the module's
                        options.queueName, else ts-reactor)
  --module <path>       the app module, as the worker loads it: its reactors (graphs,
                        redaction, actions), prefix and queue
  --port <n>            port to listen on (default 3000; 0 picks a free one)
  --host <host>         interface to listen on (default 127.0.0.1)
  --base-path <path>    serve under this path, e.g. /ops
  --read-only           hide and refuse every action
  --events              show the Events page (sent events, newest first)
  --connect-timeout <ms>  how long the first PING may take (default 2000)`;

/** What the command needs from its surroundings (tests pass their own). */
export interface DashboardCommandOptions {
  /** Stops the server like a signal does. */
  readonly stop?: AbortSignal;
  /** Signals that stop it. Default SIGTERM and SIGINT. */
  readonly signals?: readonly NodeJS.Signals[];
}

/** Runs `ts-reactor dashboard <args>`; resolves to the exit code once the server has stopped. */
export async function runDashboardCommand(
  args: readonly string[],
  io: OpsIO,
  options: DashboardCommandOptions = {},
): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        ...TARGET_OPTIONS,
        queue: { type: 'string' },
        module: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        'base-path': { type: 'string' },
        'read-only': { type: 'boolean' },
        events: { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // The connection options, checked before the module loads (and, on PostgreSQL, that `pg` is installed).
  if (readTarget(values, io.env ?? process.env).postgres !== undefined) await needPg();
  const appModule = values.module === undefined ? undefined : await loadWorkerApp(resolve(values.module));
  const target = readTarget(values, io.env ?? process.env, appModule?.module.prefix);
  const queueName = values.queue ?? appModule?.module.options?.queueName;
  const port = values.port === undefined ? 3000 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port must be an integer from 0 to 65535; got "${values.port}"`, false);
  const reactors: AnyReactorDefinition[] = appModule?.reactors ?? [];
  const { createDashboard, normalizeBasePath } = await import('../web/index.js').catch((error: unknown) => {
    throw new UsageError(
      `the dashboard needs the optional peers hono and @hono/node-server (npm install hono @hono/node-server): ${(error as Error).message}`,
      false,
    );
  });
  let base: string;
  try {
    base = normalizeBasePath(values['base-path']);
  } catch (error) {
    throw new UsageError(`--base-path: ${(error as Error).message}`, false);
  }
  const { serve } = await import('@hono/node-server').catch((error: unknown) => {
    throw new UsageError(
      `the dashboard needs the optional peer @hono/node-server (npm install @hono/node-server): ${(error as Error).message}`,
      false,
    );
  });
  const conn = await connect(target, reactors);
  const { recordTtlMs, jobRetention } = appModule?.module.options ?? {};
  // An operator's action writes records and adds jobs: with the module's retention, as its workers do.
  const kept = {
    ...(recordTtlMs === undefined ? {} : { recordTtlMs }),
    ...(jobRetention === undefined ? {} : { jobRetention }),
    reactors,
    ...(queueName === undefined ? {} : { queueName }),
  };
  const runtime =
    target.postgres === undefined
      ? (await import('../bullmq.js')).createRedisRuntime({
          ...placeOptions(target),
          ...kept,
          ...(target.prefix === undefined ? {} : { prefix: target.prefix }),
        })
      : (await import('../postgres.js')).createPostgresRuntime({
          connection: target.url,
          ...kept,
          ...(target.postgres.schema === undefined ? {} : { schema: target.postgres.schema }),
        });
  const datastore = conn.backend.pool === undefined ? { redis: target } : { postgres: conn.backend.pool };
  const operations = await dashboardOperations(datastore, runtime.queueInspector, io, {
    store: conn.backend.store,
    subscriptions: () => runtime.health().subscriptions,
  });
  const app = createDashboard({
    engine: runtime.engine,
    schedules: runtime.schedules,
    queue: runtime.queueInspector,
    readiness: operations.readiness,
    ...(operations.metrics === undefined ? {} : { metrics: operations.metrics }),
    store: conn.backend.store,
    coordinator: conn.backend.coordinator,
    reactors,
    readOnly: values['read-only'] === true,
    events: values.events === true,
    basePath: base,
  });
  const host = values.host ?? '127.0.0.1';
  let server: ReturnType<typeof serve>;
  try {
    server = await new Promise<ReturnType<typeof serve>>((ready, fail) => {
      const s = serve({ fetch: app.fetch, port, hostname: host }, () => ready(s));
      s.once('error', fail);
    });
  } catch (error) {
    operations.close();
    await runtime.close();
    await conn.close();
    throw new UsageError(`cannot listen on ${host}:${port}: ${(error as Error).message}`, false);
  }
  const address = server.address();
  const actual = typeof address === 'object' && address !== null ? address.port : port;
  io.out(
    `ts-reactor dashboard: listening on http://${host}:${actual}${base}/executions over ${target.cluster === undefined ? redactUrl(target.url) : `the cluster at ${target.cluster.map((n) => `${n.host}:${n.port}`).join(',')}`} (${target.postgres === undefined ? `prefix ${target.prefix ?? 'rx'}` : `schema ${target.postgres.schema ?? 'ts_reactor'}`}${values['read-only'] ? ', read-only' : ''}; reactors: ${reactors.map((r) => r.name).join(', ') || 'none'})`,
  );
  await untilStopped(options);
  await new Promise<void>((done) => server.close(() => done()));
  operations.close();
  await runtime.close();
  await conn.close();
  const warning = closeWarning(await closeModule(appModule?.module));
  if (warning !== undefined) io.err(`ts-reactor dashboard: warning: ${warning}`);
  io.out('ts-reactor dashboard: stopped');
  return 0;
}

/**
 * The dashboard's `/readyz` (Redis answers PING, on a connection of its own, or PostgreSQL
 * `SELECT 1` on the read model's pool; the runtime's subscriptions are confirmed) and `/metrics` (the queue gauges and the executions by status,
 * when `prom-client` is installed; without it `/metrics` answers 404).
 */
async function dashboardOperations(
  datastore: { readonly redis: RedisPlace } | { readonly postgres: Pool },
  queue: QueueInspector,
  io: OpsIO,
  over: { readonly store: Store; readonly subscriptions: () => SubscriptionsState },
): Promise<{ readiness: Readiness; metrics?: PrometheusMetrics; close: () => void }> {
  const [{ postgresReadiness, redisReadiness }, { executionCounts }, { boundedRead }] = await Promise.all([
    import('../metrics/readiness.js'),
    import('../otel/execution-counts.js'),
    import('../metrics/bounded-read.js'),
  ]);
  const redis = 'redis' in datastore ? await openConnection(datastore.redis) : undefined; // /readyz reports its errors
  const readiness =
    'redis' in datastore
      ? redisReadiness({ redis: redis!, subscriptions: over.subscriptions })
      : postgresReadiness({ pool: datastore.postgres, subscriptions: over.subscriptions });
  const executions = executionCounts(over.store);
  const close = (): void => redis?.disconnect();
  try {
    const { prometheusMetrics } = await import('../metrics/prometheus.js');
    const metrics = prometheusMetrics({
      gauges: {
        queueJobs: async () => (await queue.inspectQueue({ limit: 1 })).counts,
        queueOldestWaitingMs: async () => {
          const snapshot = await queue.inspectQueue({ limit: 1 });
          return snapshot.oldestWaitingAt === undefined ? undefined : snapshot.at - snapshot.oldestWaitingAt;
        },
        executionsByStatus: () => boundedRead(executions()),
      },
    });
    return { readiness, metrics, close };
  } catch {
    io.out('ts-reactor dashboard: /metrics is off (install prom-client to serve it)');
    return { readiness, close };
  }
}

function untilStopped(options: DashboardCommandOptions): Promise<void> {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  return new Promise<void>((done) => {
    const finish = (): void => {
      for (const signal of signals) process.off(signal, finish);
      options.stop?.removeEventListener('abort', finish);
      done();
    };
    for (const signal of signals) process.once(signal, finish);
    options.stop?.addEventListener('abort', finish, { once: true });
    if (options.stop?.aborted) finish();
  });
}
