/**
 * `ts-reactor worker --metrics-port`: the worker serves its Prometheus metrics and its health
 * routes over a throwaway redis-server; while Redis is paused a scrape still answers, without
 * the sampled gauges, and /readyz is 503; a bad port is a usage error.
 */
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import { runWorkerCommand } from '../../src/cli/worker.js';
import { greet } from './fixtures/worker-reactors.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const fixture = fileURLToPath(new URL('./fixtures/worker-reactors.ts', import.meta.url));

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => void out.push(l), err: (l: string) => void err.push(l) } };
}

describe('ts-reactor worker --metrics-port', () => {
  test('serves /metrics with the executions it ran, /healthz and /readyz; stops serving with the worker', async () => {
    const prefix = `wm-${Math.random().toString(36).slice(2, 8)}`;
    const c = capture();
    const stop = new AbortController();
    const running = runWorkerCommand(
      ['--redis', server.url, '--module', fixture, '--prefix', prefix, '--metrics-port', '0'],
      c.io,
      { env: {}, signals: [], stop: stop.signal },
    );
    await expect.poll(() => c.out.find((l) => l.includes('metrics on ')), { timeout: 20_000 }).toBeDefined();
    const base = /metrics on (http:\/\/[^/]+)\/metrics/.exec(c.out.find((l) => l.includes('metrics on '))!)![1]!;
    const producer = createRedisRuntime({ url: server.url, prefix, reactors: [greet] });
    try {
      for (const name of ['a', 'b']) {
        const { executionId } = await producer.engine.start(greet, { name });
        expect((await producer.engine.wait(executionId, { timeoutMs: 15_000 })).status).toBe('completed');
      }
      const metrics = await fetch(`${base}/metrics`);
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toMatch(/^ts_reactor_executions_finished_total\{reactor="cli-greet",status="completed"\} 2$/m);
      expect(text).toMatch(/^ts_reactor_step_attempts_total\{reactor="cli-greet",step="greet"\} 2$/m);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({
        ready: true,
        checks: [
          { name: 'redis', ok: true },
          { name: 'subscriptions', ok: true },
          { name: 'worker', ok: true },
        ],
      });
    } finally {
      await producer.close();
      stop.abort();
    }
    expect(await running).toBe(0);
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  test('while Redis is paused, /metrics answers without the sampled gauges and /readyz is 503', async () => {
    const prefix = `wp-${Math.random().toString(36).slice(2, 8)}`;
    const c = capture();
    const stop = new AbortController();
    const running = runWorkerCommand(
      ['--redis', server.url, '--module', fixture, '--prefix', prefix, '--metrics-port', '0'],
      c.io,
      { env: {}, signals: [], stop: stop.signal },
    );
    await expect.poll(() => c.out.find((l) => l.includes('metrics on ')), { timeout: 20_000 }).toBeDefined();
    const base = /metrics on (http:\/\/[^/]+)\/metrics/.exec(c.out.find((l) => l.includes('metrics on '))!)![1]!;
    const admin = new Redis(server.url);
    try {
      const before = await (await fetch(`${base}/metrics`)).text();
      expect(before).toMatch(/^ts_reactor_queue_jobs\{state="waiting"\} 0$/m);
      expect(before).toMatch(/^ts_reactor_queue_oldest_waiting_seconds 0$/m);
      await admin.call('CLIENT', 'PAUSE', '6000', 'ALL');
      const paused = await fetch(`${base}/metrics`);
      expect(paused.status).toBe(200);
      const text = await paused.text();
      expect(text).toMatch(/^# TYPE ts_reactor_queue_jobs gauge$/m);
      expect(text).not.toMatch(/^ts_reactor_queue_jobs\{/m);
      expect(text).toMatch(/^ts_reactor_queue_oldest_waiting_seconds nan$/im);
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
    } finally {
      await admin.call('CLIENT', 'UNPAUSE');
      admin.disconnect();
      stop.abort();
    }
    expect(await running).toBe(0);
  });

  test('a port that is not an integer from 0 to 65535 exits 2', async () => {
    for (const bad of ['-1', 'abc', '70000']) {
      const c = capture();
      const code = await runWorkerCommand(['--redis', server.url, '--module', fixture, '--metrics-port', bad], c.io, {
        env: {},
        signals: [],
      });
      expect(code).toBe(2);
      expect(c.err.join('\n')).toContain('--metrics-port');
    }
  });
});
