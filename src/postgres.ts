/**
 * `ts-reactor/postgres`: durable background execution on PostgreSQL alone — records,
 * coordination, jobs (BullMQ 6's PostgreSQL backend) and schedules in one database, in any number
 * of worker processes. Needs the `pg` package and BullMQ 6 (docs/postgres.md).
 *
 * @example
 * ```ts
 * import { createPostgresRuntime } from 'ts-reactor/postgres';
 * const runtime = createPostgresRuntime({ connection: process.env.DATABASE_URL!, reactors: [checkout] });
 * await runtime.ready();                                     // the schema's version, checked
 * const queued = await runtime.engine.start(checkout, { orderId: 'o-1' });
 * const worker = runtime.startWorker({ concurrency: 8 });   // in a worker process
 * ```
 *
 * @module
 */
import type { AnyReactorDefinition } from './dsl/definition.js';
import type { Engine, EngineOptions } from './engine/engine.js';
import { traceBoundOf } from './engine/model/trace-bound.js';
import type { BackendHealth } from './ports/health.js';
import type { QueueInspector } from './ports/queue-inspector.js';
import { createPostgresBackend, type PostgresBackendOptions } from './queue/postgres-backend.js';
import type { Worker, WorkerCloseOptions } from './queue/worker.js';
import { createRuntime, type BackendPart, type StartWorkerOptions } from './runtime/create-runtime.js';
import type { RuntimeMiddleware } from './schedules/events.js';
import type { Schedules } from './schedules/service.js';
import type { ScheduleInputFn } from './schedules/types.js';
import type { PostgresDurabilityReport } from './storage/postgres/durability.js';

export { createPostgresBackend, type PostgresBackend, type PostgresBackendOptions } from './queue/postgres-backend.js';
export {
  checkPostgresDurability,
  type PostgresDurabilityReport,
  type PostgresDurabilitySettings,
  type PostgresPersistence,
} from './storage/postgres/durability.js';
export {
  checkSchema,
  DEFAULT_SCHEMA,
  migrate,
  MIGRATE_COMMAND,
  PostgresCoordinator,
  PostgresLoginError,
  PostgresNames,
  PostgresPermissionError,
  PostgresSchemaError,
  PostgresStore,
  SCHEMA_VERSION,
  schemaVersion,
  type MigrateResult,
  type PostgresConnectionOption,
  type PostgresCoordinatorOptions,
  type PostgresStoreOptions,
} from './storage/postgres/index.js';
export { DEFAULT_BULLMQ_SCHEMA } from './queue/bullmq-postgres.js';
export {
  createWorker,
  type Worker,
  type WorkerCloseOptions,
  type WorkerCloseReport,
  type WorkerOptions,
} from './queue/worker.js';
export {
  defineWorker,
  type WorkerContext,
  type WorkerDefinition,
  type WorkerModule,
  type WorkerModuleOptions,
} from './cli/worker-module.js';

/** Options of {@link createPostgresRuntime}: where PostgreSQL is, its settings, and the engine's options. */
export interface PostgresRuntimeOptions
  extends Partial<Omit<EngineOptions, BackendPart | 'middleware'>>, Omit<PostgresBackendOptions, 'logger'> {
  /** Middleware: the engine's events and work scopes, and with `onScheduleEvent` the schedules' events. */
  readonly middleware?: readonly RuntimeMiddleware[];
  readonly reactors?: readonly AnyReactorDefinition[];
  /** Computed schedule inputs by name (a schedule's `inputFrom`), called in the worker with each tick's time. */
  readonly scheduleInputs?: Readonly<Record<string, ScheduleInputFn>>;
}

/** An engine over PostgreSQL, and a way to start workers for it. */
export interface PostgresRuntime {
  readonly engine: Engine;
  /** Schedules on BullMQ's job schedulers in PostgreSQL; their ticks are taken by this runtime's workers. */
  readonly schedules: Schedules;
  /** The runtime's queue for operators (the dashboard's `queue` option). */
  readonly queueInspector: QueueInspector;
  /**
   * The start-up check, begun when the runtime is created: the schema's version (with
   * `migrate: true`, the pending migrations applied first), then the durability settings, whose
   * warnings are logged through the engine's `logger`. Rejects with `PostgresSchemaError`
   * (missing or other schema: its message names both versions and the fix), `DurabilityError`
   * (with `requireDurability`), or the connection's error; the engine's calls and the workers
   * wait for it and fail with the same error.
   */
  ready(): Promise<PostgresDurabilityReport>;
  /** The runtime's health now: the LISTEN connection that carries wake-ups and cancel announcements. */
  health(): BackendHealth;
  /** Starts a worker in this process (see `createRedisRuntime`'s `startWorker`). */
  startWorker(options?: StartWorkerOptions): Worker;
  /** Closes the workers, waits for the engine to go idle, then closes every connection. Calling it again returns the same promise. */
  close(options?: WorkerCloseOptions): Promise<void>;
}

/**
 * Wires the PostgreSQL backend (`createPostgresBackend`) into one engine with `createRuntime`.
 *
 * @throws RuntimeOptionError when `recordTtlMs`, `jobRetention`, `schema` or `jobsSchema` is not
 *   valid, or when `connection` is a `pg.Pool` and `jobsUrl` is missing; RangeError when
 *   `maxTraceEntries` is out of range — all before any connection opens.
 */
export function createPostgresRuntime(options: PostgresRuntimeOptions): PostgresRuntime {
  const {
    connection,
    jobsUrl,
    schema,
    jobsSchema,
    migrate: applyMigrations,
    recordTtlMs,
    maxRecordBytes,
    maxMapStateBytes,
    queueName,
    stall,
    jobRetention,
    outageToleranceMs,
    prepareStatements,
    requireDurability,
    ...runtimeOptions
  } = options;
  traceBoundOf(runtimeOptions.maxTraceEntries, 'createPostgresRuntime');
  const backend = createPostgresBackend({
    connection,
    jobsUrl,
    schema,
    jobsSchema,
    migrate: applyMigrations,
    recordTtlMs,
    maxRecordBytes,
    maxMapStateBytes,
    queueName,
    stall,
    jobRetention,
    outageToleranceMs,
    prepareStatements,
    requireDurability,
    logger: runtimeOptions.logger,
  });
  let runtime: ReturnType<typeof createRuntime>;
  try {
    runtime = createRuntime(backend, runtimeOptions);
  } catch (error) {
    void backend.close().catch(() => undefined);
    throw error;
  }
  return {
    engine: runtime.engine,
    schedules: runtime.schedules,
    queueInspector: runtime.queueInspector,
    ready: () => backend.ready,
    health: () => runtime.health(),
    startWorker: (workerOptions) => runtime.startWorker(workerOptions),
    close: (closeOptions) => runtime.close(closeOptions),
  };
}
