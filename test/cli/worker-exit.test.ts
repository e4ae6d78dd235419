/**
 * `ts-reactor worker` exits after SIGTERM even when its module holds handles of its own (an
 * ioredis connection, a timer), and awaits the module's `close()` before it says "stopped": real
 * worker processes over a throwaway redis-server.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/worker-holds-handles.ts', import.meta.url));
const LEFT_OPEN = 'ts-reactor worker: exiting although the module left something open';

let redis: RedisServerHandle;

beforeAll(async () => {
  redis = await startRedisServer();
});

afterAll(async () => {
  await redis?.dispose();
});

/** Starts a worker on the fixture, waits for its ready line, sends SIGTERM, and resolves with how it ended. */
async function stopWorker(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--module', fixture, '--prefix', 'worker-exit'],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, REDIS_URL: redis.url, HANDLES_REDIS_URL: redis.url, ...env },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await expect
      .poll(() => stdout.includes('ts-reactor worker: ready') || child.exitCode !== null, { timeout: 30_000 })
      .toBe(true);
    expect(stdout, stderr).toContain('ts-reactor worker: ready');
    child.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 60_000).unref()),
    ]);
    expect(code, `${stdout}\n${stderr}`).not.toBe('hung');
    return { code: code === 'hung' ? null : code, stdout, stderr };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

test('a module that holds its own connection and timer: "stopped", then exit 0 all the same, saying what kept it', async () => {
  const r = await stopWorker({});
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('ts-reactor worker: stopped');
  expect(r.stderr).toContain(`${LEFT_OPEN} (a connection, a timer); export close() from the module to close it`);
}, 120_000);

test('the module\'s close() is awaited before "stopped"; what it closed does not keep the process', async () => {
  const r = await stopWorker({ HANDLES_CLOSE: '1' });
  expect(r.code, r.stderr).toBe(0);
  const closed = r.stdout.indexOf('module: closed');
  expect(closed).toBeGreaterThan(-1);
  expect(closed).toBeLessThan(r.stdout.indexOf('ts-reactor worker: stopped'));
  expect(r.stderr).not.toContain(LEFT_OPEN);
}, 120_000);
