/**
 * The backend matrix: one feature suite, written once, run on every backend. A suite file calls
 * {@link describeOnBackends} with a body over a {@link MatrixBackend}; the body runs once per
 * backend (memory, Redis, PostgreSQL; a Redis Cluster when the suite opts in), each in a
 * `describe` named after the backend. A backend on a server starts that server once per file (the
 * first block that needs it starts it, the last one to finish disposes of it); every runtime and
 * rig a test builds lives on a namespace of its own (a key prefix, a schema, a queue name) and is
 * closed after the test.
 *
 * A new backend joins by adding one entry to `MATRIX_BACKENDS` (./backend-recipes.ts;
 * docs/backends.md, "The backend matrix").
 */
import { afterAll, afterEach, beforeAll, describe, test } from 'vitest';
import { createEngine, type Clock, type ReactorEvent } from '../../src/index.js';
import type { Backend as PortBundle } from '../../src/ports/backend.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime/create-runtime.js';
import {
  addressOf,
  DEFAULT_BACKENDS,
  MATRIX_BACKENDS,
  backendAvailable,
  type EngineRig,
  type MatrixBackendName,
  type ServerAddress,
} from './backend-recipes.js';
import type { ServerHandle } from './use-server.js';

export { DEFAULT_BACKENDS, MATRIX_BACKENDS, type EngineRig, type MatrixBackendName } from './backend-recipes.js';

/** Options of {@link MatrixBackend.runtime}: the runtime's, the bundle's, and for memory an injected clock. */
export type MatrixRuntimeOptions = RuntimeOptions & {
  /** The memory backend's clock (a `ManualClock` in virtual-time tests); the server backends run on their own. */
  readonly clock?: Clock;
  /** The backend's record TTL (`recordTtlMs` of its runtime factory). */
  readonly recordTtlMs?: number;
  /** The namespace of another runtime of the same backend, to share its state (a second process's view); default a fresh one. */
  readonly namespace?: string;
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
  /** Where its server is (empty for memory), for a child process that builds the same backend (`bundleOf`). */
  address(): ServerAddress;
  /** A store and coordinator with engines over them, on a fresh namespace, closed when the backend's block ends (or by its `close`). */
  rig(): Promise<EngineRig>;
}

let counter = 0;
/** A name unique to this process and call: `name`, pid, a counter and a random suffix. */
export const uniqueName = (name: string): string =>
  `${name}:${process.pid}:${++counter}:${Math.random().toString(36).slice(2, 8)}`;
/** A namespace (key prefix, schema) unique to this process and call. */
export const namespaceOf = (name: MatrixBackendName): string =>
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
  }, 300_000); // a bound on a server that never starts (a cluster is six): a loaded machine may take minutes
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
      const { clock, recordTtlMs, namespace = namespaceOf(name), ...runtimeOptions } = options;
      const backend = recipe.bundle(current, namespace, { clock, recordTtlMs });
      const runtime = createRuntime(backend, { ...(clock === undefined ? {} : { clock }), ...runtimeOptions });
      closers.push(() => runtime.close());
      return { ...runtime, backend, namespace };
    },
    address: () => addressOf(current),
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
  const backends = (options.backends ?? DEFAULT_BACKENDS).filter(backendAvailable);
  describe.each(backends.map((backend) => [backend] as const))(`${name} on %s`, (backend) => {
    body(matrixBackend(backend));
  });
}

/**
 * `test` where `condition` holds, and nothing registered elsewhere: a case that does not exist on
 * a backend (two processes on the memory backend) stays out of that backend's run instead of
 * showing as skipped. The call site says why in a comment.
 */
export function testWhere(
  condition: boolean,
): (name: string, fn: () => Promise<void> | void, timeout?: number) => void {
  return condition ? (name, fn, timeout) => test(name, fn, timeout) : () => undefined;
}
