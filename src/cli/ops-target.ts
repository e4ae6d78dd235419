/**
 * What the operations commands share: `--redis` (or `REDIS_URL`) or `--redis-cluster`, `--prefix` (or
 * `TS_REACTOR_PREFIX`), or `--postgres` and `--schema`; a bounded PING (PostgreSQL: `SELECT 1`)
 * before anything else (a bad URL or an unreachable server is one line and exit code 2, fast),
 * and the backend's store and coordinator with a read model over them.
 *
 * @module
 */
import type { Pool } from 'pg';
import type { Coordinator } from '../ports/coordinator.js';
import type { Store } from '../ports/store.js';
import type { RedisConnection } from '../storage/redis/connection.js';
import { createReadModel, type ReadModel } from '../ops/read-model.js';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { Asker } from './confirm.js';
import { readBackendUrl } from './backend-url.js';
import { pingRedis, unreachableMessage } from './redis-check.js';
import { PREFIX_ENV, UsageError } from './worker.js';
import { firstNodeUrl, placeOptions, readClusterNodes, type ClusterNode, type RedisPlace } from './redis-place.js';

/** Where a command writes, and what it reads from its surroundings. */
export interface OpsIO {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Progress lines go to `err` when true (default: when stderr is a terminal). */
  readonly progress?: boolean;
  /** Asks for a confirmation (default: on the terminal, when stdin and stderr are one); `null`: there is no one to ask. */
  readonly ask?: Asker | null;
}

/** The connection options every operations command takes. */
export const TARGET_OPTIONS = {
  redis: { type: 'string' },
  'redis-cluster': { type: 'string' },
  postgres: { type: 'string' },
  schema: { type: 'string' },
  prefix: { type: 'string' },
  'connect-timeout': { type: 'string' },
  json: { type: 'boolean' },
  progress: { type: 'boolean' },
} as const;

/** The resolved target: one server's URL, or a cluster's nodes (`url` is then its first node's). */
export interface Target extends RedisPlace {
  readonly prefix: string | undefined;
  readonly connectTimeoutMs: number;
  /** `--postgres`: the URL is a PostgreSQL one; `schema` is `--schema` (default `ts_reactor`). */
  readonly postgres?: { readonly schema: string | undefined };
}

/**
 * Reads `--redis`/`REDIS_URL`, the prefix (`--prefix`, else `modulePrefix` — the app module's —, else
 * `TS_REACTOR_PREFIX`, as the worker reads it) and `--connect-timeout`; a {@link UsageError} on a bad value.
 */
export function readTarget(
  values: {
    readonly redis?: string | undefined;
    readonly 'redis-cluster'?: string | undefined;
    readonly postgres?: string | undefined;
    readonly schema?: string | undefined;
    readonly prefix?: string | undefined;
    readonly 'connect-timeout'?: string | undefined;
  },
  env: Readonly<Record<string, string | undefined>>,
  modulePrefix?: string,
): Target {
  if (values.postgres !== undefined) return postgresTarget(values);
  if (values.schema !== undefined) throw new UsageError('--schema goes with --postgres <url>', false);
  let cluster: ClusterNode[] | undefined;
  try {
    cluster = readClusterNodes(values['redis-cluster'], values.redis);
  } catch (error) {
    throw new UsageError((error as Error).message, false);
  }
  const raw = cluster === undefined ? (values.redis ?? env['REDIS_URL']) : firstNodeUrl(cluster);
  if (raw === undefined || raw === '')
    throw new UsageError('missing --redis <url> (or set REDIS_URL), or --redis-cluster <nodes>', false);
  const url = readBackendUrl(raw);
  if (!url.ok) throw new UsageError(`--redis: ${url.message}`, false, { cause: url.cause });
  if (url.backend !== 'redis') throw new UsageError(`--redis: a ${url.backend} URL: use --${url.backend} <url>`, false);
  const fromEnv = values.prefix === undefined ? (modulePrefix ?? env[PREFIX_ENV]) : undefined;
  const prefix = values.prefix ?? (fromEnv === '' ? undefined : fromEnv);
  if (prefix !== undefined && (prefix === '' || /[{}\s]/.test(prefix))) {
    const where =
      values.prefix !== undefined ? '--prefix' : modulePrefix !== undefined ? "the module's prefix" : PREFIX_ENV;
    throw new UsageError(`${where} must be non-empty, without braces or whitespace; got "${prefix}"`, false);
  }
  const connectTimeoutMs = connectTimeoutOf(values['connect-timeout']);
  return { url: url.url, ...(cluster === undefined ? {} : { cluster }), prefix, connectTimeoutMs };
}

