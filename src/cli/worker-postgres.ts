/**
 * `ts-reactor worker --postgres <url>`: the worker's runtime over PostgreSQL alone
 * (`createPostgresRuntime`): a bounded `SELECT 1` first, the metrics' gauges and readiness over
 * PostgreSQL with `--metrics-port`, and the start-up check (the schema's version, the durability
 * settings) before any job is taken. `worker.ts` runs it like the Redis runtime.
 *
 * @module
 */
import type * as pgModule from 'pg';
import type { Middleware } from '../engine/model/events.js';
import type { BackgroundOptions } from '../engine/jobs/deps.js';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { BackendHealth } from '../ports/health.js';
import { DEFAULT_QUEUE_NAME } from '../queue/policy.js';
import type { Worker, WorkerCloseOptions } from '../queue/worker.js';
import type { SubscriptionsState } from '../metrics/readiness.js';
import { DEFAULT_SCHEMA } from '../storage/postgres/names.js';
import { loginRefusal } from '../storage/postgres/errors.js';
import { jsonLinesLogger, type CliLogLevel } from './json-logger.js';
import { MissingPeerError, redactUrl } from './redis-check.js';
import { moduleMiddleware, WorkerModuleError, type WorkerContext, type WorkerModule } from './worker-module.js';
import { postgresWorkerGauges, workerOperations, type WorkerGauges, type WorkerOperations } from './worker-metrics.js';

/** A worker's runtime, opened and checked, on either backend: what `worker.ts` runs until stopped. */
export interface OpenedWorkerRuntime {
  readonly runtime: {
    startWorker(options: { readonly concurrency?: number; readonly shutdownTimeoutMs?: number }): Worker;
    health(): BackendHealth;
    close(options?: WorkerCloseOptions): Promise<void>;
  };
  /** The metrics server with `--metrics-port`. */
  readonly operations: WorkerOperations | undefined;
  /** Closes the metrics server and the gauges' connections. */
  closeOperations(): Promise<void>;
  /** Where the worker works, for its "ready" line: `prefix rx) on redis://…`, `schema ts_reactor) on postgres://…`. */
  readonly where: string;
}

/** What the PostgreSQL worker is given: its options as read from the command line. */
export interface PostgresWorkerConfig {
  readonly url: string;
  readonly schema: string | undefined;
  readonly queueName: string | undefined;
  readonly background: BackgroundOptions;
  readonly logLevel: CliLogLevel | undefined;
  readonly requireDurability: boolean;
  readonly metricsPort: number | undefined;
}

