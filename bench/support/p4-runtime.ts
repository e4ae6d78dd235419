/**
 * The runtime of P4's subject, on Redis (`createRedisRuntime`, one key prefix per worker pair) or
 * on PostgreSQL (`createPostgresRuntime`, one schema per worker pair, BullMQ's jobs in the schema
 * `<prefix>_jobs`), for the benchmark process and its worker children alike.
 *
 * @module
 */
import { createRedisRuntime } from '../../src/bullmq.js';
import type { AnyReactorDefinition, Engine } from '../../src/index.js';
import { createPostgresRuntime } from '../../src/postgres.js';

/** Where P4 runs. */
export type P4BackendKind = 'redis' | 'postgres';

/** What P4 needs of a runtime. */
export interface P4Runtime {
  readonly engine: Engine;
  startWorker(options: { readonly concurrency: number }): unknown;
  close(): Promise<void>;
}

/** Options of {@link openP4Runtime}. */
export interface P4RuntimeOptions {
  readonly backend: P4BackendKind;
  /** The Redis URL or the PostgreSQL connection string. */
  readonly url: string;
  /** The Redis key prefix, or the PostgreSQL schema of the pair. */
  readonly prefix: string;
  readonly reactors: readonly AnyReactorDefinition[];
  readonly parkFallbackMs: number;
  /** Redis only: the coordinator's in-process lock hand-over (PostgreSQL's coordinator hands nothing over). */
  readonly lockHandOff?: boolean | undefined;
}

/** Opens the runtime; on PostgreSQL, once its schema is migrated and checked. */
export async function openP4Runtime(options: P4RuntimeOptions): Promise<P4Runtime> {
  const background = { parkFallbackMs: options.parkFallbackMs };
  if (options.backend === 'redis')
    return createRedisRuntime({
      url: options.url,
      prefix: options.prefix,
      reactors: options.reactors,
      background,
      ...(options.lockHandOff === undefined ? {} : { lockHandOff: options.lockHandOff }),
    });
  const runtime = createPostgresRuntime({
    connection: options.url,
    schema: options.prefix,
    jobsSchema: `${options.prefix}_jobs`,
    migrate: true,
    reactors: options.reactors,
    background,
  });
  try {
    await runtime.ready();
  } catch (error) {
    await runtime.close().catch(() => undefined);
    throw error;
  }
  return runtime;
}
