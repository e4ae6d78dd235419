/**
 * A job that finds its execution's liveness lock held by another process waits for the release
 * notification (`livenessWaitMs`) instead of deferring itself until the lock's TTL or the park
 * fallback. Real redis-server; the "other process" is a holder with a foreign owner id.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { livenessKey } from '../../src/engine/model/keys.js';
import { reactor } from '../../src/index.js';
import { createRedisBackend, RedisKeys } from '../../src/storage/redis/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

let server: RedisServerHandle;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await server?.dispose();
});

const greet = reactor('liveness-greet')
  .step('hello', { run: () => 'hi' })
  .returns('hello');

/** Ten minutes: a fallback, TTL or wait this long cannot explain an outcome within the test's timeout. */
const OUT_OF_REACH_MS = 600_000;

function runtime(
  prefix: string,
  background: { readonly livenessWaitMs: number; readonly parkFallbackMs: number; readonly livenessTtlMs: number },
): RedisRuntime & { readonly prefix: string } {
  const r = createRedisRuntime({ url: server.url, prefix, reactors: [greet], background });
  closers.push(() => r.close());
  return { ...r, prefix, startWorker: r.startWorker, close: r.close };
}

/**
 * Starts an execution whose liveness lock another process holds and releases it once the worker met
 * the held lock: `waiting` (it listens on the lock's channel) or `deferred` (its job sits delayed).
 * Reports the status `waitMs` after the release at the latest.
 */
async function heldThenReleased(
  r: RedisRuntime & { readonly prefix: string },
  releaseWhen: 'waiting' | 'deferred',
  waitMs: number,
): Promise<{ readonly status: string | undefined }> {
  const backend = createRedisBackend({ url: server.url, prefix: r.prefix });
  closers.push(() => backend.close());
  const coordinator = backend.coordinator;
  const started = await r.engine.start(greet, {});
  const key = livenessKey(started.executionId);
  const other = { owner: 'another-worker:job:1', executionId: started.executionId };
  expect((await coordinator.lockAcquire({ key, holder: other, ttlMs: OUT_OF_REACH_MS })).acquired).toBe(true);
  const worker = r.startWorker({ concurrency: 1 });
  closers.push(() => worker.stop());
  // Released only once the worker met the held lease: a worker slow to start under load must not
  // find the lease already free.
  const observer = new Redis(server.url);
  closers.push(() => observer.quit());
  const channel = new RedisKeys(r.prefix).lockChannel(key);
  const met = async (): Promise<boolean> => {
    if (releaseWhen === 'deferred') return (await r.queueInspector.inspectQueue()).delayed.length > 0;
    const [, listeners] = (await observer.pubsub('NUMSUB', channel)) as [string, number];
    return Number(listeners) > 0;
  };
  const deadline = Date.now() + 120_000;
  while (!(await met())) {
    if (Date.now() > deadline) throw new Error(`the worker never met the held lease (${releaseWhen})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await coordinator.lockRelease(key, other.owner);
  const done = await r.engine.wait(started.executionId, { timeoutMs: waitMs, pollMs: 10 });
  return { status: done?.status };
}

describe('liveness wait: a job behind another process of the same execution', () => {
  test('proceeds on the release notification, well before the lock TTL or the park fallback', async () => {
    // The wait, the lock's TTL and the park fallback are all ten minutes: only the release
    // notification can let the job go on within the two minutes allowed.
    const r = runtime('lw-on', {
      livenessWaitMs: OUT_OF_REACH_MS,
      parkFallbackMs: OUT_OF_REACH_MS,
      livenessTtlMs: OUT_OF_REACH_MS,
    });
    const outcome = await heldThenReleased(r, 'waiting', 120_000);
    expect(outcome.status).toBe('completed');
  }, 300_000);

  test('with livenessWaitMs 0 the job defers itself (the previous behaviour), so it is still pending 2 s after the release', async () => {
    const r = runtime('lw-off', { livenessWaitMs: 0, parkFallbackMs: 20_000, livenessTtlMs: 30_000 });
    const outcome = await heldThenReleased(r, 'deferred', 2_000).catch(() => undefined);
    expect(outcome?.status).not.toBe('completed');
  }, 180_000);
});
