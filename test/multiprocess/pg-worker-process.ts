/**
 * A worker process for `postgres-workers.test.ts`: `node --import tsx pg-worker-process.ts '<json>'`
 * (see {@link PgWorkerConfig}). Builds a PostgreSQL runtime with the reactors of `pg-protocol.ts`,
 * starts a worker, prints `{"ready":true}`, and takes jobs until SIGTERM (graceful close, then a
 * `{"stopped":true,…}` line with its counts). Each section is guarded (`pg-protocol.ts`) and
 * sleeps 1–3 ms inside.
 */
import pg from 'pg';
import { createPostgresRuntime } from '../../src/postgres.js';
import type { ReactorEvent } from '../../src/index.js';
import { buildPgReactors, guardEnter, guardLeave, type PgWorkerConfig } from './pg-protocol.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const writeLine = (value: unknown): Promise<void> =>
  new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as PgWorkerConfig;
  const guardPool = new pg.Pool({ connectionString: config.url, max: 4 });
  const counts = { completed: 0, failed: 0, maxInside: 0 };
  const reactors = buildPgReactors(async (key, executionId) => {
    const inside = await guardEnter(guardPool, config.guard, key, executionId);
    counts.maxInside = Math.max(counts.maxInside, inside);
    try {
      await sleep(1 + Math.floor(Math.random() * 3));
    } finally {
      await guardLeave(guardPool, config.guard, key);
    }
  });
  const runtime = createPostgresRuntime({ connection: config.url, reactors: Object.values(reactors) });
  runtime.engine.subscribe((e: ReactorEvent) => {
    if (e.type === 'run.completed') counts.completed++;
    else if (e.type === 'run.failed') counts.failed++;
  });
  process.once('SIGTERM', () => {
    void runtime
      .close()
      .then(async () => {
        await writeLine({ stopped: true, pid: process.pid, ...counts });
        await guardPool.end();
      })
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  await runtime.ready();
  runtime.startWorker({ concurrency: config.concurrency });
  await writeLine({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `pg-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
