/**
 * `ts-reactor worker --postgres <url>`: the worker's runtime over PostgreSQL alone
 * (`createPostgresRuntime`): a bounded `SELECT 1` first, the metrics' gauges and readiness over
 * PostgreSQL with `--metrics-port`, and the start-up check (the schema's version, the durability
 * settings) before any job is taken. `worker.ts` runs it like the Redis runtime.
 *
 * @module
 */
import type { BackgroundOptions } from '../engine/jobs/deps.js';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import { DEFAULT_SCHEMA } from '../storage/postgres/names.js';
import type { CliLogLevel } from './json-logger.js';
import { redactUrl } from './redis-check.js';
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
    io.err(`ts-reactor worker: cannot reach PostgreSQL at ${shownUrl}: ${(error as Error).message}`);
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

/**
 * `SELECT 1` on a connection of its own, within `timeoutMs`: a wrong URL, a refused login or an
 * unreachable server fails fast, before anything else opens.
 * @throws Error with the server's or the driver's message.
 */
export async function pingPostgres(url: string, timeoutMs: number): Promise<void> {
  const pg = (await import('pg')).default;
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
