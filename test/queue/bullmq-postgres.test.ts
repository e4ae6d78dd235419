/**
 * BullMQ on PostgreSQL beyond the queue contract (`test/contract/bullmq-postgres-queue.test.ts`):
 * BullMQ's tables in a schema of their own, option errors before anything opens, an outage ridden
 * out and one that lasts, the operators' queue view with its workers, and the schedules on BullMQ's
 * job schedulers. Skipped with BullMQ 5, which has no PostgreSQL backend (the contract file checks
 * the refusal there).
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { QueueUnavailableError, RuntimeOptionError } from '../../src/errors.js';
import type { ExecutionJob } from '../../src/ports/queue.js';
import {
  createBullmqPostgresConsumer,
  createBullmqPostgresQueue,
  createBullmqPostgresQueueStats,
  createBullmqPostgresSchedules,
  isPostgresOutage,
  postgresBackendFactory,
  postgresDatastore,
} from '../../src/queue/bullmq-postgres.js';
import { blockingConnectionOf, commandClientOf, onBackend } from '../../src/queue/bullmq-internals.js';
import type { ScheduleDefinition } from '../../src/schedules/types.js';
import { usePostgresServer } from '../support/use-postgres-server.js';

const job = (executionId: string): ExecutionJob => ({ v: 1, executionId, reactor: 'orders' });
const closers: (() => Promise<void>)[] = [];
let seq = 0;

async function until(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not so within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(postgresBackendFactory() === undefined)('BullMQ on PostgreSQL', () => {
  const server = usePostgresServer();

  afterEach(async () => {
    while (closers.length > 0) await closers.pop()?.();
  });

  async function query<R>(text: string): Promise<R[]> {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      return (await client.query(text)).rows as R[];
    } finally {
      await client.end();
    }
  }

  it("keeps BullMQ's tables in the schema it is given, and none in public", async () => {
    const queue = createBullmqPostgresQueue({ connection: { url: server.url, schema: 'rx_jobs' }, name: `s${++seq}` });
    closers.push(() => queue.close());
    await queue.enqueue(job('e1'), { jobId: 'e1:1' });
    expect(await queue.jobStates?.(['e1:1'])).toEqual(['queued']);
    const tables = await query<{ table_schema: string }>(
      "SELECT DISTINCT table_schema FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
    );
    expect(tables.map((t) => t.table_schema)).toContain('rx_jobs');
    expect(tables.map((t) => t.table_schema)).not.toContain('public');
  });

  it('refuses a bad connection option with RuntimeOptionError, before anything opens', () => {
    const refused = (connection: Parameters<typeof createBullmqPostgresQueue>[0]['connection']): unknown => {
      try {
        createBullmqPostgresQueue({ connection });
      } catch (error) {
        return error;
      }
      return undefined;
    };
    for (const [connection, option] of [
      [{ url: 'redis://127.0.0.1:6379' }, 'connection.url'],
      [{ url: server.url, schema: 'bad-name' }, 'connection.schema'],
      [{ url: server.url, schema: '1st' }, 'connection.schema'],
      [{ url: server.url, poolSize: 0 }, 'connection.poolSize'],
    ] as const) {
      const error = refused(connection);
      expect(error, option).toBeInstanceOf(RuntimeOptionError);
      expect((error as RuntimeOptionError).details).toMatchObject({ option, factory: 'createBullmqPostgresQueue' });
    }
  });

  it("reads none of the Redis connections BullMQ 6 keeps on a Redis backend (write coalescing and the worker's close during an outage do not apply)", async () => {
    const datastore = postgresDatastore({ url: server.url }, 'test');
    const queue = datastore.queue(`n${++seq}`);
    const { worker, release } = datastore.worker(`n${seq}`, async () => undefined, { autorun: false });
    worker.on('error', () => undefined);
    try {
      // Closed before its set-up is over, BullMQ's worker would open its LISTEN connection after the close, and leave it.
      await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
      expect(onBackend(queue)).toBe(true);
      expect(commandClientOf(queue)).toBeUndefined();
      expect(commandClientOf(worker)).toBeUndefined();
      expect(blockingConnectionOf(worker)).toBeUndefined();
    } finally {
      await worker.close();
      await release();
      await queue.close();
    }
  });

  it('a stopped consumer and a closed queue leave no connection open', async () => {
    const others = async (): Promise<number> =>
      Number(
        (
          await query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname IS NOT NULL AND pid <> pg_backend_pid()',
          )
        )[0]?.n,
      );
    await until(async () => (await others()) === 0, 'the connections of the tests before closed');
    const name = `c${++seq}`;
    const queue = createBullmqPostgresQueue({ connection: { url: server.url }, name });
    const consumer = createBullmqPostgresConsumer({ connection: { url: server.url }, name });
    const seen: string[] = [];
    consumer.start(
      async (_payload, { jobId }) => {
        seen.push(jobId);
      },
      { concurrency: 2 },
    );
    await queue.enqueue(job('e1'), { jobId: 'e1:1' });
    await until(() => seen.length === 1, 'the job delivered');
    expect(await others()).toBeGreaterThan(0);
    await consumer.stop();
    await queue.close();
    await until(async () => (await others()) === 0, 'every connection closed');
  });

  it('tells an outage from a refusal', () => {
    const code = (c: string, message = 'x'): Error => Object.assign(new Error(message), { code: c });
    expect(isPostgresOutage(code('ECONNREFUSED'))).toBe(true);
    expect(isPostgresOutage(code('57P01', 'terminating connection due to administrator command'))).toBe(true);
    expect(isPostgresOutage(code('08006'))).toBe(true);
    expect(isPostgresOutage(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isPostgresOutage(code('23505', 'duplicate key value'))).toBe(false);
    expect(isPostgresOutage(code('42P01', 'relation does not exist'))).toBe(false);
    expect(isPostgresOutage('ECONNREFUSED')).toBe(false);
  });

  it('rides out a restart of PostgreSQL: an enqueue made while it is down resolves once it is back, and the job is delivered', async () => {
    const name = `o${++seq}`;
    const queue = createBullmqPostgresQueue({ connection: { url: server.url }, name, outageToleranceMs: 60_000 });
    closers.push(() => queue.close());
    await queue.enqueue(job('before'), { jobId: 'before:1' });
    await server.handle.stop();
    const during = queue.enqueue(job('during'), { jobId: 'during:1' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await server.handle.restart();
    await during;
    const seen: string[] = [];
    const consumer = createBullmqPostgresConsumer({ connection: { url: server.url }, name });
    closers.push(() => consumer.stop());
    consumer.start(
      async (_payload, { jobId }) => {
        seen.push(jobId);
      },
      { concurrency: 2 },
    );
    await until(() => seen.length === 2, 'both jobs delivered');
    expect(seen.sort()).toEqual(['before:1', 'during:1']);
  }, 90_000);

  it('a consumer waiting for work when PostgreSQL restarts takes the jobs enqueued after it', async () => {
    const name = `r${++seq}`;
    const queue = createBullmqPostgresQueue({ connection: { url: server.url }, name, outageToleranceMs: 60_000 });
    closers.push(() => queue.close());
    const seen: string[] = [];
    const consumer = createBullmqPostgresConsumer({ connection: { url: server.url }, name });
    closers.push(() => consumer.stop());
    consumer.start(
      async (_payload, { jobId }) => {
        seen.push(jobId);
      },
      { concurrency: 1 },
    );
    await queue.enqueue(job('before'), { jobId: 'before:1' });
    await until(() => seen.length === 1, 'the first job delivered');
    await server.handle.restart();
    await queue.enqueue(job('after'), { jobId: 'after:1' });
    await until(() => seen.length === 2, 'the job enqueued after the restart delivered', 60_000);
    expect(seen).toEqual(['before:1', 'after:1']);
  }, 90_000);

  it('a consumer and a queue close while PostgreSQL is down', async () => {
    const name = `d${++seq}`;
    const queue = createBullmqPostgresQueue({ connection: { url: server.url }, name });
    const consumer = createBullmqPostgresConsumer({ connection: { url: server.url }, name });
    const seen: string[] = [];
    consumer.start(
      async (_payload, { jobId }) => {
        seen.push(jobId);
      },
      { concurrency: 1 },
    );
    await queue.enqueue(job('e1'), { jobId: 'e1:1' });
    await until(() => seen.length === 1, 'the job delivered');
    await server.handle.stop();
    try {
      await consumer.stop();
      await queue.close();
    } finally {
      await server.handle.restart();
    }
  }, 60_000);

  it('an outage that outlasts outageToleranceMs fails the enqueue with QueueUnavailableError', async () => {
    const queue = createBullmqPostgresQueue({
      connection: { url: server.url },
      name: `u${++seq}`,
      outageToleranceMs: 500,
    });
    closers.push(() => queue.close());
    await queue.enqueue(job('first'), { jobId: 'first:1' });
    await server.handle.stop();
    try {
      await expect(queue.enqueue(job('e1'), { jobId: 'e1:1' })).rejects.toBeInstanceOf(QueueUnavailableError);
    } finally {
      await server.handle.restart();
    }
  }, 60_000);

  it("the operators' view: counts, the jobs by state, and the workers with their concurrency", async () => {
    const name = `i${++seq}`;
    const queue = createBullmqPostgresQueue({ connection: { url: server.url }, name });
    closers.push(() => queue.close());
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    const consumer = createBullmqPostgresConsumer({ connection: { url: server.url }, name });
    closers.push(() => consumer.stop());
    closers.push(async () => release());
    consumer.start(
      async (_payload, { jobId }) => {
        started.push(jobId);
        await held;
      },
      { concurrency: 1 },
    );
    await queue.enqueue(job('run'), { jobId: 'run:1' });
    await until(() => started.length === 1, 'the job running');
    await queue.enqueue(job('wait'), { jobId: 'wait:1', priority: 4 });
    await queue.enqueue(job('later'), { jobId: 'later:1', delayMs: 3_600_000 });
    const view = await queue.inspectQueue();
    expect(view.name).toBe(name);
    expect(view.counts).toMatchObject({ active: 1, delayed: 1, prioritized: 1 });
    expect(view.active.map((j) => j.jobId)).toEqual(['run:1']);
    expect(view.delayed.map((j) => j.jobId)).toEqual(['later:1']);
    expect(view.waiting.map((j) => [j.jobId, j.priority])).toEqual([['wait:1', 4]]);
    expect(view.workers).toHaveLength(1);
    expect(view.workers[0]).toMatchObject({ concurrency: 1 });
    expect(view.workers[0]?.name).toMatch(/-\d+$/); // <host>-<pid>
  });

  it("the metrics' reader: job counts by state, and how long the oldest runnable job has waited", async () => {
    const name = `m${++seq}`;
    const queue = createBullmqPostgresQueue({ connection: { url: server.url }, name });
    closers.push(() => queue.close());
    let now = Date.now();
    const stats = createBullmqPostgresQueueStats({ connection: { url: server.url }, name, now: () => now });
    closers.push(() => stats.close());
    expect(await stats.oldestWaitingMs()).toBeUndefined();
    await queue.enqueue(job('w'), { jobId: 'w:1' });
    await queue.enqueue(job('p'), { jobId: 'p:1', priority: 2 });
    await queue.enqueue(job('d'), { jobId: 'd:1', delayMs: 3_600_000 });
    expect(await stats.jobCounts()).toMatchObject({ waiting: 1, prioritized: 1, delayed: 1, active: 0, failed: 0 });
    now = Date.now() + 60_000; // every job was added before this Date.now()
    expect(await stats.oldestWaitingMs()).toBeGreaterThanOrEqual(60_000);
  });

  it("schedules on BullMQ's job schedulers: stored, listed, ticked at their times to one consumer, failures read back, removed", async () => {
    const name = `t${++seq}`;
    const schedules = createBullmqPostgresSchedules({ connection: { url: server.url }, name });
    closers.push(() => schedules.close());
    const first = Math.ceil((Date.now() + 500) / 100) * 100;
    const definition: ScheduleDefinition = {
      v: 1,
      id: 'every-300',
      reactor: 'orders',
      everyMs: 300,
      missed: 'skip',
      updatedAt: Date.now(),
    };
    await schedules.put(definition, first);
    expect(await schedules.get('every-300')).toEqual(definition);
    expect((await schedules.list()).map((d) => d.id)).toEqual(['every-300']);
    const ticks: number[] = [];
    const stop = schedules.consume(async (_definition, tick) => {
      ticks.push(tick);
      return { tickAt: tick, at: Date.now(), code: 'input_invalid', message: 'bad input' };
    });
    closers.push(stop);
    await until(() => ticks.length >= 3, 'three ticks');
    await until(async () => (await schedules.failures?.())?.get('every-300') !== undefined, 'a failure read back');
    expect((await schedules.failures?.())?.get('every-300')).toMatchObject({
      code: 'input_invalid',
      message: 'bad input',
    });
    expect(ticks[0]).toBe(first);
    // Each tick is at its time on the 300 ms grid; a consumer late past a tick's time skips it
    // ('skip'), so on a loaded machine consecutive ticks may be more than one period apart.
    for (const [i, tick] of ticks.entries()) {
      expect((tick - first) % 300).toBe(0);
      if (i > 0) expect(tick).toBeGreaterThan(ticks[i - 1]!);
    }
    expect(await schedules.remove('every-300')).toBe(true);
    expect(await schedules.get('every-300')).toBeUndefined();
    expect(await schedules.remove('every-300')).toBe(false);
  });
});
