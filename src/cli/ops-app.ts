/**
 * The app module of an operations command (`--module <path>`, as `ts-reactor worker` reads it):
 * its reactors (known reactors: inputs redacted by contract, actions that run their steps), its
 * key prefix and its queue name. `--prefix` wins over the module's prefix, which wins over
 * `TS_REACTOR_PREFIX`; `--queue` wins over the module's `options.queueName`.
 *
 * @module
 */
import { resolve } from 'node:path';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import { closeModule, closeWarning } from './module-close.js';
import { connect, readTarget, type Connected, type OpsIO, type Target } from './ops-target.js';
import { loadWorkerApp } from './worker.js';
import type { WorkerModule } from './worker-module.js';

/** The options every operations command takes besides the connection ones. */
export const APP_OPTIONS = {
  module: { type: 'string' },
} as const;

/** Where an operations command works and the app it knows. */
export interface OpsApp {
  readonly target: Target;
  /** The module's reactors; empty without `--module`. */
  readonly reactors: readonly AnyReactorDefinition[];
  /** The module, when `--module` was given. */
  readonly module: WorkerModule | undefined;
  /** `--queue`, else the module's `options.queueName`; undefined: the default queue. */
  readonly queueName: string | undefined;
}

/**
 * Reads the connection options (checked before the module is loaded), then loads `--module` when
 * given and resolves the prefix and the queue with it. @throws UsageError on a bad value or a
 * module that does not load (exit 2).
 */
export async function readApp(
  values: Parameters<typeof readTarget>[0] & {
    readonly module?: string | undefined;
    readonly queue?: string | undefined;
  },
  env: Readonly<Record<string, string | undefined>>,
): Promise<OpsApp> {
  const plain = readTarget(values, env);
  if (values.module === undefined) return { target: plain, reactors: [], module: undefined, queueName: values.queue };
  const app = await loadWorkerApp(resolve(values.module));
  return {
    target: readTarget(values, env, app.module.prefix),
    reactors: app.reactors,
    module: app.module,
    queueName: values.queue ?? app.module.options?.queueName,
  };
}

/** Awaits the module's `close()` (bounded), with a warning on stderr when it threw or did not settle. */
export async function closeApp(app: OpsApp, io: OpsIO, name: string): Promise<void> {
  const warning = closeWarning(await closeModule(app.module));
  if (warning !== undefined) io.err(`ts-reactor ${name}: warning: ${warning}`);
}

/**
 * Reads the app ({@link readApp}), connects a read model that knows its reactors, runs `body`, then
 * closes the connection and the module (its `close()`), whatever `body` did.
 */
export async function withApp(
  name: string,
  values: Parameters<typeof readApp>[0],
  io: OpsIO,
  body: (conn: Connected, app: OpsApp) => Promise<number>,
): Promise<number> {
  const app = await readApp(values, io.env ?? process.env);
  try {
    const conn = await connect(app.target, app.reactors);
    try {
      return await body(conn, app);
    } finally {
      await conn.close();
    }
  } finally {
    await closeApp(app, io, name);
  }
}
