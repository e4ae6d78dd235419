/**
 * `ts-reactor worker --module app.ts`: a worker process loads a TypeScript app that exports its
 * reactors, a named rate limit, OpenTelemetry tracing and its prefix through `defineWorker`,
 * over a throwaway redis-server. The limit is kept (the third start within the window parks),
 * the spans reach the app's exporter, and /metrics has every metric family, the sampled
 * gauges included (queue jobs by state, the oldest waiting job, parked and sleeping executions).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { METRICS } from '../../src/otel/metric-spec.js';
import { APP_PREFIX, limited, rateLimits, sleeper } from './fixtures/worker-app.js';
import { useRedisServer } from '../support/use-redis-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const app = fileURLToPath(new URL('./fixtures/worker-app.ts', import.meta.url));
const server = useRedisServer();

interface Spawned {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
}

/** `node --import tsx src/cli/main.ts worker <args>` from the repository root. */
function spawnWorker(args: readonly string[], env: Record<string, string | undefined>): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'worker', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, REDIS_URL: undefined, ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Resolves once `check` holds (at most 30 s). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

/** The value of the sample `line` (a metric with its labels) in Prometheus text, if present. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('ts-reactor worker --module app.ts (a TypeScript app, a worker process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'worker-app-'));
  const spans = join(dir, 'spans.jsonl');
  let worker: Spawned;
  let producer: RedisRuntime;
  let base: string;

  beforeAll(async () => {
    // The module's prefix wins over TS_REACTOR_PREFIX.
    worker = spawnWorker(['--redis', server.url, '--module', app, '--metrics-port', '0'], {
      WORKER_APP_SPANS: spans,
      TS_REACTOR_PREFIX: 'not-this-one',
    });
    await until(() => worker.stdout().includes('ts-reactor worker: ready') || worker.child.exitCode !== null);
    expect(worker.stdout(), worker.stderr()).toContain(`prefix ${APP_PREFIX})`);
    base = /metrics on (http:\/\/[^/]+)\/metrics/.exec(worker.stdout())![1]!;
    producer = createRedisRuntime({ url: server.url, prefix: APP_PREFIX, rateLimits, reactors: [limited, sleeper] });
  });

  afterAll(async () => {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await producer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a fresh Redis: the worker warns that no key exists under its prefix, and runs', () => {
    expect(worker.stderr()).toContain(`no key exists under the prefix "${APP_PREFIX}"`);
    expect(worker.stdout()).toContain('reactors: app-limited, app-sleeper');
  });

  test('the named rate limit holds: 2 starts per hour per account, the third parks', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await producer.engine.start(limited, { account: 'acme' })).executionId);
    const settled = async (id: string) => (await producer.engine.result(id))?.status;
    await expect
      .poll(async () => Promise.all(ids.map(settled)), { timeout: 20_000 })
      .toEqual(expect.arrayContaining(['completed', 'completed', 'parked']));
    const other = await producer.engine.start(limited, { account: 'globex' });
    expect((await producer.engine.wait(other.executionId, { timeoutMs: 15_000 })).status).toBe('completed');
  });

  test('the app exports spans through its own OpenTelemetry middleware', async () => {
    await expect
      .poll(() => readSpans().filter((s) => s.name === 'run app-limited').length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(4);
    const names = new Set(readSpans().map((s) => s.name));
    expect(names).toContain('step call');
    expect(readSpans().some((s) => s.events.includes('run.parked'))).toBe(true);
  });

  test('/metrics has every family, with the parked and sleeping executions and the queue sampled', async () => {
    const { executionId } = await producer.engine.start(sleeper, {});
    await expect
      .poll(async () => (await producer.engine.result(executionId))?.status, { timeout: 15_000 })
      .toBe('parked');
    let text = '';
    await expect
      .poll(
        async () => {
          text = await (await fetch(`${base}/metrics`)).text();
          return [
            sample(text, 'ts_reactor_executions{status="sleeping"}'),
            sample(text, 'ts_reactor_executions{status="parked"}'),
          ];
        },
        { timeout: 20_000, interval: 500 },
      )
      .toEqual([1, 1]);
    for (const spec of Object.values(METRICS)) {
      const family = spec.kind === 'counter' ? `${spec.name}_total` : spec.name;
      expect(text, family).toMatch(new RegExp(`^# TYPE ${family} ${spec.kind}$`, 'm'));
    }
    expect(sample(text, 'ts_reactor_executions_finished_total{reactor="app-limited",status="completed"}')).toBe(3);
    expect(sample(text, 'ts_reactor_parks_total{primitive="rate_limit"}')).toBeGreaterThanOrEqual(1);
    // The parked execution's fallback job and the sleep's wake-up job wait in BullMQ's delayed set.
    expect(sample(text, 'ts_reactor_queue_jobs{state="delayed"}')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'ts_reactor_queue_jobs{state="waiting"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'ts_reactor_queue_oldest_waiting_seconds')).toBeGreaterThanOrEqual(0);
  });

  test('SIGTERM stops it with exit code 0', async () => {
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  });

  function readSpans(): { name: string; events: string[] }[] {
    try {
      return readFileSync(spans, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { name: string; events: string[] });
    } catch {
      return [];
    }
  }
});
