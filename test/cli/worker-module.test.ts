/**
 * The worker module contract (`defineWorker` or named exports), how `--module` is loaded (tsx
 * for TypeScript, a hint when it is missing), and where the worker's prefix comes from (flag,
 * module, TS_REACTOR_PREFIX) with the warning for a prefix under which no key exists.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { defineWorker } from '../../src/bullmq.js';
import { runWorkerCommand } from '../../src/cli/worker.js';
import { importModule, ModuleLoadError } from '../../src/cli/worker-load.js';
import { readWorkerModule, WorkerModuleError } from '../../src/cli/worker-module.js';
import { prefixHasKeys } from '../../src/cli/worker-prefix.js';
import { greet } from './fixtures/worker-reactors.js';
import { lines } from './fixtures/worker-named-exports.js';
import { seen } from './fixtures/worker-context.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => void out.push(l), err: (l: string) => void err.push(l) } };
}

/** Runs the worker until its ready line (or its exit), then stops it; resolves to its exit code and lines. */
async function runUntilReady(args: readonly string[], env: Record<string, string> = {}) {
  const c = capture();
  const stop = new AbortController();
  const running = runWorkerCommand(['--redis', server.url, ...args], c.io, { env, signals: [], stop: stop.signal });
  const exited = await Promise.race([
    running,
    (async () => {
      while (!c.out.some((l) => l.includes('ready'))) await new Promise((r) => setTimeout(r, 20));
      return undefined;
    })(),
  ]);
  stop.abort();
  return { code: exited ?? (await running), ...c };
}

describe('the worker module contract', () => {
  test('defineWorker marks the module; its fields win over named exports of the same name', () => {
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    const worker = defineWorker({ reactors: [greet], prefix: 'from-default', logger });
    expect(readWorkerModule({ default: worker, prefix: 'from-named', rateLimits: { a: [] } })).toEqual({
      reactors: [greet],
      prefix: 'from-default',
      logger,
      rateLimits: { a: [] },
    });
  });

  test.each([
    [{ rateLimits: { api: { limit: 1, per: '1s' } } }, 'rateLimits must be an object of arrays'],
    [{ middleware: {} }, 'middleware must be an array'],
    [{ logger: { info() {} } }, 'logger must have debug, info, warn and error methods'],
    [{ prefix: 'has space' }, 'prefix must be a non-empty string'],
    [{ prefix: 42 }, 'prefix must be a non-empty string'],
    [{ options: 'fast' }, 'options must be an object'],
    [{ scheduleInputs: { nightly: 'x' } }, 'scheduleInputs must be an object of functions'],
  ])('an export that does not fit is named: %j', (exports, message) => {
    expect(() => readWorkerModule(exports)).toThrow(WorkerModuleError);
    expect(() => readWorkerModule(exports)).toThrow(message);
  });

  test('a module whose rate limit is malformed exits 2 before taking a job', async () => {
    const { code, err } = await runUntilReady(['--module', fixture('worker-bad-limits.ts')]);
    expect(code).toBe(2);
    expect(err.join('\n')).toMatch(
      /^ts-reactor worker: --module: .*worker-bad-limits\.ts: rateLimits\.api: .*needs per/m,
    );
  });

  test('a runtime option out of range exits 2, and the process exits (spawned)', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const args = ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--redis', server.url];
    const run = spawnSync(process.execPath, [...args, '--module', fixture('worker-bad-options.ts')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toContain('ts-reactor worker: --module: outageToleranceMs must be a finite number >= 0; got -1');
  });

  test('named exports configure the worker too: the prefix and the logger', async () => {
    const { code, out } = await runUntilReady(['--module', fixture('worker-named-exports.ts')]);
    expect(code).toBe(0);
    expect(out.find((l) => l.includes('ready'))).toContain('prefix named-exports-app)');
    // The start-up durability check warns through the module's logger (the throwaway server keeps nothing).
    expect(lines.some((l) => l.startsWith('warn '))).toBe(true);
  });
});

describe('middleware as a function of the worker', () => {
  test('it gets the worker prefix, queue and gauge sources (for otelMetrics({ gauges }))', async () => {
    const c = capture();
    const stop = new AbortController();
    const running = runWorkerCommand(['--redis', server.url, '--module', fixture('worker-context.ts')], c.io, {
      env: {},
      signals: [],
      stop: stop.signal,
    });
    try {
      await expect.poll(() => c.out.some((l) => l.includes('ready')), { timeout: 20_000 }).toBe(true);
      const worker = seen.at(-1)!;
      expect(worker).toMatchObject({ prefix: 'context-app', queueName: 'context-jobs' });
      expect(await worker.gauges.queueJobs!()).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
      expect(await worker.gauges.queueOldestWaitingMs!()).toBeUndefined();
      expect(await worker.gauges.executionsByStatus!()).toMatchObject({ parked: 0, sleeping: 0 });
    } finally {
      stop.abort();
    }
    expect(await running).toBe(0);
  });

  test('a middleware function that throws exits 2 naming it', async () => {
    process.env['WORKER_CONTEXT_THROW'] = '1';
    try {
      const { code, err } = await runUntilReady(['--module', fixture('worker-context.ts')]);
      expect(code).toBe(2);
      expect(err.join('\n')).toContain('ts-reactor worker: --module: middleware(worker) threw: no meter provider');
    } finally {
      delete process.env['WORKER_CONTEXT_THROW'];
    }
  });
});

describe('loading --module', () => {
  test('a TypeScript module without tsx: a hint naming npm i -D tsx and node --import tsx', async () => {
    const missing = Object.assign(new Error("Cannot find package 'tsx'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const loading = importModule(fixture('worker-app.ts'), {
      loadsTypeScript: false,
      loadTsx: () => Promise.reject(missing),
    });
    await expect(loading).rejects.toThrow(ModuleLoadError);
    await expect(loading).rejects.toThrow(/is TypeScript and tsx is not installed: .*npm i -D tsx.*node --import tsx/);
  });

  test('in a process without a TypeScript loader (as the compiled CLI runs), tsx is registered and the .ts app loads (spawned)', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const run = spawnSync(process.execPath, [fixture('load-with-tsx.mjs'), fixture('worker-app.ts')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim())).toEqual(expect.arrayContaining(['default', 'limited', 'rateLimits']));
  });

  test('tsx is registered once, only for a TypeScript module in a process that cannot load TypeScript', async () => {
    let registered = 0;
    const loadTsx = () => Promise.resolve({ register: () => void registered++ });
    await importModule(fixture('worker-reactors.ts'), { loadsTypeScript: true, loadTsx });
    expect(registered).toBe(0);
    await importModule(fixture('worker-reactors.ts'), { loadsTypeScript: false, loadTsx });
    await importModule(fixture('worker-app.ts'), { loadsTypeScript: false, loadTsx });
    expect(registered).toBe(1);
  });

  test('a missing file is a load error naming it', async () => {
    await expect(importModule('/nowhere/app.ts')).rejects.toThrow('--module: no such file: /nowhere/app.ts');
  });
});

