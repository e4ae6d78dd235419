/**
 * The PostgreSQL acceptance run, as real processes and with no Redis anywhere: `ts-reactor
 * migrate --postgres`, two `ts-reactor worker --postgres <url> --module <app>` processes and a
 * `ts-reactor dashboard --postgres <url>` process. The app (fixtures/postgres-full-app.ts) has a
 * step lock, a sleep and an interrupt (the order), a named rate limit, a fan-out map, an async
 * step and an async child, and a reactor a schedule starts; every execution ends completed. The
 * dashboard's JSON and HTML show them, found by tag. Each CLI process is preloaded with
 * fixtures/connection-log.mjs, which logs every socket it opens: all of them go to the
 * PostgreSQL server's port, none to a Redis, and no variable naming Redis is in their environment.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/engine/model/results.js';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres.js';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { pgBatch, pgChild, pgLimited, pgOrder, pgParent, pgTick, rateLimits } from './fixtures/postgres-full-app.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/postgres-full-app.ts', import.meta.url));
const connectionLog = pathToFileURL(fileURLToPath(new URL('./fixtures/connection-log.mjs', import.meta.url))).href;
const logs = mkdtempSync(join(tmpdir(), 'rx-pg-accept-'));
const SUITE = { suite: 'pg-accept' } as const;

interface Cli {
  readonly child: ChildProcessWithoutNullStreams;
  readonly out: () => string;
  readonly exited: Promise<number | null>;
  /** The sockets it opened (`host:port` or a path), and whether ioredis was loaded (known once it exited). */
  readonly connections: () => { readonly targets: string[]; readonly ioredisLoaded: boolean | undefined };
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
afterAll(() => rmSync(logs, { recursive: true, force: true }));

