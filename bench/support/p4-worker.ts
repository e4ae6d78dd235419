/**
 * Child process of P4 (`node --import tsx p4-worker.ts '<json config>'`, see {@link P4ChildConfig}).
 * Prints `{"ready":true}`, then answers stdin lines: `ping <n>` → `{"pong":n,"t":…}`.
 *
 * - mode `worker`: a ts-reactor worker (`startWorker({ concurrency })` of the Redis or PostgreSQL runtime)
 *   for the contended reactor. Prints `{"done":id,"t":…}` at each `run.completed`; keeps a log
 *   of timestamped events and sections, printed and cleared on `dump <round>`.
 * - mode `mutex`: on `go <round>`, `contenders` `redis-semaphore` Mutexes (default options: the
 *   10 ms polling retry) on one key each run the section once; prints the round's timestamps. On
 *   PostgreSQL (`backend: 'postgres'`) the mutex is the simplest SQL lock (insert the key's row,
 *   delete it), tried again every 10 ms likewise.
 *
 * Timestamps are `performance.timeOrigin + performance.now()` of this process.
 *
 * @module
 */
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Mutex } from 'redis-semaphore';
import type { ReactorEvent } from '../../src/index.js';
import { now, section } from './children.js';
import { openP4Runtime } from './p4-runtime.js';
import { contendedReactor, SQL_MUTEX_RETRY_MS, SQL_MUTEX_TABLE, type P4ChildConfig } from './p4-shared.js';

const config = JSON.parse(process.argv[2] ?? '{}') as P4ChildConfig;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

const commands = createInterface({ input: process.stdin });
const handlers: ((verb: string, arg: string) => void)[] = [];
commands.on('line', (line) => {
  const [verb = '', arg = ''] = line.trim().split(/\s+/);
  if (verb === 'ping') return print({ pong: Number(arg), t: now() });
  for (const h of handlers) h(verb, arg);
});
commands.on('close', () => process.exit(0)); // the parent went away

async function worker(): Promise<void> {
  const log: Record<string, unknown>[] = [];
  const definition = contendedReactor(
    config.key,
    config.sectionMs,
    (id, start, end) => log.push({ kind: 'section', id, start, end }),
    config.level,
  );
  const runtime = await openP4Runtime({
    backend: config.backend ?? 'redis',
    url: config.url,
    prefix: config.prefix,
    reactors: [definition],
    parkFallbackMs: config.parkFallbackMs,
    lockHandOff: config.lockHandOff,
  });
  const interesting = new Set<ReactorEvent['type']>([
    'run.resumed',
    'run.parked',
    'coordination.acquired',
    'coordination.released',
    'run.completed',
    'step.succeeded',
  ]);
  runtime.engine.subscribe((event) => {
    if (!interesting.has(event.type)) return;
    const t = now();
    log.push({
      kind: event.type,
      id: event.executionId,
      t,
      ...(event.type === 'run.resumed' ? { jobId: event.jobId } : {}),
      ...(event.type === 'coordination.released' && event.handedOver === true ? { handedOver: true } : {}),
    });
    if (event.type === 'run.completed') print({ done: event.executionId, t, pid: process.pid });
  });
  handlers.push((verb, arg) => {
    if (verb !== 'dump') return;
    print({ dump: Number(arg), pid: process.pid, log: log.splice(0) });
  });
  runtime.startWorker({ concurrency: config.concurrency });
  process.once('SIGTERM', () => void runtime.close().finally(() => process.exit(0)));
  print({ ready: true, pid: process.pid });
}

async function mutex(): Promise<void> {
  const redis = new Redis(config.url, { maxRetriesPerRequest: 3 });
  await redis.ping();
  handlers.push((verb, arg) => {
    if (verb !== 'go') return;
    const round = Number(arg);
    const startedAt = now();
    const contender = async (): Promise<{ start: number; end: number; released: number }> => {
      const lock = new Mutex(redis, config.key); // default options: retryInterval 10 ms
      await lock.acquire();
      const start = now();
      await section(config.sectionMs);
      const end = now();
      await lock.release();
      return { start, end, released: now() };
    };
    void Promise.all(Array.from({ length: config.concurrency }, contender)).then(
      (sections) => print({ round, pid: process.pid, startedAt, sections }),
      (error: unknown) => print({ round, pid: process.pid, error: String(error) }),
    );
  });
  print({ ready: true, pid: process.pid });
}

/** The PostgreSQL anchor: the simplest SQL lock (insert the key's row, delete it), polled every 10 ms. */
async function sqlMutex(): Promise<void> {
  const pool = new pg.Pool({ connectionString: config.url, max: config.concurrency });
  await pool.query('SELECT 1');
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  handlers.push((verb, arg) => {
    if (verb !== 'go') return;
    const round = Number(arg);
    const startedAt = now();
    const contender = async (): Promise<{ start: number; end: number; released: number }> => {
      const owner = randomUUID();
      for (;;) {
        const took = await pool.query(
          `INSERT INTO ${SQL_MUTEX_TABLE} (key, owner) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING 1`,
          [config.key, owner],
        );
        if (took.rowCount === 1) break;
        await sleep(SQL_MUTEX_RETRY_MS);
      }
      const start = now();
      await section(config.sectionMs);
      const end = now();
      await pool.query(`DELETE FROM ${SQL_MUTEX_TABLE} WHERE key = $1 AND owner = $2`, [config.key, owner]);
      return { start, end, released: now() };
    };
    void Promise.all(Array.from({ length: config.concurrency }, contender)).then(
      (sections) => print({ round, pid: process.pid, startedAt, sections }),
      (error: unknown) => print({ round, pid: process.pid, error: String(error) }),
    );
  });
  print({ ready: true, pid: process.pid });
}

(config.mode === 'worker' ? worker() : config.backend === 'postgres' ? sqlMutex() : mutex()).catch((error: unknown) => {
  process.stderr.write(`p4 child failed: ${String(error)}\n`);
  process.exit(1);
});
