/**
 * What the worker opens the same way on every backend, once its backend answered: the gauges
 * and the metrics server (`--metrics-port`), the module's middleware, the runtime with the
 * module's options under the command line's, and the runtime's start-up check before any job is
 * taken. `worker.ts` (Redis) and `worker-postgres.ts` (PostgreSQL) each add their backend's
 * check before it and their runtime's own options.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { BackgroundOptions } from '../engine/jobs/deps.js';
import type { Middleware } from '../engine/model/events.js';
import type { SubscriptionsState } from '../metrics/readiness.js';
import type { BackendHealth } from '../ports/health.js';
import { DEFAULT_QUEUE_NAME } from '../queue/policy.js';
import type { Worker, WorkerCloseOptions } from '../queue/worker.js';
import { jsonLinesLogger, type CliLogLevel } from './json-logger.js';
import { moduleMiddleware, WorkerModuleError, type WorkerContext, type WorkerModule } from './worker-module.js';
import { workerOperations, type WorkerGauges, type WorkerOperations } from './worker-metrics.js';

/** What the worker runs of a runtime on either backend. */
export interface WorkerRuntime {
  startWorker(options: { readonly concurrency?: number; readonly shutdownTimeoutMs?: number }): Worker;
  health(): BackendHealth;
  close(options?: WorkerCloseOptions): Promise<void>;
}

/** A worker's runtime, opened and checked, on either backend: what `worker.ts` runs until stopped. */
export interface OpenedWorkerRuntime {
  readonly runtime: WorkerRuntime;
  /** The metrics server with `--metrics-port`. */
  readonly operations: WorkerOperations | undefined;
  /** Closes the metrics server and the gauges' connections. */
  closeOperations(): Promise<void>;
  /** Where the worker works, for its "ready" line: `prefix rx) on redis://…`, `schema ts_reactor) on postgres://…`. */
  readonly where: string;
}

/** A runtime as the worker opens it: what it runs, and the start-up check that reports warnings. */
export interface CheckedRuntime extends WorkerRuntime {
  ready(): Promise<{ readonly warnings: readonly string[] }>;
}

/** Where the worker writes. */
interface Io {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/** The options of the command line every backend's worker reads alike. */
export interface WorkerRuntimeConfig {
  readonly background: BackgroundOptions;
  readonly logLevel: CliLogLevel | undefined;
  readonly requireDurability: boolean;
  readonly metricsPort: number | undefined;
}

/**
 * The runtime options every backend's worker passes: the module's engine options (but its queue
 * name, resolved with `--queue`), then the middleware, reactors, schedule inputs, background
 * options (the command line's over the module's), rate limits, logger, queue name and durability
 * requirement. A backend's opener adds where its runtime connects.
 */
export function workerRuntimeOptions(
  config: WorkerRuntimeConfig,
  app: { readonly reactors: readonly AnyReactorDefinition[]; readonly module: WorkerModule },
  middleware: readonly Middleware[],
  queueName: string | undefined,
  out: (line: string) => void,
) {
  const { reactors, module } = app;
  const { queueName: _queueName, ...moduleOptions } = module.options ?? {};
  const logger = config.logLevel === undefined ? module.logger : jsonLinesLogger(config.logLevel, out);
  return {
    ...moduleOptions,
    middleware,
    reactors,
    scheduleInputs: module.scheduleInputs ?? {},
    background: { ...moduleOptions.background, ...config.background },
    ...(module.rateLimits === undefined ? {} : { rateLimits: module.rateLimits }),
    ...(logger === undefined ? {} : { logger }),
    ...(queueName === undefined ? {} : { queueName }),
    requireDurability: config.requireDurability,
  };
}

/** The runtime options of {@link workerRuntimeOptions}. */
export type WorkerRuntimeOptions = ReturnType<typeof workerRuntimeOptions>;

/** What a backend's opener tells {@link openWorkerRuntime}. */
export interface WorkerRuntimeSpec<R extends CheckedRuntime> {
  readonly config: WorkerRuntimeConfig;
  readonly app: { readonly reactors: readonly AnyReactorDefinition[]; readonly module: WorkerModule };
  /** The queue name, `--queue` or the module's; undefined for the default. */
  readonly queueName: string | undefined;
  /** The prefix (or schema) a module's middleware is told of in its {@link WorkerContext}. */
  readonly prefix: string;
  /** Opens the backend's gauges; `subscriptions` reads the runtime's once it exists. */
  readonly gauges: (subscriptions: () => SubscriptionsState | undefined) => Promise<WorkerGauges>;
  /** Loads the backend's runtime factory (imported only now, after the operations opened). */
  readonly factory: () => Promise<(options: WorkerRuntimeOptions) => R>;
  /** The worker's place, for its ready line ({@link OpenedWorkerRuntime.where}). */
  readonly where: string;
}

/**
 * Opens the operations with `--metrics-port` (or for a module whose middleware asks for the
 * gauges), the runtime, and its start-up check. Resolves to the exit code (2) when any of them
 * fails, after saying why on `io.err` and closing what was opened.
 */
export async function openWorkerRuntime<R extends CheckedRuntime>(
  spec: WorkerRuntimeSpec<R>,
  io: Io,
): Promise<OpenedWorkerRuntime | number> {
  const { config, app, queueName } = spec;
  const module = app.module;
  let gauges: WorkerGauges | undefined;
  const runtimeHealth: { subscriptions?: () => SubscriptionsState } = {}; // the runtime's, once it exists
  let operations: WorkerOperations | undefined;
  let middleware: readonly Middleware[];
  const closeOperations = async (): Promise<void> => {
    await operations?.close().catch(() => undefined);
    await gauges?.close().catch(() => undefined);
  };
  try {
    // The gauges are sampled for the metrics endpoint, and for a module whose middleware asks for them.
    if (config.metricsPort !== undefined || typeof module.middleware === 'function')
      gauges = await spec.gauges(() => runtimeHealth.subscriptions?.());
    if (config.metricsPort !== undefined) operations = await workerOperations(config.metricsPort, gauges!);
    const worker = (): WorkerContext => ({
      gauges: gauges!.sources,
      prefix: spec.prefix,
      queueName: queueName ?? DEFAULT_QUEUE_NAME,
    });
    middleware = [...moduleMiddleware(module, worker), ...(operations ? [operations.middleware] : [])];
  } catch (error) {
    await closeOperations();
    const shown = error instanceof WorkerModuleError ? `--module: ${error.message}` : (error as Error).message;
    io.err(`ts-reactor worker: ${shown}`);
    return 2;
  }
  const create = await spec.factory();
  let runtime: R;
  try {
    runtime = create(workerRuntimeOptions(config, app, middleware, queueName, io.out));
  } catch (error) {
    // A bad rate limit or option of the module: refused before any job is taken.
    io.err(`ts-reactor worker: --module: ${(error as Error).message}`);
    await closeOperations();
    return 2;
  }
  try {
    // The backend's start-up check (what it keeps across a restart, the schema's version), before any job is taken.
    for (const warning of (await runtime.ready()).warnings) io.err(`ts-reactor worker: warning: ${warning}`);
  } catch (error) {
    io.err(`ts-reactor worker: ${(error as Error).message}`);
    await runtime.close();
    await closeOperations();
    return 2;
  }
  runtimeHealth.subscriptions = () => runtime.health().subscriptions;
  return { runtime, operations, closeOperations, where: spec.where };
}
