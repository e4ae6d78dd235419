/**
 * A worker stops while Redis is down, or just after it came back: a `ts-reactor worker` process
 * over a throwaway `redis-server` gets SIGTERM while the server is stopped (its BullMQ
 * connections between two reconnection attempts), and another right after a long outage ended
 * (its blocking connection still waiting out a reconnection delay). Each exits 0 with its
 * `stopped` line, on its first signal: the close never waits for a reconnection that was
 * cancelled. The same holds for a worker in this process (`runtime.startWorker().close()`), and
 * for a BullMQ worker closed after Redis was down so long that its fetch loop gave up its blocking
 * read and waits for a job on the command connection (`closeWorker`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import { closeWorker } from '../../src/queue/bullmq-close.js';
import { commandClientOf } from '../../src/queue/bullmq-internals.js';
import { greet } from '../cli/fixtures/worker-reactors.js';
import { CHILD_LINE_TIMEOUT_MS } from '../support/json-child.js';
import { useRedisServer } from '../support/use-redis-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('../cli/fixtures/worker-reactors.ts', import.meta.url));
/** How long a stop may take before it counts as a hang: generous, for a loaded machine. */
const EXIT_BOUND_MS = 90_000;
/** A test's own deadline: the worker's start, one execution, the outage and the stop's bound. */
const TEST_TIMEOUT_MS = CHILD_LINE_TIMEOUT_MS + 2 * EXIT_BOUND_MS + 60_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Spawned {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly exited: Promise<number | null>;
}

function spawnWorker(url: string, prefix: string): Spawned {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--module', fixture, '--redis', url, '--prefix', prefix],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REDIS_URL: undefined } },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, stdout: () => out, exited };
}

async function until(what: string, check: () => boolean, timeoutMs = CHILD_LINE_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** `exited`, or 'still running' once `ms` passed (then the process is killed). */
async function exitWithin(w: Spawned, ms: number): Promise<number | null | 'still running'> {
  const late = sleep(ms).then(() => 'still running' as const);
  const outcome = await Promise.race([w.exited, late]);
  if (outcome === 'still running') w.child.kill('SIGKILL');
  return outcome;
}

/** Starts a worker process and has it run one execution (its connections are then all in use). */
async function workingWorker(url: string, prefix: string): Promise<Spawned> {
  const worker = spawnWorker(url, prefix);
  await until('the ready line', () => worker.stdout().includes('ts-reactor worker: ready'));
  const producer = createRedisRuntime({ url, prefix, reactors: [greet] });
  try {
    const { executionId } = await producer.engine.start(greet, { name: 'a' });
    expect((await producer.engine.wait(executionId, { timeoutMs: 90_000 })).status).toBe('completed');
  } finally {
    await producer.close();
  }
  return worker;
}

describe('a worker stopped during or just after a Redis outage', () => {
  const redis = useRedisServer();

  test(
    'SIGTERM while Redis is down: the worker process exits 0 on the first signal',
    async () => {
      const worker = await workingWorker(redis.url, 'close-down');
      await redis.handle.stop();
      try {
        await sleep(2_500); // its connections fail, and wait between reconnection attempts
        worker.child.kill('SIGTERM');
        // A hang is what is tested; the bound is generous.
        expect(await exitWithin(worker, EXIT_BOUND_MS), worker.stdout()).toBe(0);
        expect(worker.stdout()).toContain('ts-reactor worker: stopped');
      } finally {
        await redis.handle.restart();
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'SIGTERM right after a long outage ended: the worker process exits 0 on the first signal',
    async () => {
      const worker = await workingWorker(redis.url, 'close-after');
      await redis.handle.stop();
      await sleep(12_000); // long enough for BullMQ's reconnection delays to have grown past seconds
      await redis.handle.restart();
      worker.child.kill('SIGTERM');
      expect(await exitWithin(worker, EXIT_BOUND_MS), worker.stdout()).toBe(0);
      expect(worker.stdout()).toContain('ts-reactor worker: stopped');
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'a worker in this process closes while Redis is down',
    async () => {
      const runtime = createRedisRuntime({ url: redis.url, prefix: 'close-inproc', reactors: [greet] });
      const worker = runtime.startWorker({ concurrency: 2 });
      const { executionId } = await runtime.engine.start(greet, { name: 'b' });
      expect((await runtime.engine.wait(executionId, { timeoutMs: 90_000 })).status).toBe('completed');
      await redis.handle.stop();
      try {
        await sleep(2_500);
        const closed = await Promise.race([
          worker.close().then(() => 'closed' as const),
          sleep(EXIT_BOUND_MS).then(() => 'still closing' as const),
        ]);
        expect(closed).toBe('closed');
      } finally {
        await redis.handle.restart();
        await runtime.close();
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'a BullMQ worker closes after its fetch loop gave up its blocking read during the outage',
    async () => {
      // drainDelay 1 s: about 2 s into the outage BullMQ's watchdog gives up the blocking read
      // and the loop waits for the blocking connection to come back; on a close it then asks the
      // command connection for a job, which that connection would hold until Redis is back.
      const worker = new Worker('close-fetch', async () => undefined, {
        connection: { url: redis.url, maxRetriesPerRequest: null, retryStrategy: () => 200 },
        prefix: 'close-fetch',
        drainDelay: 1,
      });
      worker.on('error', () => undefined);
      await worker.waitUntilReady();
      const backend = (worker as unknown as { getBackend(): { reconnectBlocking(): Promise<void> } }).getBackend();
      const reconnectBlocking = backend.reconnectBlocking.bind(backend);
      let gaveUp = false;
      backend.reconnectBlocking = () => {
        gaveUp = true;
        return reconnectBlocking();
      };
      const command = (await commandClientOf(worker)) as Redis;
      await redis.handle.stop();
      try {
        await until('the fetch loop giving up its blocking read', () => gaveUp);
        const closed = await Promise.race([
          closeWorker(worker).then(() => 'closed' as const),
          sleep(EXIT_BOUND_MS).then(() => 'still closing' as const),
        ]);
        expect(closed).toBe('closed');
        expect(command.status).toBe('end');
      } finally {
        await redis.handle.restart();
        await worker.close(true).catch(() => undefined);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