/** `--postgres <url>` and `--schema`: refused beside a Redis flag or `--prefix`. */
function postgresTarget(values: Parameters<typeof readTarget>[0]): Target {
  if (values.redis !== undefined || values['redis-cluster'] !== undefined)
    throw new UsageError('--postgres and --redis/--redis-cluster name two backends: give one', false);
  if (values.prefix !== undefined) throw new UsageError('--prefix goes with Redis; with --postgres, --schema', false);
  const url = readBackendUrl(values.postgres!, 'postgres');
  if (!url.ok) throw new UsageError(`--postgres: ${url.message}`, false, { cause: url.cause });
  return {
    url: url.url,
    prefix: undefined,
    connectTimeoutMs: connectTimeoutOf(values['connect-timeout']),
    postgres: { schema: values.schema },
  };
}

function connectTimeoutOf(timeout: string | undefined): number {
  const connectTimeoutMs = timeout === undefined ? 2_000 : Number(timeout);
  if (!Number.isSafeInteger(connectTimeoutMs) || connectTimeoutMs < 1)
    throw new UsageError(`--connect-timeout must be a positive integer (ms); got "${timeout}"`, false);
  return connectTimeoutMs;
}

/** A connected backend and a read model over it; close it when done. */
export interface Connected {
  /** The store and coordinator; `redis`: the command connection, on Redis; `pool`: their pool, on PostgreSQL. */
  readonly backend: {
    readonly store: Store;
    readonly coordinator: Coordinator;
    readonly redis?: RedisConnection;
    readonly pool?: Pool;
  };
  readonly model: ReadModel;
  close(): Promise<void>;
}

/** PINGs (bounded by the connect timeout; a cluster's first node), then opens the backend (on a cluster, keys laid out by slot). @throws UsageError when Redis cannot be reached. */
export async function connect(target: Target, reactors: readonly AnyReactorDefinition[] = []): Promise<Connected> {
  if (target.postgres !== undefined) return connectPostgres(target, target.postgres.schema, reactors);
  try {
    await pingRedis(target.url, target.connectTimeoutMs);
  } catch (error) {
    throw new UsageError(unreachableMessage(target.url, error), false);
  }
  const { createRedisBackend } = await import('../storage/redis/index.js');
  const backend = createRedisBackend({
    ...placeOptions(target),
    ...(target.prefix === undefined ? {} : { prefix: target.prefix }),
  });
  const model = createReadModel({ store: backend.store, coordinator: backend.coordinator, reactors });
  return { backend, model, close: () => backend.close() };
}

/** Whether progress lines are printed. */
export function showProgress(io: OpsIO, flag: boolean | undefined): boolean {
  return flag ?? io.progress ?? process.stderr.isTTY === true;
}

/** `SELECT 1` (bounded by the connect timeout), then the PostgreSQL store and coordinator on one pool. */
async function connectPostgres(
  target: Target,
  schema: string | undefined,
  reactors: readonly AnyReactorDefinition[],
): Promise<Connected> {
  const { pingPostgres, unreachablePostgres } = await import('./worker-postgres.js');
  try {
    await pingPostgres(target.url, target.connectTimeoutMs); // first: without `pg`, its MissingPeerError
  } catch (error) {
    throw new UsageError(unreachablePostgres(target.url, error), false);
  }
  const { postgresConnection, PostgresCoordinator, PostgresStore } = await import('../storage/postgres/index.js');
  const shared = postgresConnection({ connectionString: target.url, max: 2 });
  const named = schema === undefined ? {} : { schema };
  const store = new PostgresStore({ connection: shared.pool, ...named });
  const coordinator = new PostgresCoordinator({ connection: shared.pool, ...named });
  try {
    await store.ready(); // a schema not migrated: its typed error, with the fix
  } catch (error) {
    await shared.end();
    throw new UsageError((error as Error).message, false, { cause: error });
  }
  const model = createReadModel({ store, coordinator, reactors });
  return {
    backend: { store, coordinator, pool: shared.pool },
    model,
    close: async () => {
      await coordinator.close();
      await shared.end();
    },
  };
}
