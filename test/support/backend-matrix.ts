/**
 * The backend matrix: one feature suite, written once, run on every backend. A suite file calls
 * {@link describeOnBackends} with a body over a {@link MatrixBackend}; the body runs once per
 * backend (memory, Redis, PostgreSQL; a Redis Cluster when the suite opts in), each in a
 * `describe` named after the backend. A backend on a server starts that server once per file (the
 * first block that needs it starts it, the last one to finish disposes of it); every runtime and
 * rig a test builds lives on a namespace of its own (a key prefix, a schema, a queue name) and is
 * closed after the test.
 *
 * A new backend joins by adding one entry to {@link MATRIX_BACKENDS} (docs/backends.md, "The
 * backend matrix").
 */
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import {
  createEngine,
  systemClock,
  type Clock,
  type Engine,
  type EngineOptions,
  type ReactorEvent,
} from '../../src/index.js';
import type { Backend as PortBundle } from '../../src/ports/backend.js';
import type { Coordinator } from '../../src/ports/coordinator.js';
import type { Store } from '../../src/ports/store.js';
import { createPostgresBackend } from '../../src/queue/postgres-backend.js';
import { createRedisBullmqBackend } from '../../src/queue/redis-backend.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime/create-runtime.js';
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

/** Options of {@link MatrixBackend.runtime}: the runtime's, and for memory an injected clock. */
export type MatrixRuntimeOptions = RuntimeOptions & {
  /** The memory backend's clock (a `ManualClock` in virtual-time tests); the server backends run on their own. */
  readonly clock?: Clock;
};

/** A runtime of the matrix: `createRuntime` over the backend's bundle, with the bundle itself. */
export interface MatrixRuntime extends Runtime {
  /** The port bundle the runtime runs on (its store, coordinator, queue…). */
  readonly backend: PortBundle;
  /** The namespace this runtime was given (key prefix, schema or queue name). */
  readonly namespace: string;
}

/** One backend of the matrix, as a suite's body sees it. */
export interface MatrixBackend {
  readonly name: MatrixBackendName;
  /** Whether its state lives on a server that other processes could share. */
  readonly shared: boolean;
  /** A runtime on a fresh namespace, closed after the test. No worker runs until `startWorker`. */
  runtime(options?: MatrixRuntimeOptions): MatrixRuntime;
  /** A store and coordinator with engines over them, on a fresh namespace, closed when the backend's block ends (or by its `close`). */
  rig(): Promise<EngineRig>;
}

