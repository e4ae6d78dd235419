/**
 * The command line on a Redis Cluster (a throwaway local 3-master cluster): `ts-reactor worker
 * --redis-cluster` runs executions a producer on the cluster starts and serves `/metrics` and
 * `/readyz` with `--metrics-port`; `executions`, `locks`, `schedules` and `dashboard` read and
 * write the cluster with `--redis-cluster`; an empty prefix is reported there too.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fileURLToPath } from 'node:url';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { runDashboardCommand } from '../../src/cli/dashboard.js';
import { main } from '../../src/cli/main.js';
import { runWorkerCommand } from '../../src/cli/worker.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { greet } from './fixtures/worker-reactors.js';
import { useRedisCluster } from '../support/use-redis-cluster.js';

const cluster = useRedisCluster();
const fixture = fileURLToPath(new URL('./fixtures/worker-reactors.ts', import.meta.url));
const prefix = 'cli-cluster';
const POLL = { timeout: 20_000, interval: 50 };

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const onCluster = () => ['--redis-cluster', cluster.handle.spec, '--prefix', prefix];

/** Runs `ts-reactor worker` in this process until `stop` aborts; resolves to its exit code. */
function startWorker(stop: AbortSignal, out: string[]): Promise<number> {
  return runWorkerCommand(
    ['--module', fixture, ...onCluster(), '--metrics-port', '0'],
    { out: (l) => void out.push(l), err: (l) => void out.push(l) },
    { env: {}, signals: [], stop },
  );
}

let producer: RedisRuntime;
let executionId: string;
const stopWorker = new AbortController();
const workerOut: string[] = [];
let worker: Promise<number>;

beforeAll(async () => {
  producer = createRedisRuntime({ cluster: { nodes: cluster.handle.nodes }, prefix, reactors: [greet] });
  worker = startWorker(stopWorker.signal, workerOut);
  ({ executionId } = await producer.engine.start(greet, { name: 'cluster' }));
  expect((await producer.engine.wait(executionId, { timeoutMs: 30_000 })).status).toBe('completed');
}, 90_000);

afterAll(async () => {
  stopWorker.abort();
  await worker;
  await producer?.close();
});

describe('ts-reactor worker --redis-cluster', () => {
  test('runs the executions started on the cluster; --metrics-port serves /metrics and /readyz', async () => {
    expect(workerOut.join('\n')).toMatch(/ts-reactor worker: ready .* reactors: cli-greet/);
    const line = workerOut.find((l) => l.includes('metrics on '));
    const base = /metrics on (http:\/\/[^/]+)\/metrics/.exec(line ?? '')?.[1];
    expect(base, workerOut.join('\n')).toBeDefined();
    await expect.poll(async () => (await fetch(`${base!}/readyz`)).status, POLL).toBe(200);
    const ready = (await (await fetch(`${base!}/readyz`)).json()) as { checks: { name: string; ok: boolean }[] };
    expect(ready.checks).toEqual([
      { name: 'redis', ok: true },
      { name: 'subscriptions', ok: true },
      { name: 'worker', ok: true },
    ]);
    const metrics = await (await fetch(`${base!}/metrics`)).text();
    expect(metrics).toMatch(/^ts_reactor_executions_finished_total\{reactor="cli-greet",status="completed"\} 1$/m);
    expect(metrics).toMatch(/^ts_reactor_queue_jobs\{state="waiting"\} 0$/m);
    expect(metrics).toMatch(/^ts_reactor_executions\{status="running"\} 0$/m);
  });

  test('--redis-cluster next to --redis exits 2', async () => {
    const both = await cli('worker', '--module', fixture, '--redis', 'redis://127.0.0.1:1', ...onCluster());
    expect(both.code).toBe(2);
    expect(both.err).toContain('--redis-cluster and --redis: give one of them');
  });
});

describe('operations commands with --redis-cluster', () => {
  test('executions list and show read the cluster; an empty prefix is reported', async () => {
    const list = await cli('executions', 'list', ...onCluster());
    expect(list.code).toBe(0);
    expect(list.out).toContain(executionId);
    const show = await cli('executions', 'show', executionId, ...onCluster());
    expect(show.code).toBe(0);
    expect(show.out).toContain('completed');
    const empty = await cli('executions', 'list', '--redis-cluster', cluster.handle.spec, '--prefix', 'nothing-here');
    expect(empty.out).toBe(
      '(no executions match) — no key exists under the prefix "nothing-here"; does the app use another prefix? (--prefix, TS_REACTOR_PREFIX)',
    );
    const both = await cli('executions', 'list', '--redis', 'redis://127.0.0.1:1', ...onCluster());
    expect(both.code).toBe(2);
    expect(both.err).toContain('--redis-cluster and --redis: give one of them');
    const bad = await cli('locks', '--redis-cluster', 'nowhere');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--redis-cluster');
  });

  test('locks lists a lock held on the cluster', async () => {
    const direct = createRedisBackend({ cluster: { nodes: cluster.handle.nodes }, prefix });
    try {
      await direct.coordinator.lockAcquire({
        key: 'acct:cluster',
        holder: { owner: 'exec-holder', executionId: 'exec-holder', reactor: 'transfer', step: 'post' },
        ttlMs: 60_000,
      });
      const locks = await cli('locks', ...onCluster());
      expect(locks.code).toBe(0);
      expect(locks.out).toContain('acct:cluster');
      expect(locks.out).toContain('exec-holder');
    } finally {
      await direct.close();
    }
  });

  test('schedules add, list and remove on the cluster', async () => {
    const added = await cli('schedules', 'add', 'hourly', '--reactor', 'cli-greet', '--every', '1h', ...onCluster());
    expect(added, added.err).toMatchObject({ code: 0, err: '' });
    // The runtime on the cluster sees the schedule the command saved.
    expect((await producer.schedules.list()).map((s) => s.id)).toEqual(['hourly']);
    expect((await cli('schedules', 'list', ...onCluster())).out).toMatch(/^hourly {2}cli-greet {2}every 3600000 ms/);
    expect(await cli('schedules', 'remove', 'hourly', ...onCluster())).toMatchObject({ code: 0 });
  });

  test('dashboard serves the executions, /readyz and /metrics over the cluster', async () => {
    const stop = new AbortController();
    const out: string[] = [];
    const running = runDashboardCommand(
      ['--port', '0', '--read-only', ...onCluster()],
      { out: (l) => out.push(l), err: (l) => out.push(l) },
      { stop: stop.signal, signals: [] },
    );
    await expect.poll(() => out.some((l) => l.includes('listening on')), POLL).toBe(true);
    const url = /listening on (\S+)/.exec(out.join('\n'))![1]!;
    expect(out.join('\n')).toContain(`over the cluster at ${cluster.handle.spec}`);
    expect(await (await fetch(url)).text()).toContain(executionId);
    const ready = await fetch(url.replace('/executions', '/readyz'));
    expect(ready.status).toBe(200);
    const metrics = await (await fetch(url.replace('/executions', '/metrics'))).text();
    expect(metrics).toMatch(/^ts_reactor_queue_jobs\{state="waiting"\} 0$/m);
    stop.abort();
    expect(await running).toBe(0);
  });
});