describe('the prefix: --prefix, else the module, else TS_REACTOR_PREFIX', () => {
  test('TS_REACTOR_PREFIX when neither the flag nor the module sets one; a prefix without keys is a warning', async () => {
    const { code, out, err } = await runUntilReady(['--module', fixture('worker-reactors.ts')], {
      TS_REACTOR_PREFIX: 'from-env',
    });
    expect(code).toBe(0);
    expect(out.find((l) => l.includes('ready'))).toContain('prefix from-env)');
    expect(err).toContain(
      'ts-reactor worker: warning: no key exists under the prefix "from-env" yet; does the app use another prefix? (--prefix, the module\'s prefix, TS_REACTOR_PREFIX)',
    );
  });

  test('--prefix wins over the module and the environment; no warning once keys exist', async () => {
    const redis = new Redis(server.url);
    try {
      await redis.set('flagged:something', '1');
      const { code, out, err } = await runUntilReady(
        ['--module', fixture('worker-named-exports.ts'), '--prefix', 'flagged'],
        { TS_REACTOR_PREFIX: 'from-env' },
      );
      expect(code).toBe(0);
      expect(out.find((l) => l.includes('ready'))).toContain('prefix flagged)');
      expect(err.filter((l) => l.includes('no key exists'))).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  test('a TS_REACTOR_PREFIX with whitespace exits 2', async () => {
    const { code, err } = await runUntilReady(['--module', fixture('worker-reactors.ts')], {
      TS_REACTOR_PREFIX: 'a b',
    });
    expect(code).toBe(2);
    expect(err.join('\n')).toContain('TS_REACTOR_PREFIX must be without braces or whitespace');
  });

  test('prefixHasKeys matches the prefix literally (glob characters escaped)', async () => {
    const redis = new Redis(server.url);
    try {
      await redis.set('lit*ral:k', '1');
      expect(await prefixHasKeys(redis, 'lit*ral')).toBe(true);
      expect(await prefixHasKeys(redis, 'lit')).toBe(false);
      expect(await prefixHasKeys(redis, 'l?t*ral')).toBe(false);
    } finally {
      redis.disconnect();
    }
  });
});
