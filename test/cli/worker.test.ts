import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { runWorkerCommand } from '../../src/cli/worker.js';
import { main } from '../../src/cli/main.js';
import { freePort, startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { startInfoHoldingProxy } from '../support/info-holding-proxy.js';
import { greet, reactors, slow } from './fixtures/worker-reactors.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

interface Spawned {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
}

/** `node --import tsx src/cli/main.ts worker <args>` from the repository root. */
function spawnWorker(args: readonly string[], env: Record<string, string | undefined> = {}): Spawned {
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

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

describe('ts-reactor worker (a process over a throwaway Redis)', () => {
  let redis: RedisServerHandle;
  let runtime: RedisRuntime;
  let worker: Spawned;
  const prefix = 'cli-worker-test';

  beforeAll(async () => {
    redis = await startRedisServer();
    runtime = createRedisRuntime({ url: redis.url, prefix, reactors });
    worker = spawnWorker([
      '--redis',
      redis.url,
      '--module',
      fixture('worker-reactors.ts'),
      '--prefix',
      prefix,
      '--concurrency',
      '4',
    ]);
    await until(
      'the ready line',
      () => worker.stdout().includes('ts-reactor worker: ready') || worker.child.exitCode !== null,
    );
    expect(worker.stdout(), worker.stderr()).toContain('ts-reactor worker: ready');
  });

  afterAll(async () => {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await runtime?.close();
    await redis?.dispose();
  });

  test('prints a ready line naming the reactors it found', () => {
    expect(worker.stdout()).toMatch(
      new RegExp(
        `ready \\(pid ${worker.child.pid}, concurrency 4, prefix ${prefix}\\) on ${redis.url}; reactors: cli-greet, cli-slow`,
      ),
    );
  });

  test('processes an execution enqueued with engine.start', async () => {
    const queued = await runtime.engine.start(greet, { name: 'ada' });
    expect(queued.status).toBe('queued');
    const done = await runtime.engine.wait(queued.executionId, { timeoutMs: 10_000 });
    expect(done?.status).toBe('completed');
    expect(done?.status === 'completed' ? done.value : undefined).toEqual({
      greeting: 'hello ada',
      pid: worker.child.pid,
    });
  });

  test('SIGTERM lets the in-flight execution finish, then exits 0', async () => {
    const queued = await runtime.engine.start(slow, { ms: 700 });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const current = await runtime.engine.result(queued.executionId);
      if (current?.trace.some((e) => e.type === 'step.started')) break;
      if (Date.now() > deadline) throw new Error('the slow step never started');
      await new Promise((r) => setTimeout(r, 10));
    }
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.stdout()).toContain('SIGTERM: taking no more jobs; waiting for in-flight jobs to finish');
    expect(worker.stdout()).toContain('ts-reactor worker: stopped');
    const done = await runtime.engine.result(queued.executionId);
    expect(done?.status).toBe('completed');
    expect(done?.status === 'completed' ? done.value : undefined).toEqual({ slept: 700, pid: worker.child.pid });
  });

  test('REDIS_URL is the default for --redis; a stop signal stops it like SIGTERM, even before BullMQ has finished connecting', async () => {
    // Through a proxy that holds back BullMQ's Redis version checks: the stop comes while they are unanswered.
    const proxy = await startInfoHoldingProxy(redis.port);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const c = capture();
      const stop = new AbortController();
      const running = runWorkerCommand(['--module', fixture('worker-reactors.ts'), '--prefix', `${prefix}-env`], c.io, {
        env: { REDIS_URL: proxy.url },
        signals: [],
        stop: stop.signal,
      });
      await until('the ready line', () => c.out.some((l) => l.includes('ready')));
      expect(c.out[0]).toContain(`on ${proxy.url}`);
      await proxy.untilHeld(3); // the queue's connection, the worker's, the worker's blocking one
      stop.abort();
      await Promise.race([proxy.heldClosed(), new Promise((r) => setTimeout(r, 200))]);
      proxy.release();
      expect(await running).toBe(0);
      expect(c.out.at(-1)).toBe('ts-reactor worker: stopped');
      await until('every connection closed', () => proxy.open() === 0);
      await new Promise((r) => setTimeout(r, 50)); // a rejection of a cut INFO surfaces within a few ticks
      expect(unhandled.map(String)).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await proxy.close();
    }
  });

  test('--log-level info writes the engine events as pino-shaped JSON lines on stdout', async () => {
    const c = capture();
    const stop = new AbortController();
    const logged = `${prefix}-log`;
    const enqueuer = createRedisRuntime({ url: redis.url, prefix: logged, reactors });
    try {
      const running = runWorkerCommand(
        ['--redis', redis.url, '--module', fixture('worker-reactors.ts'), '--prefix', logged, '--log-level', 'info'],
        c.io,
        { env: {}, signals: [], stop: stop.signal },
      );
      await until('the ready line', () => c.out.some((l) => l.includes('ready')));
      const queued = await enqueuer.engine.start(greet, { name: 'lin' });
      expect((await enqueuer.engine.wait(queued.executionId, { timeoutMs: 10_000 }))?.status).toBe('completed');
      await until('the completed line', () => c.out.some((l) => l.includes('"run.completed"')));
      stop.abort();
      expect(await running).toBe(0);
      const entries = c.out.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(entries).toContainEqual(
        expect.objectContaining({
          level: 30,
          time: expect.any(Number),
          event: 'run.completed',
          executionId: queued.executionId,
          reactor: 'cli-greet',
          msg: expect.any(String),
        }),
      );
      expect(entries.some((e) => e['event'] === 'step.started')).toBe(false); // debug, below info
    } finally {
      await enqueuer.close();
    }
  });
});

