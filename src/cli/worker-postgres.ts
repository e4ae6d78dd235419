/**
 * `ts-reactor worker --postgres <url>`: the worker's runtime over PostgreSQL alone
 * (`createPostgresRuntime`): a bounded `SELECT 1` first, the metrics' gauges and readiness over
 * PostgreSQL with `--metrics-port`, and the start-up check (the schema's version, the durability
 * settings) before any job is taken. `worker.ts` runs it like the Redis runtime.
 *
 * @module
 */
import type * as pgModule from 'pg';
import type { BackgroundOptions } from '../engine/jobs/deps.js';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import { DEFAULT_SCHEMA } from '../storage/postgres/names.js';
import { loginRefusal } from '../storage/postgres/errors.js';
import type { CliLogLevel } from './json-logger.js';
import { MissingPeerError, redactUrl } from './redis-check.js';
import type { WorkerModule } from './worker-module.js';
import { openWorkerRuntime, type OpenedWorkerRuntime } from './worker-runtime.js';
import { postgresWorkerGauges } from './worker-metrics.js';

/** What the PostgreSQL worker is given: its options as read from the command line. */
export interface PostgresWorkerConfig {
  readonly url: string;
  readonly schema: string | undefined;
  readonly queueName: string | undefined;
  readonly background: BackgroundOptions;
  readonly logLevel: CliLogLevel | undefined;
  readonly requireDurability: boolean;
  readonly metricsPort: number | undefined;
}

/** Where the command writes. */
interface Io {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/**
 * Opens the worker's PostgreSQL runtime: `SELECT 1` within `pingTimeoutMs`, the operations with
 * `--metrics-port`, the runtime, and its start-up check. Resolves to the exit code (2) when any of
 * them fails, after saying why on `io.err` and closing what was opened.
 */
export async function openPostgresWorker(
  config: PostgresWorkerConfig,
  app: { readonly reactors: readonly AnyReactorDefinition[]; readonly module: WorkerModule },
  io: Io,
  pingTimeoutMs: number,
): Promise<OpenedWorkerRuntime | number> {
  const { module } = app;
  const shownUrl = redactUrl(config.url);
  const queueName = config.queueName ?? module.options?.queueName;
  try {
    await pingPostgres(config.url, pingTimeoutMs);
  } catch (error) {
    io.err(`ts-reactor worker: ${unreachablePostgres(config.url, error)}`);
    return 2;
  }
  return openWorkerRuntime(
    {
      config,
      app,
      queueName,
      prefix: config.schema ?? DEFAULT_SCHEMA,
      gauges: (subscriptions) =>
        postgresWorkerGauges({ url: config.url, schema: config.schema, queueName }, subscriptions),
      factory: async () => {
        const { createPostgresRuntime } = await import('../postgres.js');
        return (options) =>
          createPostgresRuntime({
            ...options,
            connection: config.url,
            ...(config.schema === undefined ? {} : { schema: config.schema }),
          });
      },
      where: `schema ${config.schema ?? DEFAULT_SCHEMA}) on ${shownUrl}`,
    },
    io,
  );
}

/** The `pg` module, as `import('pg')` gives it. */
type PgModule = typeof pgModule;

/** Imports the optional peer `pg`, or throws {@link MissingPeerError} naming it. */
export async function loadPg(): Promise<PgModule> {
  try {
    return await import('pg');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes("'pg'"))
      throw new MissingPeerError('pg', error);
    throw error;
  }
}

/**
 * "cannot reach PostgreSQL at <url, password hidden>: <why>"; the missing package when that is
 * why; the refused login or database, with its fix, when the server refused the URL.
 */
export function unreachablePostgres(url: string, error: unknown): string {
  if (error instanceof MissingPeerError) return error.message;
  const refused = loginRefusal(error);
  if (refused !== undefined) return `${redactUrl(url)}: ${refused.message}`;
  return `cannot reach PostgreSQL at ${redactUrl(url)}: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * `SELECT 1` on a connection of its own, within `timeoutMs`: a wrong URL, a refused login or an
 * unreachable server fails fast, before anything else opens.
 * @throws MissingPeerError when `pg` is not installed; Error with the server's or the driver's message otherwise.
 */
export async function pingPostgres(url: string, timeoutMs: number): Promise<void> {
  const pg = (await loadPg()).default;
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    application_name: 'ts-reactor',
  });
  client.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      (async () => {
        await client.connect();
        await client.query('SELECT 1');
      })(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await client.end().catch(() => undefined);
  }
}
