/**
 * BullMQ on PostgreSQL: the datastore of BullMQ 6's PostgreSQL backend (`createPostgresBackend`),
 * and the queue, consumer and schedules of `bullmq.ts` / `bullmq-schedules.ts` on it. No Redis:
 * BullMQ keeps its jobs in tables of a schema of their own (default `bullmq`), in the database
 * the connection string names, and a worker waits for work on a `LISTEN` connection that
 * producers `NOTIFY`.
 *
 * BullMQ 5 has no PostgreSQL backend: with BullMQ 5 installed every factory here throws a
 * `RuntimeOptionError` before anything opens. The `pg` package (node-postgres) must be installed
 * beside BullMQ; BullMQ loads it on the first connection.
 *
 * @module
 */
import { createRequire } from 'node:module';
import * as bullmq from 'bullmq';
import { Queue, Worker, type Processor } from 'bullmq';
import { RuntimeOptionError } from '../errors.js';
import type { JobConsumer, JobQueue } from '../ports/queue.js';
import type { QueueInspector } from '../ports/queue-inspector.js';
import type { ScheduleBackend } from '../ports/schedules.js';
import {
  openBullmqConsumer,
  openBullmqQueue,
  type BullmqConsumerSettings,
  type BullmqQueueSettings,
} from './bullmq.js';
import type { BullmqDatastore, BullmqWorkerSettings, OpenedWorker } from './bullmq-datastore.js';
import { openBullmqSchedules, type BullmqSchedulesSettings } from './bullmq-schedules.js';
import { openBullmqQueueStats, type BullmqQueueStats, type BullmqQueueStatsSettings } from './bullmq-stats.js';

/** The schema BullMQ's tables live in unless told otherwise: BullMQ's own default. */
export const DEFAULT_BULLMQ_SCHEMA = 'bullmq';

/** How to reach PostgreSQL for BullMQ. BullMQ opens (and closes) a pool of its own per queue and per worker, plus one `LISTEN` connection per worker. */
export interface BullmqPostgresConnection {
  /** A PostgreSQL connection string, `postgres://user:password@host:port/database`. */
  readonly url: string;
  /**
   * The schema BullMQ's tables and functions live in, apart from any other tables of the same
   * database; created (and migrated) on first use. Default `bullmq`. A simple identifier
   * (letters, digits, `_`, `$`; not starting with a digit).
   */
  readonly schema?: string;
  /** The most connections of each BullMQ pool (each queue, each worker); default 10. A worker's `LISTEN` connection comes on top. */
  readonly poolSize?: number;
}

/** Options of {@link createBullmqPostgresQueue}. */
export interface BullmqPostgresQueueOptions extends BullmqQueueSettings {
  readonly connection: BullmqPostgresConnection;
}

/** Options of {@link createBullmqPostgresConsumer}. */
export interface BullmqPostgresConsumerOptions extends BullmqConsumerSettings {
  readonly connection: BullmqPostgresConnection;
}

/** Options of {@link createBullmqPostgresSchedules}. */
export interface BullmqPostgresSchedulesOptions extends BullmqSchedulesSettings {
  readonly connection: BullmqPostgresConnection;
}

/** Options of {@link createBullmqPostgresQueueStats}. */
export interface BullmqPostgresQueueStatsOptions extends BullmqQueueStatsSettings {
  readonly connection: BullmqPostgresConnection;
}

/** Creates the producing side over a BullMQ `Queue` on PostgreSQL; it also answers the dashboard's queue view. */
export function createBullmqPostgresQueue(options: BullmqPostgresQueueOptions): JobQueue & QueueInspector {
  const factory = 'createBullmqPostgresQueue';
  return openBullmqQueue(postgresDatastore(options.connection, factory), options, factory);
}

/** Creates the consuming side over a BullMQ `Worker` on PostgreSQL, started by {@link JobConsumer.start}. */
export function createBullmqPostgresConsumer(options: BullmqPostgresConsumerOptions): JobConsumer {
  return openBullmqConsumer(postgresDatastore(options.connection, 'createBullmqPostgresConsumer'), options);
}

/** The schedules on BullMQ job schedulers on PostgreSQL (the ticks on the queue `<name>-schedules`). */
export function createBullmqPostgresSchedules(options: BullmqPostgresSchedulesOptions): ScheduleBackend {
  return openBullmqSchedules(postgresDatastore(options.connection, 'createBullmqPostgresSchedules'), options);
}

/** What the metrics' gauges read of the queue on PostgreSQL (job counts by state, the oldest runnable job's wait), on a pool of its own. */
export function createBullmqPostgresQueueStats(options: BullmqPostgresQueueStatsOptions): BullmqQueueStats {
  return openBullmqQueueStats(postgresDatastore(options.connection, 'createBullmqPostgresQueueStats'), options);
}

/** The factory BullMQ 6 takes as its classes' last constructor argument; BullMQ 5 has none. */
type BackendFactory = (...args: never[]) => unknown;

/** What BullMQ's PostgreSQL connection takes: a node-postgres pool config and BullMQ's own fields. */
interface PostgresConfig {
  readonly connectionString: string;
  readonly schema: string;
  readonly max?: number;
  /** BullMQ creates or upgrades its schema when a connection first gets ready (idempotent, serialised by an advisory lock). */
  readonly migrate: true;
}

