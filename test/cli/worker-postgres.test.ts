/**
 * `ts-reactor migrate --postgres` then `ts-reactor worker --postgres <url> --module app.ts`, real
 * processes on a throwaway PostgreSQL and no Redis: orders of one account charge under a step
 * lock (never overlapping), sleep, pause on an approval (an interrupt), and complete once resumed;
 * the operations commands and the dashboard read the same database.
 * A worker on a database without the schema exits 2 naming the fix.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runDashboardCommand } from '../../src/cli/dashboard.js';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres.js';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { pgOrder } from './fixtures/postgres-app.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/postgres-app.ts', import.meta.url));

interface Cli {
  readonly child: ChildProcessWithoutNullStreams;
  readonly out: () => string;
  readonly exited: Promise<number | null>;
}

const children: Cli[] = [];
const runtimes: PostgresRuntime[] = [];

afterEach(async () => {
  while (runtimes.length > 0) await runtimes.pop()?.close();
  for (const cli of children.splice(0)) {
    if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGTERM');
    await Promise.race([cli.exited, new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
    if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
  }
});

function cli(args: readonly string[]): Cli {
  // No REDIS_URL: nothing may reach for Redis.
  const { REDIS_URL: _redis, ...env } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
    env,
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = { child, out: () => out, exited };
  children.push(started);
  return started;
}

describe.skipIf(postgresBackendFactory() === undefined)('ts-reactor worker --postgres', () => {
  const server = usePostgresServer();

  it('migrate, then two workers run locked, sleeping, interrupted orders to completion with no Redis', async () => {
    const migrate = cli(['migrate', '--postgres', server.url]);
    expect(await migrate.exited, migrate.out()).toBe(0);
    expect(migrate.out()).toMatch(/version 0 -> \d+ \(applied 1, /);

    const workers = [0, 1].map(() =>
      cli(['worker', '--postgres', server.url, '--module', fixture, '--concurrency', '4']),
    );
    for (const worker of workers)
      await expect
        .poll(() => worker.out().includes('ts-reactor worker: ready') || worker.child.exitCode !== null, {
          timeout: 60_000,
        })
        .toBe(true);
    for (const worker of workers) expect(worker.out()).toContain('schema ts_reactor) on postgres://');

    // A producer in this process: starts the orders, resumes them; the workers run them.
    const producer = createPostgresRuntime({ connection: server.url, reactors: [pgOrder] });
    runtimes.push(producer);
    await producer.ready();
    const orders = await Promise.all(
      ['o-1', 'o-2', 'o-3'].map((orderId) => producer.engine.start(pgOrder, { orderId, account: 'acct-1' })),
    );
    for (const { executionId } of orders)
      await expect
        .poll(async () => (await producer.engine.result(executionId, pgOrder))?.status, { timeout: 60_000 })
        .toBe('paused');
    for (const { executionId } of orders)
      await producer.engine.resume(executionId, { approved: true }, { step: 'approve' });
    const results = await Promise.all(
      orders.map(({ executionId }) => producer.engine.wait(executionId, pgOrder, { timeoutMs: 60_000 })),
    );
    const charges = results.map((result) => {
      expect(result.status).toBe('completed');
      if (result.status !== 'completed') throw new Error('not completed');
      expect(result.value.shipped).toBe(true);
      return result.value.charge;
    });
    // The step lock: no two charges of the account overlapped, whichever worker ran them.
    const sorted = [...charges].sort((a, b) => a.startedAt - b.startedAt);
    for (let i = 1; i < sorted.length; i++)
      expect(sorted[i]!.startedAt).toBeGreaterThanOrEqual(sorted[i - 1]!.finishedAt);

    // The operations commands read the same database.
    const listed = cli(['executions', 'list', '--postgres', server.url, '--json']);
    expect(await listed.exited, listed.out()).toBe(0);
    for (const { executionId } of orders) expect(listed.out()).toContain(executionId);
    const locks = cli(['locks', '--postgres', server.url]);
    expect(await locks.exited, locks.out()).toBe(0);
    const schedules = cli(['schedules', 'list', '--postgres', server.url]);
    expect(await schedules.exited, schedules.out()).toBe(0);

    // The dashboard over the same database: the executions listed, /readyz checks PostgreSQL and the LISTEN connection.
    const stop = new AbortController();
    const lines: string[] = [];
    const served = runDashboardCommand(
      ['--postgres', server.url, '--port', '0', '--read-only'],
      { out: (l) => lines.push(l), err: (l) => lines.push(l) },
      { stop: stop.signal, signals: [] },
    );
    try {
      await expect.poll(() => lines.some((l) => l.includes('listening on')), { timeout: 30_000 }).toBe(true);
      const url = /listening on (\S+)/.exec(lines.join('\n'))![1]!;
      expect(lines.join('\n')).toContain('(schema ts_reactor, read-only;');
      expect(await (await fetch(url)).text()).toContain(orders[0]!.executionId);
      const ready = await fetch(url.replace('/executions', '/readyz'));
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { checks: { name: string }[] }).checks.map((c) => c.name)).toEqual([
        'postgres',
        'subscriptions',
      ]);
    } finally {
      stop.abort();
      expect(await served).toBe(0);
    }

    for (const worker of workers) worker.child.kill('SIGTERM');
    for (const worker of workers) expect(await worker.exited, worker.out()).toBe(0);
    for (const worker of workers) expect(worker.out()).not.toMatch(/redis/i);
  }, 240_000);

  it('a database without the schema: the worker exits 2 naming both versions and the migrate command', async () => {
    const worker = cli(['worker', '--postgres', server.url, '--schema', 'not_here', '--module', fixture]);
    expect(await worker.exited, worker.out()).toBe(2);
    expect(worker.out()).toContain('PostgreSQL schema "not_here" has no ts-reactor tables (version 0)');
    expect(worker.out()).toContain('ts-reactor migrate --postgres <url>');
  }, 120_000);

  it('a URL no PostgreSQL answers: exit 2, "cannot reach PostgreSQL", password redacted', async () => {
    const worker = cli(['worker', '--postgres', 'postgres://app:secret@127.0.0.1:1/app', '--module', fixture]);
    expect(await worker.exited, worker.out()).toBe(2);
    expect(worker.out()).toContain('cannot reach PostgreSQL at postgres://app:***@127.0.0.1:1/app');
    expect(worker.out()).not.toContain('secret');
  }, 120_000);
});
