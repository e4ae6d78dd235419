/**
 * The PostgreSQL backend as one {@link Backend}: the Postgres store and interrupt claims, the
 * Postgres coordinator (its LISTEN connection for wake-ups and cancel announcements), the job
 * leases, fan-out ledger and wait lists, jobs and schedules on BullMQ 6's PostgreSQL backend, and
 * the start-up check (the schema's version, or the migrations with `migrate: true`; the
 * durability settings). No Redis. `createPostgresRuntime` builds one and hands it to
 * `createRuntime`.
 *
 * @module
 */
import type { Pool, PoolConfig } from 'pg';
import type { Logger } from '../dsl/context.js';
import { silentLogger } from '../engine/model/logger.js';
import { ReactorError, RuntimeOptionError, StoreUnavailableError } from '../errors.js';
import type { Backend } from '../ports/backend.js';
import type { SubscriptionHealth } from '../ports/health.js';
import { checkedRecordTtl } from '../storage/record-ttl.js';
import { postgresConnection, type PostgresConnectionOption } from '../storage/postgres/connection.js';
import { PostgresCoordinator } from '../storage/postgres/coordinator.js';
import { loginRefusal } from '../storage/postgres/errors.js';
import { postgresDurabilityAtStartUp, type PostgresDurabilityReport } from '../storage/postgres/durability.js';
import { PostgresFanOutLedger } from '../storage/postgres/fanout.js';
import { PostgresJobLeases } from '../storage/postgres/job-leases.js';
import { PostgresStore } from '../storage/postgres/store.js';
import { PostgresExecutionStream } from '../storage/postgres/execution-stream.js';
import { PostgresWaitList } from '../storage/postgres/wait-list.js';
import { PostgresEventLog } from '../storage/postgres/event-log.js';
import { PostgresEventWaits } from '../storage/postgres/event-waits.js';
import type { BullmqConsumerOptions } from './bullmq.js';
import {
  createBullmqPostgresConsumer,
  createBullmqPostgresQueue,
  createBullmqPostgresSchedules,
  type BullmqPostgresConnection,
} from './bullmq-postgres.js';
import { consumerLogging } from './consumer-logging.js';
import { jobRetentionOf, type JobRetentionOptions } from './job-retention.js';

/** Options of {@link createPostgresBackend}; `createPostgresRuntime` documents each. */
export interface PostgresBackendOptions {
  /**
   * Where ts-reactor's tables are: a connection string (`postgres://…`), a `pg` pool config, or
   * your own `pg.Pool` (never ended by the backend).
   */
  readonly connection: PostgresConnectionOption;
  /**
   * The connection string BullMQ's jobs use (BullMQ opens pools of its own and takes only a
   * URL). Default: `connection` when it is a string, or a pool config's `connectionString`;
   * required (`RuntimeOptionError`) when `connection` is a `pg.Pool` or a config without one.
   */
  readonly jobsUrl?: string | undefined;
  /** The schema of ts-reactor's tables. Default `ts_reactor`. */
  readonly schema?: string | undefined;
  /** The schema of BullMQ's tables (created by BullMQ). Default `bullmq`. */
  readonly jobsSchema?: string | undefined;
  /** Apply pending migrations at start instead of refusing a schema at another version. Default false. */
  readonly migrate?: boolean | undefined;
  /** How long a finished execution's record is kept after its last save, in ms. Default: kept (`Infinity`). */
  readonly recordTtlMs?: number | undefined;
  /** Size limit of one serialized execution record in bytes. Default 512 KiB. */
  readonly maxRecordBytes?: number | undefined;
  /** Size limit of one large map's element states in bytes. Default 64 MiB. */
  readonly maxMapStateBytes?: number | undefined;
  /** BullMQ queue name. Default `ts-reactor`. */
  readonly queueName?: string | undefined;
  /** Worker lock / stall detection tunables of each consumer. */
  readonly stall?: Pick<BullmqConsumerOptions, 'lockDurationMs' | 'stalledIntervalMs' | 'maxStalledCount'> | undefined;
  /** How many finished jobs BullMQ keeps of each outcome, and for how long. */
  readonly jobRetention?: JobRetentionOptions | undefined;
  /** How long queue and coordinator calls ride out an outage. Default 30 s. */
  readonly outageToleranceMs?: number | undefined;
  /**
   * Whether the coordinator prepares each call's statement once per connection. Default true;
   * false behind a pooler in transaction mode that keeps no prepared statements.
   */
  readonly prepareStatements?: boolean | undefined;
  /** Refuse work unless PostgreSQL flushes every commit (`fsync`, `synchronous_commit`). Default false: warnings only. */
  readonly requireDurability?: boolean | undefined;
  /** Where the durability check's warnings and the consumers' infrastructure failures are logged. Default: nowhere. */
  readonly logger?: Logger | undefined;
}

/** The PostgreSQL backend: a shared {@link Backend}, its start-up check and its pool. */
export interface PostgresBackend extends Backend {
  readonly shared: true;
  readonly store: PostgresStore;
  readonly coordinator: PostgresCoordinator;
  /**
   * The start-up check, begun when the backend is created: the schema's version (or, with
   * `migrate`, the migrations), then the durability settings. Rejects with `PostgresSchemaError`,
   * with `DurabilityError` under `requireDurability`, or with `StoreUnavailableError` (operation
   * `schema-check`) when the database cannot be reached.
   */
  readonly ready: Promise<PostgresDurabilityReport>;
  /** The pool of the store and the coordinator. */
  readonly pool: Pool;
}

const FACTORY = 'createPostgresBackend';