/** How one backend builds its parts, given its server (none for memory). */
interface BackendRecipe {
  readonly shared: boolean;
  start?(): Promise<ServerHandle>;
  bundle(server: ServerHandle | undefined, namespace: string, clock: Clock | undefined): PortBundle;
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
    bundle: (_server, _namespace, clock) => createMemoryBackend({ clock }),
    rig: async () => {
      const store = new MemoryStore();
      return { store, coordinator: new MemoryCoordinator({ clock: systemClock }), close: async () => undefined };
    },
  },
  redis: {
    shared: true,
    start: () => startRedisServer(),
    bundle: (server, namespace) =>
      createRedisBullmqBackend({ url: urlOf(server), prefix: namespace, queueName: `${namespace}-q` }),
    rig: async (server, namespace) => {
      const backend = createRedisBackend({ url: urlOf(server), prefix: namespace });
      return { store: backend.store, coordinator: backend.coordinator, close: () => backend.close() };
    },
  },
  'redis-cluster': {
    shared: true,
    start: () => startRedisCluster(),
    bundle: (server, namespace) =>
      createRedisBullmqBackend({ cluster: { nodes: nodesOf(server) }, prefix: namespace, queueName: `${namespace}-q` }),
    rig: async (server, namespace) => {
      const backend = createRedisBackend({ cluster: { nodes: nodesOf(server) }, prefix: namespace });
      return { store: backend.store, coordinator: backend.coordinator, close: () => backend.close() };
    },
  },
  postgres: {
    shared: true,
    start: () => startPostgresServer(),
    bundle: (server, namespace) =>
      createPostgresBackend({
        connection: urlOf(server),
        schema: namespace,
        queueName: `${namespace}-q`,
        migrate: true,
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

let counter = 0;
/** A name unique to this process and call: `name`, pid, a counter and a random suffix. */
export const uniqueName = (name: string): string =>
  `${name}:${process.pid}:${++counter}:${Math.random().toString(36).slice(2, 8)}`;
const namespaceOf = (name: MatrixBackendName): string =>
  `m${name.slice(0, 2)}_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 8)}`;

/** The servers of this file (a test file is a module instance of its own), one per backend. */
const servers = new Map<MatrixBackendName, { users: number; handle?: Promise<ServerHandle> | undefined }>();

function useBackendServer(name: MatrixBackendName): () => Promise<ServerHandle | undefined> {
  const recipe = MATRIX_BACKENDS[name];
  if (recipe.start === undefined) return async () => undefined;
  const start = recipe.start;
  const entry = servers.get(name) ?? { users: 0 };
  servers.set(name, entry);
  entry.users++; // counted while the file is collected, so the last block to finish is known
  beforeAll(async () => {
    entry.handle ??= start();
    await entry.handle;
  }, 120_000);
  afterAll(async () => {
    if (--entry.users > 0) return;
    const handle = entry.handle;
    entry.handle = undefined;
    await (await handle)?.dispose();
  });
  return async () => entry.handle;
}

async function buildRig(name: MatrixBackendName, server: ServerHandle | undefined): Promise<EngineRig> {
  const recipe = MATRIX_BACKENDS[name];
  const parts = await recipe.rig(server, namespaceOf(name));
  return {
    name,
    ...parts,
    engine: (options = {}) => {
      const events: ReactorEvent[] = [];
      const engine = createEngine({ store: parts.store, coordinator: parts.coordinator, ...options });
      engine.subscribe((e) => events.push(e));
      return { engine, events };
    },
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + (recipe.shared ? 20 : 5))),
    key: uniqueName,
  };
}

/** The memory backend's engine rig, outside the matrix (for suites that run on memory alone). */
export function memoryRig(): Promise<EngineRig> {
  return buildRig('memory', undefined);
}

function matrixBackend(name: MatrixBackendName): MatrixBackend {
  const recipe = MATRIX_BACKENDS[name];
  const server = useBackendServer(name);
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    while (closers.length > 0)
      await closers
        .pop()?.()
        .catch(() => undefined);
  });
  const rigClosers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    while (rigClosers.length > 0)
      await rigClosers
        .pop()?.()
        .catch(() => undefined);
  });
  let current: ServerHandle | undefined;
  beforeAll(async () => {
    current = await server();
  });
  return {
    name,
    shared: recipe.shared,
    runtime: (options = {}) => {
      const { clock, ...runtimeOptions } = options;
      const namespace = namespaceOf(name);
      const backend = recipe.bundle(current, namespace, clock);
      const runtime = createRuntime(backend, { ...(clock === undefined ? {} : { clock }), ...runtimeOptions });
      closers.push(() => runtime.close());
      return { ...runtime, backend, namespace };
    },
    rig: async () => {
      const rig = await buildRig(name, current);
      rigClosers.push(() => rig.close());
      return rig;
    },
  };
}

/** Options of {@link describeOnBackends}. */
export interface MatrixOptions {
  /** The backends to run on; default {@link DEFAULT_BACKENDS}. */
  readonly backends?: readonly MatrixBackendName[];
}

/**
 * Runs `body` once per backend, each in a `describe` named `<name> on <backend>`. The body
 * registers tests and hooks as any `describe` body does; it reads the backend's server only inside
 * them.
 */
export function describeOnBackends(
  name: string,
  body: (backend: MatrixBackend) => void,
  options: MatrixOptions = {},
): void {
  const backends = options.backends ?? DEFAULT_BACKENDS;
  describe.each(backends.map((backend) => [backend] as const))(`${name} on %s`, (backend) => {
    body(matrixBackend(backend));
  });
}