/** BullMQ's classes as they are built on another backend (their last constructor argument is missing from BullMQ 5's types). */
const QueueOn = Queue as unknown as new <D>(
  name: string,
  options: { readonly connection: PostgresConfig },
  backend: BackendFactory,
) => Queue<D>;
const WorkerOn = Worker as unknown as new <D>(
  name: string,
  processor: Processor<D>,
  options: BullmqWorkerSettings & { readonly connection: PostgresConfig },
  backend: BackendFactory,
) => Worker<D>;

/**
 * BullMQ 6's PostgreSQL backend factory, or `undefined` when the installed BullMQ has none
 * (BullMQ 5). Read off the module's namespace, so that this file loads with either major.
 */
export function postgresBackendFactory(): BackendFactory | undefined {
  const found = (bullmq as unknown as { readonly createPostgresBackend?: unknown }).createPostgresBackend;
  return typeof found === 'function' ? (found as BackendFactory) : undefined;
}

/** The datastore of BullMQ's PostgreSQL backend; throws `RuntimeOptionError` (naming `factory`) on BullMQ 5 or a bad option. */
export function postgresDatastore(connection: BullmqPostgresConnection, factory: string): BullmqDatastore {
  const backend = postgresBackendFactory();
  if (backend === undefined)
    throw new RuntimeOptionError(
      { factory, option: 'bullmq', value: `BullMQ ${installedBullmqVersion()}` },
      'must be BullMQ 6 or later: BullMQ runs on PostgreSQL from version 6 on',
    );
  const config = postgresConfig(connection, factory);
  return {
    kind: 'postgres',
    queue: <D>(name: string) => new QueueOn<D>(name, { connection: config }, backend),
    worker: <D>(name: string, processor: Processor<D>, settings: BullmqWorkerSettings): OpenedWorker<D> => ({
      // BullMQ builds, and closes with the worker, the pool and the LISTEN connection of each worker.
      worker: new WorkerOn<D>(
        name,
        processor,
        { runRetryDelay: FETCH_RETRY_DELAY_MS, ...settings, connection: config },
        backend,
      ),
      release: async () => undefined,
    }),
    isOutage: isPostgresOutage,
  };
}

/**
 * How long a worker waits before fetching again after a fetch failed (BullMQ's `runRetryDelay`,
 * 15 s by default). On Redis a fetch rarely fails: ioredis holds the command until it has
 * reconnected. node-postgres fails it at once while PostgreSQL is unreachable, and BullMQ's
 * default would then leave a worker idle for up to 15 s after PostgreSQL is back; a second
 * matches the Redis connections' longest reconnection delay.
 */
const FETCH_RETRY_DELAY_MS = 1_000;

/** A schema name BullMQ accepts (it quotes it into its DDL): a simple identifier of at most 63 bytes. */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_$]*$/;

function postgresConfig(connection: BullmqPostgresConnection, factory: string): PostgresConfig {
  if (typeof connection?.url !== 'string' || !/^postgres(ql)?:\/\//.test(connection.url))
    throw new RuntimeOptionError(
      { factory, option: 'connection.url', value: typeof connection?.url === 'string' ? 'a string' : 'none' },
      'must be a postgres:// or postgresql:// connection string',
    );
  const schema = connection.schema ?? DEFAULT_BULLMQ_SCHEMA;
  if (!SCHEMA_NAME.test(schema) || Buffer.byteLength(schema) > 63)
    throw new RuntimeOptionError(
      { factory, option: 'connection.schema', value: JSON.stringify(schema) },
      'must be a simple identifier of at most 63 bytes (letters, digits, _ and $, not starting with a digit)',
    );
  const { poolSize } = connection;
  if (poolSize !== undefined && (!Number.isSafeInteger(poolSize) || poolSize < 1))
    throw new RuntimeOptionError(
      { factory, option: 'connection.poolSize', value: String(poolSize) },
      'must be a positive integer',
    );
  return {
    connectionString: connection.url,
    schema,
    migrate: true,
    ...(poolSize === undefined ? {} : { max: poolSize }),
  };
}

/** The installed BullMQ's version, for messages. */
function installedBullmqVersion(): string {
  try {
    return (createRequire(import.meta.url)('bullmq/package.json') as { version: string }).version;
  } catch {
    return '(version unknown)';
  }
}

/**
 * Whether `error` says PostgreSQL could not be reached or dropped the connection, rather than
 * refused the call: a socket error, node-postgres's own connection errors, or a SQLSTATE of class
 * 08 (connection exception), `57P01`–`57P03` (the server shutting down or starting) or `53300`
 * (too many connections).
 */
export function isPostgresOutage(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08')))
    return true;
  return CLIENT_MESSAGES.some((pattern) => pattern.test(error.message));
}

const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** SQLSTATEs of a server that is going away, starting up, or full. */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

/** node-postgres's errors for a connection lost or never made. */
const CLIENT_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /is not queryable/,
  /^Client was closed and is not queryable/,
];
