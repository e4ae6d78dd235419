/**
 * `ts-reactor worker`: processes background executions for the reactors an ES module exports, on
 * Redis and BullMQ or (`--postgres`) on PostgreSQL alone (`worker-postgres.ts`), until SIGTERM or
 * SIGINT (then in-flight jobs finish before it exits).
 *
 * @module
 */
import { workerGauges } from './worker-metrics.js';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { BackgroundOptions } from '../engine/jobs/deps.js';
import { isLogLevel, LOG_LEVELS, type CliLogLevel } from './json-logger.js';
import { DEFAULT_SHUTDOWN_GRACE_MS } from '../queue/worker.js';
import { readBackendUrl } from './backend-url.js';
import type { BackendKind } from '../runtime/backend-schemes.js';
import { openWorkerRuntime, type OpenedWorkerRuntime } from './worker-runtime.js';
import { pingRedis, redactUrl } from './redis-check.js';
import { importModule, ModuleLoadError } from './worker-load.js';
import { isWorkerDefinition, readWorkerModule, WorkerModuleError, type WorkerModule } from './worker-module.js';
import { prefixHasKeys } from './worker-prefix.js';
import { closeModule, closeWarning } from './module-close.js';
import {
  firstNodeUrl,
  openConnection,
  placeOptions,
  readClusterNodes,
  type ClusterNode,
  type RedisPlace,
} from './redis-place.js';

/** The environment variable the key prefix is read from when neither `--prefix` nor the module sets it. */
export const PREFIX_ENV = 'TS_REACTOR_PREFIX';

/** Where a command writes. */
export interface WorkerIO {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/** What the worker command needs from its surroundings (tests pass their own). */
export interface WorkerCommandOptions {
  /** Where `REDIS_URL` is read from. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Stops the worker like a signal does. */
  readonly stop?: AbortSignal;
  /** Signals that stop the worker gracefully. Default SIGTERM and SIGINT. */
  readonly signals?: readonly NodeJS.Signals[];
  /** How long the PING before starting may take, ms. Default 2000. */
  readonly pingTimeoutMs?: number;
}

export const WORKER_USAGE = `Usage: ts-reactor worker --module <path> [--redis <url> | --postgres <url>] [options]

Processes background executions (engine.start, background('all') or hand-offs) of the reactors
the module exports, on Redis and BullMQ or on PostgreSQL. SIGTERM or SIGINT stops taking jobs and exits once the
in-flight ones have finished, or with --shutdown-timeout once that deadline has passed and their
steps were interrupted and handed back to other workers (a second signal exits at once).

Options:
  --redis <url>             Redis URL (redis:// or rediss://); default: the REDIS_URL variable
  --redis-cluster <nodes>   a Redis Cluster instead: host:port,host:port,… (any of its nodes;
                            keys laid out by slot, docs/cluster.md); not with --redis
  --postgres <url>          PostgreSQL instead of Redis (postgres:// or postgresql://): records,
                            coordination and BullMQ's jobs in one database, no Redis (its schema
                            migrated first: ts-reactor migrate --postgres <url>)
  --schema <name>           with --postgres: the schema of ts-reactor's tables (default ts_reactor)
  --module <path>           the app: an ES module, or TypeScript (.ts, .mts, .cts) when tsx is
                            installed, whose exports include reactor definitions (or an array
                            named "reactors"), or a default export made with defineWorker(): its
                            reactors, rateLimits, middleware, logger, prefix, options and a
                            close() awaited at shutdown (at most 10 s)
  --concurrency <n>         jobs processed at once (default 8)
  --prefix <prefix>         key prefix of the store, coordinator and queue (default: the
                            module's prefix, else the TS_REACTOR_PREFIX variable, else rx)
  --queue <name>            BullMQ queue name (default ts-reactor)
  --worker-wait-ms <ms>     wait out contention this long before parking (default 250; 0 parks at once)
  --park-fallback-ms <ms>   delay of a parked execution's fallback job (default 5000)
  --contention-cap <n>      contention attempts before an execution fails (default 100; Infinity: no cap)
  --shutdown-timeout <ms>   after SIGTERM/SIGINT, let in-flight jobs run this long, then abort
                            their steps (ctx.signal) and hand their executions back to the queue
                            (default: wait for them however long they take)
  --log-level <level>       log engine events as JSON lines on stdout at debug, info, warn or
                            error and above, instead of the module's logger (default: the
                            module's logger, else no log lines)
  --require-durability      exit 2 unless Redis keeps executions across a restart (appendonly
                            yes with appendfsync always or everysec, maxmemory-policy
                            noeviction), or PostgreSQL flushes every commit (fsync on,
                            synchronous_commit on); without it, a warning on stderr
  --metrics-port <port>     serve /metrics (Prometheus text), /healthz and /readyz on this port
                            (0: a free one, printed at start-up); needs the prom-client package
  -h, --help                show this help`;

/** A usage problem: exit 2 with this message (and the usage text when `showUsage`). */
export class UsageError extends Error {
  readonly showUsage: boolean;
  constructor(message: string, showUsage = true, options?: ErrorOptions) {
    super(message, options);
    this.showUsage = showUsage;
  }
}

interface WorkerConfig {
  /** The backend the URL's scheme names. */
  readonly backend: BackendKind;
  /** The single server's URL; with `cluster`, the URL of its first node (what is pinged). */
  readonly url: string;
  /** `--schema`: the PostgreSQL schema of ts-reactor's tables. */
  readonly schema: string | undefined;
  /** `--redis-cluster`: the cluster's startup nodes. */
  readonly cluster: readonly ClusterNode[] | undefined;
  readonly modulePath: string;
  readonly concurrency: number;
  readonly prefix: string | undefined;
  readonly envPrefix: string | undefined;
  readonly queueName: string | undefined;
  readonly background: BackgroundOptions;
  readonly logLevel: CliLogLevel | undefined;
  readonly requireDurability: boolean;
  readonly shutdownTimeoutMs: number | undefined;
  readonly metricsPort: number | undefined;
}

function integer(name: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min)
    throw new UsageError(`--${name} must be an integer ≥ ${min}; got "${raw}"`);
  return value;
}