function cli(name: string, args: readonly string[]): Cli {
  // No Redis URL of any kind in the environment: nothing may reach for Redis.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/redis/i.test(key)));
  const log = join(logs, `${name}.log`);
  const child = spawn(process.execPath, ['--import', connectionLog, '--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...env, TS_REACTOR_CONNECTION_LOG: log },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const connections = (): { targets: string[]; ioredisLoaded: boolean | undefined } => {
    let lines: string[] = [];
    try {
      lines = readFileSync(log, 'utf8').split('\n');
    } catch {
      // nothing logged yet
    }
    const loaded = lines.find((l) => l.startsWith('ioredis-loaded '));
    return {
      targets: lines.filter((l) => l.startsWith('connect ')).map((l) => l.slice('connect '.length)),
      ioredisLoaded: loaded === undefined ? undefined : loaded.endsWith('true'),
    };
  };
  const started = { child, out: () => out, exited, connections };
  children.push(started);
  return started;
}

async function readyLine(process: Cli, text: string): Promise<void> {
  await expect
    .poll(() => process.out().includes(text) || process.child.exitCode !== null, { timeout: 120_000 })
    .toBe(true);
  expect(process.out()).toContain(text);
}

function completedValue<T>(result: RunResult): T {
  expect(result.status, JSON.stringify(result.status === 'failed' ? result.error : result.status)).toBe('completed');
  if (result.status !== 'completed') throw new Error('not completed');
  return result.value as T;
}

describe.skipIf(postgresBackendFactory() === undefined)('the PostgreSQL acceptance run (no Redis)', () => {
  const server = usePostgresServer();

  it('workers run locks, rate limits, sleeps, schedules, interrupts, maps and async children to completion; the dashboard shows them by tag', async () => {
    const migrate = cli('migrate', ['migrate', '--postgres', server.url]);
    expect(await migrate.exited, migrate.out()).toBe(0);

    const workers = [1, 2].map((n) =>
      cli(`worker-${n}`, ['worker', '--postgres', server.url, '--module', fixture, '--concurrency', '4']),
    );
    for (const worker of workers) await readyLine(worker, 'ts-reactor worker: ready');

    // The producer: this process starts the executions and upserts the schedule; it runs no worker.
    const producer = createPostgresRuntime({
      connection: server.url,
      reactors: [pgOrder, pgLimited, pgBatch, pgChild, pgParent, pgTick],
      rateLimits,
    });
    runtimes.push(producer);
    await producer.ready();
    const { engine } = producer;
    const tagged = (kind: string) => ({ tags: { ...SUITE, kind } });

    const orders = await Promise.all(
      ['o-1', 'o-2', 'o-3'].map((orderId) => engine.start(pgOrder, { orderId, account: 'acct-1' }, tagged('order'))),
    );
    const limited = await Promise.all(
      [1, 2, 3].map(() => engine.start(pgLimited, { account: 'acct-r' }, tagged('limited'))),
    );
    const batch = await engine.start(pgBatch, { numbers: [1, 2, 3, 4, 5] }, tagged('map'));
    const parent = await engine.start(pgParent, { orderId: 'o-9' }, tagged('async'));
    // A tick delivered after the next one is due counts as missed; on a busy machine every tick of a
    // 1 s schedule can be that late, so the latest missed one is started (`catch_up_one`) rather than none.
    await producer.schedules.upsert({
      id: 'pg-tick',
      reactor: pgTick,
      every: '1s',
      input: { note: 'tick' },
      missed: 'catch_up_one',
    });

    // The interrupt: each order sleeps after its locked charge, then pauses for its approval.
    for (const { executionId } of orders)
      await expect
        .poll(async () => (await engine.result(executionId, pgOrder))?.status, { timeout: 120_000 })
        .toBe('paused');
    for (const { executionId } of orders) await engine.resume(executionId, { approved: true }, { step: 'approve' });

    const wait = (executionId: string) => engine.wait(executionId, { timeoutMs: 180_000 });
    const orderResults = await Promise.all(orders.map(({ executionId }) => wait(executionId)));
    const charges = orderResults.map(
      (r) => completedValue<{ shipped: boolean; charge: { startedAt: number; finishedAt: number } }>(r).charge,
    );
    // The step lock: no two charges of the account overlapped, whichever worker ran them.
    const sorted = [...charges].sort((a, b) => a.startedAt - b.startedAt);
    for (let i = 1; i < sorted.length; i++)
      expect(sorted[i]!.startedAt).toBeGreaterThanOrEqual(sorted[i - 1]!.finishedAt);
    for (const r of orderResults)
      expect(r.trace.some((e) => e.type === 'step.sleeping' && e.step === 'nap')).toBe(true);

    // The rate limit: three calls started together, two fit in the window; the third was held back, then ran.
    const limitedResults = await Promise.all(limited.map(({ executionId }) => wait(executionId)));
    for (const r of limitedResults) completedValue(r);
    expect(
      limitedResults.some((r) => r.trace.some((e) => e.type === 'run.parked' || e.type === 'coordination.contended')),
      'a call held back by the rate limit',
    ).toBe(true);

    // The fan-out map: one job per element, collected by the parent.
    const batchResult = await wait(batch.executionId);
    expect(completedValue<number>(batchResult)).toBe(55);
    expect(batchResult.trace.filter((e) => e.type === 'map.element_dispatched').length).toBeGreaterThan(0);

    // The async step and the async child reactor.
    const parentResult = await wait(parent.executionId);
    expect(completedValue(parentResult)).toEqual({ audit: 'audited o-9', invoice: 'inv-o-9' });
    const child = await engine.result(`${parent.executionId}~child`, pgChild);
    expect(child?.status).toBe('completed');

    // The schedule: its ticks start executions that the workers complete.
    await expect
      .poll(async () => (await engine.list({ reactor: 'pg-tick', status: 'completed' })).executions.length, {
        timeout: 120_000,
      })
      .toBeGreaterThan(0)
      .catch(async (error: unknown) => {
        // What there is to see when no tick completed: the ticks' executions, the schedule, the workers' output.
        const ticks = (await engine.list({ reactor: 'pg-tick' })).executions.map((e) => e.status);
        const schedules = await producer.schedules.list({ runs: 5 });
        const output = workers.map((w, i) => `worker-${i + 1}: ${w.out().slice(-3_000)}`).join('\n');
        throw new Error(
          `no pg-tick execution completed; executions ${JSON.stringify(ticks)}; schedules ${JSON.stringify(schedules)}\n${output}`,
          { cause: error },
        );
      });
    await producer.schedules.remove('pg-tick');

    // The dashboard, as a process of its own on the same database.
    const dashboard = cli('dashboard', ['dashboard', '--postgres', server.url, '--port', '0', '--module', fixture]);
    await readyLine(dashboard, 'listening on');
    const listing = /listening on (\S+)\/executions/.exec(dashboard.out())![1]!;
    const get = async (path: string): Promise<Response> => {
      const response = await fetch(`${listing}${path}`);
      expect(response.status, path).toBe(200);
      return response;
    };
    const everyId = [...orders, ...limited, batch, parent].map((s) => s.executionId);
    const bySuite = (await (await get('/api/executions?tag=suite%3Dpg-accept&limit=100')).json()) as {
      items: { id: string; status: string; tags: Record<string, string> }[];
    };
    expect(bySuite.items.map((e) => e.id).sort()).toEqual([...everyId].sort());
    for (const item of bySuite.items) expect(item.status).toBe('completed');
    expect(new Set(bySuite.items.map((e) => e.tags.kind))).toEqual(new Set(['order', 'limited', 'map', 'async']));
    const maps = (await (await get('/api/executions?tag=kind%3Dmap')).json()) as { items: { id: string }[] };
    expect(maps.items.map((e) => e.id)).toEqual([batch.executionId]);
    const page = await (await get('/executions?tag=kind%3Dasync')).text();
    expect(page).toContain(parent.executionId);
    expect(page).not.toContain(batch.executionId);
    const detail = (await (await get(`/api/executions/${encodeURIComponent(parent.executionId)}`)).json()) as {
      status: string;
    };
    expect(detail.status).toBe('completed');
    expect(await (await get(`/executions/${encodeURIComponent(orders[0]!.executionId)}`)).text()).toContain('approve');

    dashboard.child.kill('SIGTERM');
    for (const worker of workers) worker.child.kill('SIGTERM');
    for (const process of [dashboard, ...workers]) expect(await process.exited, process.out()).toBe(0);

    // Every socket each process opened went to this PostgreSQL server; none to a Redis.
    const postgres = `127.0.0.1:${server.handle.port}`;
    for (const process of [migrate, dashboard, ...workers]) {
      const { targets } = process.connections();
      // Besides TCP, only tsx's own IPC pipe (`/tmp/tsx-<uid>/<pid>.pipe`), which running from source adds.
      const tcp = targets.filter((t) => !/\/tsx-\d+\/\d+\.pipe$/.test(t));
      expect(tcp.length).toBeGreaterThan(0);
      expect(new Set(tcp)).toEqual(new Set([postgres]));
      expect(process.out()).not.toMatch(/redis/i);
    }
    // ioredis is not even loaded by migrate. The worker and the dashboard load it as module code
    // only, because BullMQ imports it at its top whichever backend it runs on; they never connect.
    expect(migrate.connections().ioredisLoaded).toBe(false);
  }, 600_000);
});
