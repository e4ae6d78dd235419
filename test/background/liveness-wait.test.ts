/**
 * A job that finds its execution's liveness lock held by another process waits for the release
 * notification (`livenessWaitMs`) instead of deferring itself until the lock's TTL or the park
 * fallback. Real redis-server; the "other process" is a holder with a foreign owner id.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { livenessKey } from '../../src/engine/model/keys.js';
import { reactor } from '../../src/index.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
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

function runtime(prefix: string, livenessWaitMs: number): RedisRuntime & { readonly prefix: string } {
  const r = createRedisRuntime({
    url: server.url,
    prefix,
    reactors: [greet],
    background: { parkFallbackMs: 20_000, livenessTtlMs: 30_000, livenessWaitMs },
  });
  closers.push(() => r.close());
  return { ...r, prefix, startWorker: r.startWorker, close: r.close };
}

/** Starts an execution whose liveness lock another process holds, releases it after `holdMs`, and reports when it completed. */
async function heldThenReleased(
  r: RedisRuntime & { readonly prefix: string },
  holdMs: number,
  waitMs: number,
  deferredFirst = false,
): Promise<{ readonly status: string | undefined; readonly afterReleaseMs: number }> {
  const backend = createRedisBackend({ url: server.url, prefix: r.prefix });
  closers.push(() => backend.close());
  const coordinator = backend.coordinator;
  const started = await r.engine.start(greet, {});
  const key = livenessKey(started.executionId);
  const other = { owner: 'another-worker:job:1', executionId: started.executionId };
  expect((await coordinator.lockAcquire({ key, holder: other, ttlMs: 30_000 })).acquired).toBe(true);
  const worker = r.startWorker({ concurrency: 1 });
  closers.push(() => worker.stop());
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  if (deferredFirst) {
    // Released only once the worker met the held lease and deferred its job (it sits delayed):
    // a worker slow to start under load must not find the lease already free.
    const deadline = Date.now() + 60_000;
    while ((await r.queueInspector.inspectQueue()).delayed.length === 0) {
      if (Date.now() > deadline) throw new Error('the worker never deferred the job');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const released = Date.now();
  await coordinator.lockRelease(key, other.owner);
  const done = await r.engine.wait(started.executionId, { timeoutMs: waitMs, pollMs: 10 });
  return { status: done?.status, afterReleaseMs: Date.now() - released };
}

describe('liveness wait: a job behind another process of the same execution', () => {
  test('proceeds on the release notification, well before the lock TTL or the park fallback', async () => {
    const outcome = await heldThenReleased(runtime('lw-on', 5_000), 300, 10_000);
    expect(outcome.status).toBe('completed');
    expect(outcome.afterReleaseMs).toBeLessThan(5_000); // without the wait it is deferred for 20 s (the park fallback)
  });

  test('with livenessWaitMs 0 the job defers itself (the previous behaviour), so it is still pending 2 s after the release', async () => {
    const outcome = await heldThenReleased(runtime('lw-off', 0), 300, 2_000, true).catch(() => undefined);
    expect(outcome?.status).not.toBe('completed');
  }, 90_000);
});