/** `--contention-cap`: an integer ≥ 1, or `Infinity` (no cap); undefined without it. */
function contentionCapOf(raw: string | undefined): number | undefined {
  if (raw?.trim() === 'Infinity') return Infinity;
  try {
    return integer('contention-cap', raw, 1);
  } catch {
    throw new UsageError(`--contention-cap must be an integer ≥ 1 or Infinity; got "${raw}"`);
  }
}

/** `--redis-cluster`'s nodes, refused next to `--redis`; undefined without it. */
function clusterNodes(raw: string | undefined, redis: string | undefined): ClusterNode[] | undefined {
  try {
    return readClusterNodes(raw, redis);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function parseConfig(args: readonly string[], env: Readonly<Record<string, string | undefined>>): WorkerConfig {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        redis: { type: 'string' },
        'redis-cluster': { type: 'string' },
        postgres: { type: 'string' },
        schema: { type: 'string' },
        module: { type: 'string' },
        concurrency: { type: 'string' },
        prefix: { type: 'string' },
        queue: { type: 'string' },
        'worker-wait-ms': { type: 'string' },
        'park-fallback-ms': { type: 'string' },
        'contention-cap': { type: 'string' },
        'log-level': { type: 'string' },
        'require-durability': { type: 'boolean' },
        'shutdown-timeout': { type: 'string' },
        'metrics-port': { type: 'string' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.postgres !== undefined && (values.redis !== undefined || values['redis-cluster'] !== undefined))
    throw new UsageError('--postgres and --redis/--redis-cluster name two backends: give one');
  const cluster = clusterNodes(values['redis-cluster'], values.redis);
  const rawUrl =
    values.postgres ?? (cluster === undefined ? (values.redis ?? env['REDIS_URL']) : firstNodeUrl(cluster));
  const envPrefix = env[PREFIX_ENV] === '' ? undefined : env[PREFIX_ENV];
  if (rawUrl === undefined || rawUrl === '')
    throw new UsageError('missing --redis <url> (or set REDIS_URL), or --postgres <url>');
  const flag = values.postgres === undefined ? 'redis' : 'postgres';
  const url = readBackendUrl(rawUrl, values.postgres === undefined ? undefined : 'postgres');
  if (!url.ok) throw new UsageError(`--${flag}: ${url.message}`, true, { cause: url.cause });
  if (url.backend === 'postgres' && cluster !== undefined)
    throw new UsageError('--redis-cluster takes Redis nodes, not a PostgreSQL URL');
  if (values.schema !== undefined && url.backend !== 'postgres')
    throw new UsageError('--schema goes with --postgres <url> (a Redis worker has --prefix)');
  if (values.module === undefined || values.module === '')
    throw new UsageError('missing --module <path>: an ES module that exports the reactors to process');
  if (values.prefix !== undefined && (values.prefix === '' || /[{}\s]/.test(values.prefix)))
    throw new UsageError(`--prefix must be non-empty, without braces or whitespace; got "${values.prefix}"`);
  if (envPrefix !== undefined && /[{}\s]/.test(envPrefix))
    throw new UsageError(`${PREFIX_ENV} must be without braces or whitespace; got "${envPrefix}"`, false);
  const workerWaitMs = integer('worker-wait-ms', values['worker-wait-ms'], 0);
  const parkFallbackMs = integer('park-fallback-ms', values['park-fallback-ms'], 1);
  const contentionCap = contentionCapOf(values['contention-cap']);
  const shutdownTimeoutMs = integer('shutdown-timeout', values['shutdown-timeout'], 0);
  const metricsPort = integer('metrics-port', values['metrics-port'], 0);
  if (metricsPort !== undefined && metricsPort > 65_535)
    throw new UsageError(`--metrics-port must be a port from 0 to 65535; got "${values['metrics-port']}"`);
  const logLevel = values['log-level'];
  if (logLevel !== undefined && !isLogLevel(logLevel))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}; got "${logLevel}"`, false);
  return {
    backend: url.backend,
    url: url.url,
    schema: values.schema,
    cluster,
    modulePath: resolve(values.module),
    concurrency: integer('concurrency', values.concurrency, 1) ?? 8,
    prefix: values.prefix,
    envPrefix,
    queueName: values.queue,
    background: {
      ...(workerWaitMs === undefined ? {} : { workerWaitMs }),
      ...(parkFallbackMs === undefined ? {} : { parkFallbackMs }),
      ...(contentionCap === undefined ? {} : { contentionCap }),
    },
    logLevel,
    requireDurability: values['require-durability'] ?? false,
    shutdownTimeoutMs,
    metricsPort,
  };
}

function isReactor(value: unknown): value is AnyReactorDefinition {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'reactor' &&
    typeof (value as { name?: unknown }).name === 'string'
  );
}

/**
 * Every reactor definition a module exports: its exports, the elements of an exported `reactors`
 * array (or a default-exported array), and the `reactors` of a default export made with `defineWorker`.
 */
export function collectReactors(exports: Readonly<Record<string, unknown>>): AnyReactorDefinition[] {
  const found: AnyReactorDefinition[] = [];
  const add = (value: unknown): void => {
    if (isReactor(value) && !found.includes(value)) found.push(value);
  };
  for (const [name, value] of Object.entries(exports)) {
    if ((name === 'reactors' || name === 'default') && Array.isArray(value)) value.forEach(add);
    else if (name === 'default' && isWorkerDefinition(value)) (value.reactors ?? []).forEach(add);
    else add(value);
  }
  // Versions of one name (other fingerprints) live side by side (docs/decisions/082); one shape twice is ambiguous.
  const byVersion = new Map<string, AnyReactorDefinition>();
  for (const reactor of found) {
    const key = `${reactor.name}\u0000${reactor.fingerprint}`;
    if (byVersion.has(key))
      throw new UsageError(
        `the module exports two different reactors named "${reactor.name}" of one shape (fingerprint ${reactor.fingerprint}); a worker finds reactors by name and fingerprint`,
        false,
      );
    byVersion.set(key, reactor);
  }
  return found;
}

/** A worker's app: the reactors its module exports and the rest of its {@link WorkerModule}. */
export interface WorkerApp {
  readonly reactors: AnyReactorDefinition[];
  readonly module: WorkerModule;
}

/** Imports the module at `path` (ES or, with tsx, TypeScript) and reads its contract; a {@link UsageError} when it cannot. */
export async function loadWorkerApp(path: string): Promise<WorkerApp> {
  let exports: Readonly<Record<string, unknown>>;
  let module: WorkerModule;
  try {
    exports = await importModule(path);
    module = readWorkerModule(exports);
  } catch (error) {
    if (error instanceof ModuleLoadError) throw new UsageError(error.message, false);
    if (error instanceof WorkerModuleError) throw new UsageError(`--module: ${path}: ${error.message}`, false);
    throw error;
  }
  const listed = module.reactors;
  if (listed !== undefined && (!Array.isArray(listed) || !listed.every(isReactor)))
    throw new UsageError(`--module: ${path}: reactors must be an array of reactor definitions`, false);
  const reactors = collectReactors(exports);
  if (reactors.length === 0)
    throw new UsageError(
      `--module: ${path} exports no reactor definitions (export them, an array named "reactors", or defineWorker({ reactors }))`,
      false,
    );
  return { reactors, module };
}

/** Imports the module at `path` and collects its reactors; a {@link UsageError} when it cannot. */
export async function loadReactors(path: string): Promise<AnyReactorDefinition[]> {
  return (await loadWorkerApp(path)).reactors;
}

/** Runs `ts-reactor worker <args>`; resolves to the exit code once the worker has stopped. */
export async function runWorkerCommand(
  args: readonly string[],
  io: WorkerIO,
  options: WorkerCommandOptions = {},
): Promise<number> {
  let config: WorkerConfig;
  let app: WorkerApp;
  try {
    config = parseConfig(args, options.env ?? process.env);
    if (config.backend === 'postgres') await needPg();
    app = await loadWorkerApp(config.modulePath);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`ts-reactor worker: ${error.message}${error.showUsage ? `\n\n${WORKER_USAGE}` : ''}`);
    return 2;
  }
  const opened =
    config.backend === 'postgres'
      ? await (await import('./worker-postgres.js')).openPostgresWorker(config, app, io, options.pingTimeoutMs ?? 2_000)
      : await openRedisWorker(config, app, io, options);
  if (typeof opened === 'number') return opened;
  const { runtime, operations, closeOperations } = opened;
  const { reactors, module } = app;
  const worker = runtime.startWorker({
    concurrency: config.concurrency,
    ...(config.shutdownTimeoutMs === undefined ? {} : { shutdownTimeoutMs: config.shutdownTimeoutMs }),
  });
  let running = true;
  if (operations) {
    try {
      const where = await operations.start(
        () => running,
        () => runtime.health().subscriptions,
      );
      io.out(`ts-reactor worker: metrics on ${where}/metrics; health on /healthz and /readyz`);
    } catch (error) {
      io.err(`ts-reactor worker: --metrics-port: ${(error as Error).message}`);
      await worker.close();
      await runtime.close();
      await closeOperations();
      return 2;
    }
  }

  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let stopping = false;
  let resolveStop!: (reason: string) => void;
  const stopped = new Promise<string>((r) => (resolveStop = r));
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!stopping) return resolveStop(signal);
    io.err(
      `ts-reactor worker: ${signal} again: exiting now, without waiting for in-flight jobs (they are redelivered once their locks lapse)`,
    );
    process.exit(130);
  };
  for (const signal of signals) process.on(signal, onSignal);
  const onAbort = (): void => resolveStop('stop requested');
  options.stop?.addEventListener('abort', onAbort, { once: true });
  if (options.stop?.aborted) onAbort();

  const names = reactors.map((r) => r.name).join(', ');
  io.out(
    `ts-reactor worker: ready (pid ${process.pid}, concurrency ${config.concurrency}, ${opened.where}; reactors: ${names}`,
  );

  const reason = await stopped;
  stopping = true;
  running = false; // /readyz answers 503 from now on
  const deadline =
    config.shutdownTimeoutMs === undefined
      ? ''
      : ` (at most ${config.shutdownTimeoutMs} ms, then their steps are interrupted and handed back)`;
  io.out(`ts-reactor worker: ${reason}: taking no more jobs; waiting for in-flight jobs to finish${deadline}`);
  try {
    const report = await worker.close();
    if (report.interrupted > 0)
      io.out(
        `ts-reactor worker: shutdown deadline passed: ${report.interrupted} in-flight job(s) interrupted and handed back to the queue`,
      );
    if (report.abandoned > 0) {
      // A step body ignored its signal: leave it running with its liveness lease held (the lease lapses once this process is gone), and exit.
      io.err(
        `ts-reactor worker: ${report.abandoned} step body(ies) still running ${DEFAULT_SHUTDOWN_GRACE_MS} ms after the shutdown deadline (they ignore ctx.signal); exiting without them: their executions resume elsewhere once their liveness leases lapse`,
      );
      await Promise.race([runtime.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000).unref())]);
      process.exit(1);
    }
    await runtime.close();
  } finally {
    await closeOperations();
    for (const signal of signals) process.off(signal, onSignal);
    options.stop?.removeEventListener('abort', onAbort);
  }
  // What the module opened itself (its own connections, timers): its close(), bounded. Anything it leaves open does not keep the process (main.ts exits).
  const warning = closeWarning(await closeModule(module));
  if (warning !== undefined) io.err(`ts-reactor worker: warning: ${warning}`);
  io.out('ts-reactor worker: stopped');
  return 0;
}

/**
 * Warns on stderr when no key exists under the worker's prefix before it starts: nothing was
 * ever enqueued there, and producers with another prefix send their jobs elsewhere. Not a failure.
 */
async function warnIfNoKeys(place: RedisPlace, prefix: string | undefined, io: WorkerIO): Promise<void> {
  const redis = await openConnection(place, true);
  try {
    const shown = prefix ?? 'rx';
    if ((await prefixHasKeys(redis, shown)) === false)
      io.err(
        `ts-reactor worker: warning: no key exists under the prefix "${shown}" yet; does the app use another prefix? (--prefix, the module's prefix, ${PREFIX_ENV})`,
      );
  } finally {
    redis.disconnect();
  }
}

/**
 * Opens the worker's Redis runtime: a bounded PING, the prefix warning, the operations with
 * `--metrics-port`, the runtime and its durability check. Resolves to the exit code (2) when any of
 * them fails, after saying why on `io.err` and closing what was opened.
 */
async function openRedisWorker(
  config: WorkerConfig,
  app: WorkerApp,
  io: WorkerIO,
  options: WorkerCommandOptions,
): Promise<OpenedWorkerRuntime | number> {
  const { module } = app;
  const prefix = config.prefix ?? module.prefix ?? config.envPrefix;
  const queueName = config.queueName ?? module.options?.queueName;
  const shownUrl = redactUrl(config.url);
  try {
    await pingRedis(config.url, options.pingTimeoutMs ?? 2_000);
    await warnIfNoKeys(config, prefix, io);
  } catch (error) {
    io.err(`ts-reactor worker: cannot reach Redis at ${shownUrl}: ${(error as Error).message}`);
    return 2;
  }

  return openWorkerRuntime(
    {
      config,
      app,
      queueName,
      prefix: prefix ?? 'rx',
      gauges: (subscriptions) =>
        workerGauges({ url: config.url, cluster: config.cluster, prefix, queueName }, subscriptions),
      factory: async () => {
        const { createRedisRuntime } = await import('../bullmq.js');
        return (options) =>
          createRedisRuntime({
            ...options,
            ...placeOptions(config),
            ...(prefix === undefined ? {} : { prefix }),
          });
      },
      where: `prefix ${prefix ?? 'rx'}) on ${shownUrl}`,
    },
    io,
  );
}

/** `pg` is installed, or a {@link UsageError} naming it: checked before an app module, which may import it, loads. */
export async function needPg(): Promise<void> {
  const { loadPg } = await import('./worker-postgres.js');
  try {
    await loadPg();
  } catch (error) {
    throw new UsageError((error as Error).message, false, { cause: error });
  }
}
