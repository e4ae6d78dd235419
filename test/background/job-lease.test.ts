/**
 * The worker's liveness lease over the Redis runtime's one-script-each-way path
 * (docs/decisions/040): the cancel marker is read with the lease, the terminal record is written
 * before the lease is free (atomically), and a redelivered job of a finished execution runs
 * nothing. Real redis-server and BullMQ worker.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { JOB_FORMAT_VERSION } from '../../src/ports/queue.js';
import { cancelRequestKey, livenessKey } from '../../src/engine/model/keys.js';
import { reactor, type AnyReactorDefinition } from '../../src/index.js';
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

function counted(name: string): { readonly def: ReturnType<typeof build>; readonly runs: () => number } {
  let runs = 0;
  const build = () =>
    reactor(name)
      .step('a', { run: () => ++runs })
      .step('b', { args: ($) => ({ a: $.result('a') }), run: ({ a }) => a + 1 })
      .returns('b');
  return { def: build(), runs: () => runs };
}

function runtime(prefix: string, reactors: readonly AnyReactorDefinition[]): RedisRuntime {
  const r = createRedisRuntime({ url: server.url, prefix, reactors });
  closers.push(() => r.close());
  return r;
}

describe('job lease on Redis (job-enter / job-leave)', () => {
  test('a cancel request set before the job runs is seen with the lease: cancelled, no step body ran', async () => {
    const { def, runs } = counted('jl-cancel');
    const r = runtime('jl1', [def]);
    const backend = createRedisBackend({ url: server.url, prefix: 'jl1' });
    closers.push(() => backend.close());
    const started = await r.engine.start(def, {});
    await backend.coordinator.periodMark({
      key: cancelRequestKey(started.executionId),
      bucket: 'requested',
      ttlMs: 60_000,
    });
    const worker = r.startWorker({ concurrency: 2 });
    closers.push(() => worker.stop());
    const done = await r.engine.wait(started.executionId, { timeoutMs: 20_000, pollMs: 10 });
    expect(done?.status).toBe('cancelled');
    expect(runs()).toBe(0);
    expect(await backend.coordinator.lockState(livenessKey(started.executionId))).toBeUndefined();
  });

  test('the terminal record is in the store when the lease release is published, and a redelivery runs nothing', async () => {
    const { def, runs } = counted('jl-order');
    const r = runtime('jl2', [def]);
    const backend = createRedisBackend({ url: server.url, prefix: 'jl2' });
    closers.push(() => backend.close());
    const listener = new Redis(server.url);
    closers.push(async () => listener.disconnect());
    const started = await r.engine.start(def, {});
    await listener.subscribe(new RedisKeys('jl2').lockChannel(livenessKey(started.executionId)));
    const seenAtRelease = new Promise<string | undefined>((resolve) =>
      listener.once('message', () => void backend.store.get(started.executionId).then((rec) => resolve(rec?.status))),
    );
    const worker = r.startWorker({ concurrency: 2 });
    closers.push(() => worker.stop());
    expect(await seenAtRelease).toBe('completed');
    expect(runs()).toBe(1);
    const record = await backend.store.get(started.executionId);
    expect(record?.trace?.map((e) => e.type)).toContain('run.completed');

    // A duplicate delivery of its job (at-least-once) takes the lease, reads a terminal record, and runs nothing.
    await r.engine.process(
      { v: JOB_FORMAT_VERSION, executionId: started.executionId, reactor: def.name },
      { jobId: `${started.executionId}:1`, delivery: 2 },
    );
    expect(runs()).toBe(1);
    expect((await backend.store.get(started.executionId))?.updatedAt).toBe(record?.updatedAt);
    expect(await backend.coordinator.lockState(livenessKey(started.executionId))).toBeUndefined();
  });
});