describe('ts-reactor worker: clear errors, exit 2', () => {
  test('a URL that is not a Redis URL (spawned)', async () => {
    const w = spawnWorker(['--redis', 'http://localhost:1234', '--module', fixture('worker-reactors.ts')]);
    expect(await w.exited).toBe(2);
    expect(w.stderr()).toContain(
      'ts-reactor worker: --redis: "http://localhost:1234" is not a URL of a backend (scheme http:)',
    );
    expect(w.stdout()).toBe('');
  });

  test('no --redis and no REDIS_URL', async () => {
    const c = capture();
    expect(await runWorkerCommand(['--module', fixture('worker-reactors.ts')], c.io, { env: {} })).toBe(2);
    expect(c.err.join('\n')).toContain('missing --redis <url> (or set REDIS_URL)');
  });

  test('garbage for --redis', async () => {
    const c = capture();
    expect(
      await runWorkerCommand(['--redis', 'not a url', '--module', fixture('worker-reactors.ts')], c.io, { env: {} }),
    ).toBe(2);
    expect(c.err.join('\n')).toContain('"not a url" is not a URL');
  });

  test('an unreachable Redis (nothing listens on the port)', async () => {
    const port = await freePort();
    const c = capture();
    const began = Date.now();
    expect(
      await runWorkerCommand(
        ['--redis', `redis://127.0.0.1:${port}`, '--module', fixture('worker-reactors.ts')],
        c.io,
        { env: {}, pingTimeoutMs: 1_000 },
      ),
    ).toBe(2);
    expect(Date.now() - began).toBeLessThan(3_000);
    expect(c.err.join('\n')).toMatch(new RegExp(`cannot reach Redis at redis://127.0.0.1:${port}: .*ECONNREFUSED`));
  });

  test('the password of a URL is never printed', async () => {
    const port = await freePort();
    const c = capture();
    expect(
      await runWorkerCommand(
        ['--redis', `redis://user:s3cret@127.0.0.1:${port}`, '--module', fixture('worker-reactors.ts')],
        c.io,
        { env: {}, pingTimeoutMs: 1_000 },
      ),
    ).toBe(2);
    expect(c.err.join('\n')).toContain(`redis://user:***@127.0.0.1:${port}`);
    expect(c.err.join('\n')).not.toContain('s3cret');
  });

  test('a module that exports no reactors, a missing module, two reactors with one name', async () => {
    const url = 'redis://127.0.0.1:1'; // never reached: the module is checked first
    let c = capture();
    expect(await runWorkerCommand(['--redis', url, '--module', fixture('no-reactors.ts')], c.io, { env: {} })).toBe(2);
    expect(c.err.join('\n')).toContain('no-reactors.ts exports no reactor definitions');
    c = capture();
    expect(await runWorkerCommand(['--redis', url, '--module', fixture('missing.ts')], c.io, { env: {} })).toBe(2);
    expect(c.err.join('\n')).toContain('--module: no such file:');
    c = capture();
    expect(
      await runWorkerCommand(['--redis', url, '--module', fixture('duplicate-reactors.ts')], c.io, { env: {} }),
    ).toBe(2);
    expect(c.err.join('\n')).toContain('two different reactors named "cli-dup"');
  });

  test('bad options: no --module, a bad --concurrency, an unknown option', async () => {
    const url = 'redis://127.0.0.1:1';
    for (const [args, message] of [
      [['--redis', url], 'missing --module <path>'],
      [
        ['--redis', url, '--module', fixture('worker-reactors.ts'), '--concurrency', 'lots'],
        '--concurrency must be an integer ≥ 1; got "lots"',
      ],
      [['--redis', url, '--module', fixture('worker-reactors.ts'), '--frobnicate'], "Unknown option '--frobnicate'"],
    ] as const) {
      const c = capture();
      expect(await runWorkerCommand(args, c.io, { env: {} })).toBe(2);
      expect(c.err.join('\n')).toContain(message);
      expect(c.err.join('\n')).toContain('Usage: ts-reactor worker');
    }
  });

  test('an unknown --log-level is one line on stderr', async () => {
    const c = capture();
    expect(
      await runWorkerCommand(
        ['--redis', 'redis://127.0.0.1:1', '--module', fixture('worker-reactors.ts'), '--log-level', 'verbose'],
        c.io,
        { env: {} },
      ),
    ).toBe(2);
    expect(c.err).toEqual(['ts-reactor worker: --log-level must be one of debug, info, warn, error; got "verbose"']);
    expect(c.out).toEqual([]);
  });

  test('worker --help and the main help mention the worker', async () => {
    let c = capture();
    expect(await main(['worker', '--help'], c.io)).toBe(0);
    expect(c.out.join('\n')).toContain('--concurrency <n>');
    c = capture();
    expect(await main(['--help'], c.io)).toBe(0);
    expect(c.out.join('\n')).toContain('worker --module <path>');
    expect(c.out.join('\n')).toContain('demo --background');
  });
});