/** Where the command writes. */
interface Io {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/**
 * Opens the worker's PostgreSQL runtime: `SELECT 1` within `pingTimeoutMs`, the operations with
 * `--metrics-port`, the runtime, and its start-up check. Resolves to the exit code (2) when any of
 * them fails, after saying why on `io.err` and closing what was opened.
 */
export async function openPostgresWorker(
  config: PostgresWorkerConfig,
  app: { readonly reactors: readonly AnyReactorDefinition[]; readonly module: WorkerModule },
  io: Io,
  pingTimeoutMs: number,
): Promise<OpenedWorkerRuntime | number> {
  const { reactors, module } = app;
  const shownUrl = redactUrl(config.url);
  const queueName = config.queueName ?? module.options?.queueName;
  try {
    await pingPostgres(config.url, pingTimeoutMs);
  } catch (error) {
    io.err(`ts-reactor worker: ${unreachablePostgres(config.url, error)}`);
    return 2;
  }
  let gauges: WorkerGauges | undefined;
  let operations: WorkerOperations | undefined;
  const runtimeHealth: { subscriptions?: () => SubscriptionsState } = {};
  const closeOperations = async (): Promise<void> => {
    await operations?.close().catch(() => undefined);
    await gauges?.close().catch(() => undefined);
  };
  let middleware: readonly Middleware[];
  try {
    if (config.metricsPort !== undefined || typeof module.middleware === 'function')
      gauges = await postgresWorkerGauges({ url: config.url, schema: config.schema, queueName }, () =>
        runtimeHealth.subscriptions?.(),
      );
    if (config.metricsPort !== undefined) operations = await workerOperations(config.metricsPort, gauges!);
    const worker = (): WorkerContext => ({
      gauges: gauges!.sources,
      prefix: config.schema ?? DEFAULT_SCHEMA,
      queueName: queueName ?? DEFAULT_QUEUE_NAME,
    });
    middleware = [...moduleMiddleware(module, worker), ...(operations ? [operations.middleware] : [])];
  } catch (error) {
    await closeOperations();
    const shown = error instanceof WorkerModuleError ? `--module: ${error.message}` : (error as Error).message;
    io.err(`ts-reactor worker: ${shown}`);
    return 2;
  }
  const { createPostgresRuntime } = await import('../postgres.js');
  const { queueName: _queueName, ...moduleOptions } = module.options ?? {};
  const logger = config.logLevel === undefined ? module.logger : jsonLinesLogger(config.logLevel, io.out);
  let runtime: ReturnType<typeof createPostgresRuntime>;
  try {
    runtime = createPostgresRuntime({
      ...moduleOptions,
      middleware,
      connection: config.url,
      reactors,
      scheduleInputs: module.scheduleInputs ?? {},
      background: { ...moduleOptions.background, ...config.background },
      ...(module.rateLimits === undefined ? {} : { rateLimits: module.rateLimits }),
      ...(logger === undefined ? {} : { logger }),
      ...(config.schema === undefined ? {} : { schema: config.schema }),
      ...(queueName === undefined ? {} : { queueName }),
      requireDurability: config.requireDurability,
    });
  } catch (error) {
    io.err(`ts-reactor worker: --module: ${(error as Error).message}`);
    await closeOperations();
    return 2;
  }
  try {
    // The schema's version and the durability settings, checked before any job is taken.
    for (const warning of (await runtime.ready()).warnings) io.err(`ts-reactor worker: warning: ${warning}`);
  } catch (error) {
    io.err(`ts-reactor worker: ${(error as Error).message}`);
    await runtime.close();
    await closeOperations();
    return 2;
  }
  runtimeHealth.subscriptions = () => runtime.health().subscriptions;
  return { runtime, operations, closeOperations, where: `schema ${config.schema ?? DEFAULT_SCHEMA}) on ${shownUrl}` };
}

/** The `pg` module, as `import('pg')` gives it. */
type PgModule = typeof pgModule;

/** Imports the optional peer `pg`, or throws {@link MissingPeerError} naming it. */
export async function loadPg(): Promise<PgModule> {
  try {
    return await import('pg');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes("'pg'"))
      throw new MissingPeerError('pg', error);
    throw error;
  }
}

/**
 * "cannot reach PostgreSQL at <url, password hidden>: <why>"; the missing package when that is
 * why; the refused login or database, with its fix, when the server refused the URL.
 */
export function unreachablePostgres(url: string, error: unknown): string {
  if (error instanceof MissingPeerError) return error.message;
  const refused = loginRefusal(error);
  if (refused !== undefined) return `${redactUrl(url)}: ${refused.message}`;
  return `cannot reach PostgreSQL at ${redactUrl(url)}: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * `SELECT 1` on a connection of its own, within `timeoutMs`: a wrong URL, a refused login or an
 * unreachable server fails fast, before anything else opens.
 * @throws MissingPeerError when `pg` is not installed; Error with the server's or the driver's message otherwise.
 */
export async function pingPostgres(url: string, timeoutMs: number): Promise<void> {
  const pg = (await loadPg()).default;
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    application_name: 'ts-reactor',
  });
  client.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      (async () => {
        await client.connect();
        await client.query('SELECT 1');
      })(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await client.end().catch(() => undefined);
  }
}
