/**
 * The Prometheus export and the operations server: `/metrics` in Prometheus text format (parsed
 * here) with the documented families after a few runs, `/healthz` 200, and `/readyz` 200 while
 * Redis answers and 503 while a real redis-server is paused (CLIENT PAUSE).
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, test } from 'vitest';
import { createEngine, MemoryStore, reactor } from '../../src/index.js';
import { METRICS, prometheusMetrics, redisReadiness, serveOperations } from '../../src/metrics/index.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

/** `name{labels} value` lines of a Prometheus text body, comments left out. */
function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]),
      );
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

describe('operations server', () => {
  test('/metrics serves the engine metrics in Prometheus text format, /healthz answers 200', async () => {
    const metrics = prometheusMetrics({ gauges: { queueJobs: async () => ({ waiting: 2, delayed: 1 }) } });
    const engine = createEngine({ store: new MemoryStore(), middleware: [metrics.middleware] });
    let calls = 0;
    const r = reactor('ops-metrics')
      .step('a', {
        retry: { maxAttempts: 2, baseDelay: '1ms' },
        run: () => {
          if (++calls === 1) throw new Error('once');
          return 1;
        },
      })
      .build();
    for (let i = 0; i < 3; i++) await engine.run(r, {});
    const ops = await serveOperations({ port: 0, host: '127.0.0.1', metrics });
    closers.push(() => ops.close());

    const response = await fetch(`${ops.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const body = await response.text();
    const all = samples(body);
    const value = (name: string, labels: Record<string, string> = {}) =>
      all
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0);
    expect(value(`${METRICS.executionsStarted.name}_total`, { reactor: 'ops-metrics' })).toBe(3);
    expect(value(`${METRICS.executionsFinished.name}_total`, { reactor: 'ops-metrics', status: 'completed' })).toBe(3);
    expect(value(`${METRICS.stepAttempts.name}_total`, { step: 'a' })).toBe(4);
    expect(value(`${METRICS.stepDuration.name}_count`, { outcome: 'retrying' })).toBe(1);
    expect(value(`${METRICS.stepDuration.name}_count`, { outcome: 'succeeded' })).toBe(3);
    expect(value(METRICS.queueJobs.name, { state: 'waiting' })).toBe(2);
    for (const spec of Object.values(METRICS).filter((s) => s.kind !== 'gauge' || s.name === METRICS.queueJobs.name))
      expect(body).toContain(`# HELP ${spec.kind === 'counter' ? `${spec.name}_total` : spec.name} `);

    const health = await fetch(`${ops.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${ops.url}/nothing`)).status).toBe(404);
  });

  test('/readyz is 200 while Redis answers and 503 while it is paused', async () => {
    const redis = new Redis(server.url);
    const admin = new Redis(server.url);
    closers.push(
      () => redis.quit(),
      () => admin.quit(),
    );
    let running = true;
    const ops = await serveOperations({
      port: 0,
      host: '127.0.0.1',
      readiness: redisReadiness({ redis, timeoutMs: 300, workerRunning: () => running }),
    });
    closers.push(() => ops.close());
    const ready = await fetch(`${ops.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ready: true,
      checks: [
        { name: 'redis', ok: true },
        { name: 'worker', ok: true },
      ],
    });

    await admin.call('CLIENT', 'PAUSE', '2000', 'ALL');
    const paused = await fetch(`${ops.url}/readyz`);
    expect(paused.status).toBe(503);
    expect(await paused.json()).toMatchObject({
      ready: false,
      checks: [{ name: 'redis', ok: false, detail: 'no answer to PING within 300 ms' }, { name: 'worker' }],
    });
    await admin.call('CLIENT', 'UNPAUSE');
    await expect.poll(async () => (await fetch(`${ops.url}/readyz`)).status, { timeout: 10_000 }).toBe(200);

    running = false;
    expect((await fetch(`${ops.url}/readyz`)).status).toBe(503);
  });
});
