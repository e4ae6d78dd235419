/**
 * `ts-reactor worker --metrics-port`: the worker serves its Prometheus metrics and its health
 * routes over a throwaway redis-server; a bad port is a usage error.
 */
import { fileURLToPath } from 'node:url';
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
