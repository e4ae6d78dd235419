/**
 * How each backend of the matrix builds its parts (./backend-matrix.ts): its server's start, its
 * port bundle on a namespace of its own, and its store and coordinator for engine rigs. Free of
 * Vitest, so that a child process of a test can build the same backend as its parent
 * ({@link bundleOf}).
 */
import { systemClock, type Clock, type Engine, type EngineOptions, type ReactorEvent } from '../../src/index.js';
import type { Backend as PortBundle } from '../../src/ports/backend.js';
import type { Coordinator } from '../../src/ports/coordinator.js';
import type { Store } from '../../src/ports/store.js';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { createPostgresBackend } from '../../src/queue/postgres-backend.js';
import { createRedisBullmqBackend } from '../../src/queue/redis-backend.js';
import { createMemoryBackend } from '../../src/storage/memory/backend.js';
import { MemoryCoordinator } from '../../src/storage/memory/coordinator.js';
import { MemoryStore } from '../../src/storage/memory/store.js';
import { PostgresCoordinator } from '../../src/storage/postgres/coordinator.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { startPostgresServer } from './postgres-server.js';
import { startRedisCluster, type RedisClusterHandle } from './redis-cluster.js';
import { startRedisServer } from './redis-server.js';
import type { ServerHandle } from './use-server.js';

/** The backends a suite may run on. */
export type MatrixBackendName = 'memory' | 'redis' | 'postgres' | 'redis-cluster';

/** The backends every suite runs on unless it says otherwise. */
export const DEFAULT_BACKENDS: readonly MatrixBackendName[] = ['memory', 'redis', 'postgres'];

/**
 * Whether `name` can run with the BullMQ installed: PostgreSQL needs BullMQ 6's PostgreSQL
 * backend (on BullMQ 5 a PostgreSQL runtime is refused, as `test/runtime/postgres-runtime.test.ts`
 * checks), so the matrix leaves it out there.
 */
export function backendAvailable(name: MatrixBackendName): boolean {
  return name !== 'postgres' || postgresBackendFactory() !== undefined;
}

/**
 * A store and a coordinator, with engines over them and no queue: the inline (`engine.run`)
 * scenarios. Time is real on every backend (memory on the system clock), so scenarios may mix
 * backend time with real events.
 */
export interface EngineRig {
  readonly name: MatrixBackendName;
  readonly coordinator: Coordinator;
  readonly store: Store;
  /** A fresh engine over this rig, recording its events. */
  engine(options?: Partial<EngineOptions>): { engine: Engine; events: ReactorEvent[] };
  /** Lets `ms` of backend time pass (and a little more). */
  pass(ms: number): Promise<void>;
  /** A key unique to this test run. */
  key(name: string): string;
  close(): Promise<void>;
}

/** What a test may set on a backend's bundle: the memory backend's clock, and every backend's record TTL. */
export interface BundleOptions {
  readonly clock?: Clock | undefined;
  readonly recordTtlMs?: number | undefined;
}

/** How one backend builds its parts, given its server (none for memory). */
export interface BackendRecipe {
  readonly shared: boolean;
  start?(): Promise<ServerHandle>;
  bundle(server: ServerHandle | undefined, namespace: string, options?: BundleOptions): PortBundle;
  rig(
    server: ServerHandle | undefined,
    namespace: string,
  ): Promise<Omit<EngineRig, 'name' | 'engine' | 'pass' | 'key'>>;
}

const urlOf = (server: ServerHandle | undefined): string => {
  if (server?.url === undefined) throw new Error('this backend needs its server');
  return server.url;
};
const nodesOf = (server: ServerHandle | undefined) => (server as RedisClusterHandle).nodes;

/**
 * The backends, each with the way it builds a port bundle and an engine rig. A new backend
 * joins by adding its entry: its server's start (if any), its bundle factory, its rig.
 */
export const MATRIX_BACKENDS: Readonly<Record<MatrixBackendName, BackendRecipe>> = {
  memory: {
    shared: false,
    bundle: (_server, _namespace, options = {}) => createMemoryBackend(options),
    rig: async () => {
      const store = new MemoryStore();
      return { store, coordinator: new MemoryCoordinator({ clock: systemClock }), close: async () => undefined };
    },
  },
  redis: {
    shared: true,
    start: () => startRedisServer(),
    bundle: (server, namespace, { recordTtlMs } = {}) =>
      createRedisBullmqBackend({ url: urlOf(server), prefix: namespace, queueName: `${namespace}-q`, recordTtlMs }),
    rig: async (server, namespace) => {
      const backend = createRedisBackend({ url: urlOf(server), prefix: namespace });
      return { store: backend.store, coordinator: backend.coordinator, close: () => backend.close() };
    },
  },
  'redis-cluster': {
    shared: true,
    start: () => startRedisCluster(),
    bundle: (server, namespace, { recordTtlMs } = {}) =>
      createRedisBullmqBackend({
        cluster: { nodes: nodesOf(server) },
        prefix: namespace,
        queueName: `${namespace}-q`,
        recordTtlMs,
      }),
    rig: async (server, namespace) => {
      const backend = createRedisBackend({ cluster: { nodes: nodesOf(server) }, prefix: namespace });
      return { store: backend.store, coordinator: backend.coordinator, close: () => backend.close() };
    },
  },
  postgres: {
    shared: true,
    start: () => startPostgresServer(),
    bundle: (server, namespace, { recordTtlMs } = {}) =>
      createPostgresBackend({
        connection: urlOf(server),
        schema: namespace,
        queueName: `${namespace}-q`,
        migrate: true,
        recordTtlMs,
      }),
    // One connection: calls made together reach the database in the order they were made, as on
    // Redis (the ordered-lock scenarios expect positions in the order of their run() calls).
    rig: async (server, namespace) => {
      const store = new PostgresStore({
        connection: { connectionString: urlOf(server), max: 1 },
        schema: namespace,
        migrate: true,
      });
      await store.ready();
      const coordinator = new PostgresCoordinator({ connection: store.pool, schema: namespace });
      return {
        store,
        coordinator,
        close: async () => {
          await coordinator.close();
          await store.close();
        },
      };
    },
  },
};

/** Where a backend's server is, as a child process is told: a URL, or a cluster's nodes. */
export interface ServerAddress {
  readonly url?: string | undefined;
  readonly nodes?: readonly { readonly host: string; readonly port: number }[] | undefined;
}

/** The address of `server` that {@link bundleOf} takes back (JSON-safe, for a child process). */
export function addressOf(server: ServerHandle | undefined): ServerAddress {
  if (server === undefined) return {};
  const nodes = (server as Partial<RedisClusterHandle>).nodes;
  return { url: server.url, nodes: nodes?.map(({ host, port }) => ({ host, port })) };
}

/** The port bundle of backend `name` on `namespace` at `address`: the same a runtime of the matrix on that namespace runs on. */
export function bundleOf(
  name: MatrixBackendName,
  address: ServerAddress,
  namespace: string,
  options?: BundleOptions,
): PortBundle {
  const server = { ...address, dispose: async () => undefined } as unknown as ServerHandle;
  return MATRIX_BACKENDS[name].bundle(server, namespace, options);
}
