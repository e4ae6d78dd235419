import type { Redis } from 'ioredis';
import {
  createEngine,
  MemoryCoordinator,
  MemoryStore,
  systemClock,
  type Coordinator,
  type Engine,
  type EngineOptions,
  type ReactorEvent,
  type Store,
} from '../../src/index.js';
import { PostgresCoordinator } from '../../src/storage/postgres/coordinator.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { startPostgresServer } from '../support/postgres-server.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

/** One backend under test: engines over it, direct coordinator access, and a way to let time pass. */
export interface Backend {
  readonly name: string;
  readonly coordinator: Coordinator;
  readonly store: Store;
  /** A fresh engine over this backend, recording its events. */
  engine(options?: Partial<EngineOptions>): { engine: Engine; events: ReactorEvent[] };
  /** Lets `ms` of backend time pass (virtual on memory, real on Redis). */
  pass(ms: number): Promise<void>;
  /** A key unique to this test run. */
  key(name: string): string;
  close(): Promise<void>;
}

let counter = 0;
const unique = (name: string): string =>
  `${name}:${process.pid}:${++counter}:${Math.random().toString(36).slice(2, 8)}`;

function engineFactory(base: Pick<EngineOptions, 'store' | 'coordinator' | 'clock'>) {
  return (options: Partial<EngineOptions> = {}) => {
    const events: ReactorEvent[] = [];
    const engine = createEngine({ ...base, ...options });
    engine.subscribe((e) => events.push(e));
    return { engine, events };
  };
}

/**
 * The memory backend on the system clock: these scenarios mix backend time with real events
 * (a step waiting on a gate while others wait for their turn), so they run in real time, as on
 * Redis, with short durations. Virtual-time tests of the same rules live in `memory-clock.test.ts`.
 */
export async function memoryBackend(): Promise<Backend> {
  const clock = systemClock;
  const coordinator = new MemoryCoordinator({ clock });
  const store = new MemoryStore();
  return {
    name: 'memory',
    coordinator,
    store,
    engine: engineFactory({ store, coordinator, clock }),
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + 5)),
    key: unique,
    close: async () => undefined,
  };
}

/** The Redis backend over a throwaway redis-server. */
export async function redisBackend(): Promise<Backend & { readonly server: RedisServerHandle; readonly redis: Redis }> {
  const server = await startRedisServer();
  const backend = createRedisBackend({ url: server.url, prefix: `t${process.pid}` });
  return {
    name: 'redis',
    server,
    redis: backend.redis,
    coordinator: backend.coordinator,
    store: backend.store,
    engine: engineFactory({ store: backend.store, coordinator: backend.coordinator }),
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + 20)),
    key: unique,
    close: async () => {
      await backend.close();
      await server.dispose();
    },
  };
}

/**
 * The PostgreSQL store and coordinator over a throwaway server (the database's clock), sharing a
 * pool of one connection. The ordered-lock scenarios start runs together and expect positions in
 * the order of the run() calls: one connection keeps the order of every call, as on Redis. With
 * more connections, calls made together reach the database in any order, and so do the
 * positions of runs started together.
 */
export async function postgresBackend(): Promise<Backend> {
  const server = await startPostgresServer();
  const store = new PostgresStore({ connection: { connectionString: server.url, max: 1 }, migrate: true });
  await store.ready();
  const coordinator = new PostgresCoordinator({ connection: store.pool });
  return {
    name: 'postgres',
    coordinator,
    store,
    engine: engineFactory({ store, coordinator }),
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + 20)),
    key: unique,
    close: async () => {
      await coordinator.close();
      await store.close();
      await server.dispose();
    },
  };
}
