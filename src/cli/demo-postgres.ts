/**
 * Where the background demos run with `--postgres <url>`: a schema and a BullMQ queue of their
 * own in that database (`rx_demo_<random>`, `rx-demo-<random>`), created at the start and removed
 * at the end, and the `ts-reactor worker` options that put the demo's worker processes there.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { BackgroundOptions } from '../engine/jobs/deps.js';
import type { Engine } from '../engine/engine.js';
import { readBackendUrl } from './backend-url.js';
import { redactUrl } from './redis-check.js';
import { loadPg, pingPostgres, unreachablePostgres } from './worker-postgres.js';

/** Where the demo writes its lines. */
type Write = (line: string) => void;

/** The demo's place in a PostgreSQL database, opened and migrated. */
export interface PostgresDemoPlace {
  /** `postgres://…` (password hidden), the schema and the queue, for the demo's header. */
  readonly where: string;
  /** The engine that enqueues (it runs no worker). */
  readonly engine: Engine;
  /** What `ts-reactor worker` needs besides `--module` to work there. */
  readonly workerArgs: readonly string[];
  /** Closes the engine's runtime, then drops the schema and the queues' jobs; problems go to `err`. */
  close(err: Write): Promise<void>;
}

/**
 * Opens the demo's place in the database at `raw`: checks the URL, `SELECT 1`, then a runtime on
 * a fresh schema (migrated) and queue. Resolves to the exit code (2) after saying why on `err`
 * when the URL is not a PostgreSQL one or the database cannot be used.
 */
export async function openPostgresDemo(
  raw: string,
  reactors: readonly AnyReactorDefinition[],
  background: BackgroundOptions,
  err: Write,
): Promise<PostgresDemoPlace | number> {
  const parsed = readBackendUrl(raw, 'postgres');
  if (!parsed.ok) {
    err(`ts-reactor demo: --postgres: ${parsed.message}`);
    return 2;
  }
  const url = parsed.url;
  try {
    await pingPostgres(url, 5_000);
  } catch (error) {
    err(`ts-reactor demo: ${unreachablePostgres(url, error)}`);
    return 2;
  }
  const id = randomBytes(4).toString('hex');
  const schema = `rx_demo_${id}`;
  const queueName = `rx-demo-${id}`;
  const { createPostgresRuntime } = await import('../postgres.js');
  const runtime = createPostgresRuntime({ connection: url, schema, queueName, migrate: true, reactors, background });
  const remove = async (): Promise<void> => {
    await runtime.close();
    await dropDemo(url, schema, queueName);
  };
  try {
    await runtime.ready();
  } catch (error) {
    err(`ts-reactor demo: ${(error as Error).message}`);
    await remove().catch(() => undefined);
    return 2;
  }
  return {
    where: `${redactUrl(url)}, schema ${schema} and queue ${queueName}`,
    engine: runtime.engine,
    workerArgs: ['--postgres', url, '--schema', schema, '--queue', queueName],
    close: async (report) =>
      remove().catch((error: unknown) =>
        report(
          `ts-reactor demo: could not remove the demo's schema ${schema} and queue ${queueName}: ${(error as Error).message}`,
        ),
      ),
  };
}

/** Drops the demo's schema and every job of its queues (BullMQ's tables, and a queue's few settings rows, stay). */
async function dropDemo(url: string, schema: string, queueName: string): Promise<void> {
  const { postgresDatastore } = await import('../queue/bullmq-postgres.js');
  const datastore = postgresDatastore({ url }, 'ts-reactor demo');
  for (const name of [queueName, `${queueName}-schedules`]) {
    const queue = datastore.queue(name);
    try {
      await queue.waitUntilReady();
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
    }
  }
  const pg = (await loadPg()).default;
  const client = new pg.Client({ connectionString: url, application_name: 'ts-reactor demo' });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