/**
 * Builds the PostgreSQL backend. Options are checked before any connection opens.
 *
 * @throws RuntimeOptionError when `recordTtlMs`, `jobRetention`, `schema` or `jobsSchema` is
 *   not valid, or when BullMQ has no connection string (`jobsUrl`).
 * @example
 * ```ts
 * const runtime = createRuntime(createPostgresBackend({ connection: process.env.DATABASE_URL! }), { reactors: [checkout] });
 * ```
 */
export function createPostgresBackend(options: PostgresBackendOptions): PostgresBackend {
  const { connection, schema, queueName, stall, logger = silentLogger } = options;
  const recordTtlMs = checkedRecordTtl(FACTORY, options.recordTtlMs);
  const retention = jobRetentionOf(FACTORY, options.jobRetention);
  const jobs: BullmqPostgresConnection = {
    url: jobsUrlOf(connection, options.jobsUrl),
    ...(options.jobsSchema === undefined ? {} : { schema: options.jobsSchema }),
  };
  const outage = options.outageToleranceMs === undefined ? {} : { outageToleranceMs: options.outageToleranceMs };
  const names = queueName === undefined ? {} : { name: queueName };
  const shared = postgresConnection(connection); // one pool for the store and the coordinator
  const store = new PostgresStore({
    connection: shared.pool,
    ...(schema === undefined ? {} : { schema }),
    ...(options.migrate === true ? { migrate: true } : {}),
    ...(recordTtlMs === undefined ? {} : { recordTtlMs }),
    ...(options.maxRecordBytes === undefined ? {} : { maxRecordBytes: options.maxRecordBytes }),
    ...(options.maxMapStateBytes === undefined ? {} : { maxMapStateBytes: options.maxMapStateBytes }),
  });
  const coordinator = new PostgresCoordinator({
    connection: shared.pool,
    ...(schema === undefined ? {} : { schema }),
    ...outage,
    ...(options.prepareStatements === undefined ? {} : { prepareStatements: options.prepareStatements }),
  });
  const queue = createBullmqPostgresQueue({ connection: jobs, ...names, ...outage, jobRetention: retention });
  const schedules = createBullmqPostgresSchedules({ connection: jobs, ...names });
  const ready = (async () => {
    try {
      await store.ready();
    } catch (error) {
      // A refused schema is the store's typed error; a refused login or database names the fix; a
      // database not reached (wrong host or port, down) is unavailable.
      if (error instanceof ReactorError) throw error;
      throw loginRefusal(error) ?? new StoreUnavailableError('schema-check', error);
    }
    return postgresDurabilityAtStartUp(shared.pool, { required: options.requireDurability === true, logger });
  })();
  ready.catch(() => undefined); // observed here; the runtime's calls report it
  const executionStream = new PostgresExecutionStream({ store });
  let degradedDetail: string | undefined;
  coordinator.onWakeUpsDegraded((degraded, detail) => {
    degradedDetail = degraded ? (detail ?? 'the LISTEN connection is down') : undefined;
  });
  return {
    name: 'postgres',
    shared: true,
    store,
    coordinator,
    interruptClaims: store,
    jobLeases: new PostgresJobLeases(store),
    fanOut: new PostgresFanOutLedger({ store }),
    waitList: new PostgresWaitList({ store }),
    events: new PostgresEventLog({ store }),
    eventWaits: new PostgresEventWaits({ store }),
    executionStream,
    queue,
    queueInspector: queue,
    consumer: () => createBullmqPostgresConsumer({ connection: jobs, ...names, ...stall, ...consumerLogging(logger) }),
    schedules,
    ready,
    pool: shared.pool,
    health: () => ({ subscriptions: listenHealth(coordinator.wakeUpsDegraded(), degradedDetail) }),
    close: async () => {
      await ready.catch(() => undefined);
      await schedules.close();
      await queue.close();
      await executionStream.close();
      await coordinator.close();
      await store.close();
      await shared.end();
    },
  };
}

/**
 * `url` when it is a `postgres://` or `postgresql://` URL; otherwise a RuntimeOptionError naming
 * the option and the scheme it has (never the URL itself, which may hold a password).
 */
function postgresUrl(option: string, url: string): string {
  if (/^postgres(ql)?:\/\//i.test(url)) return url;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  const shown = scheme === undefined ? 'no scheme' : `"${scheme}:"`;
  const redis = scheme === 'redis' || scheme === 'rediss' ? ' (a Redis URL: Redis runs on createRedisRuntime)' : '';
  throw new RuntimeOptionError(
    { factory: FACTORY, option, value: shown },
    `must be a postgres:// or postgresql:// URL${redis}`,
  );
}

/** The LISTEN connection's state as the readiness checks read it: one channel, unconfirmed while degraded. */
function listenHealth(degraded: boolean, detail: string | undefined): SubscriptionHealth {
  if (!degraded) return { confirmed: true, channels: 1, unconfirmed: 0 };
  return {
    confirmed: false,
    channels: 1,
    unconfirmed: 1,
    detail: `PostgreSQL LISTEN connection: ${detail ?? 'down'}`,
    degraded: true,
  };
}

/** BullMQ's connection string: `jobsUrl`, else the connection's own. */
function jobsUrlOf(connection: PostgresConnectionOption, jobsUrl: string | undefined): string {
  if (typeof connection === 'string') postgresUrl('connection', connection);
  if (jobsUrl !== undefined) return postgresUrl('jobsUrl', jobsUrl);
  if (typeof connection === 'string') return connection;
  const fromConfig = (connection as PoolConfig).connectionString;
  if (typeof fromConfig === 'string' && !('idleCount' in connection))
    return postgresUrl('connection.connectionString', fromConfig);
  throw new RuntimeOptionError(
    { factory: FACTORY, option: 'jobsUrl', value: 'undefined' },
    'is required when connection is a pg.Pool or a pool config without a connectionString: BullMQ opens its own connections from a postgres:// URL',
  );
}
