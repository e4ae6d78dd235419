/**
 * Start options on Redis + BullMQ with a worker in this process and a throwaway redis-server
 * (docs/decisions/078, 079): a delayed start stays queued (with its start time) until BullMQ's
 * delay runs out, `at` in the past runs at once, a worker of concurrency 1 takes the higher
 * priority first, and `startMany` goes through one `addBulk`: its 1,000 job adds in one ioredis
 * pipeline (one socket write), counted at the client.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { reactor } from '../../src/index.js';
import { toBullmqJobId } from '../../src/queue/job-id.js';
import { gate, until } from './helpers.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const ran: { id: string; at: number }[] = [];
const work = reactor('start-redis')
  .input({ id: z.string() })
  .step('work', { args: ($) => ({ id: $.input('id') }), run: ({ id }) => (ran.push({ id, at: Date.now() }), id) })
  .returns('work');
const blocker = gate();
const block = reactor('start-redis-block')
  .step('hold', { run: () => blocker.promise })
  .build();

let flakyAttempts = 0;
const flaky = reactor('start-redis-flaky')
  .step('try', {
    retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: '100ms' },
    run: () => {
      flakyAttempts += 1;
      if (flakyAttempts === 1) throw new Error('transient');
      return 'ok';
    },
  })
  .returns('try');

function runtime(prefix: string) {
  const created = createRedisRuntime({ url: server.url, prefix, reactors: [work, block, flaky] });
  closers.push(() => created.close());
  return created;
}

describe('start options on Redis', () => {
  test('a delayed start is queued with its start time until BullMQ runs it; at in the past runs at once', async () => {
    const { engine, startWorker } = runtime('so1');
    startWorker({ concurrency: 2 });
    const before = Date.now();
    const delayed = await engine.start(work, { id: 'later' }, { delay: 1_500 });
    const past = await engine.start(work, { id: 'past' }, { at: new Date(before - 60_000) });
    expect(delayed.status === 'queued' && delayed.startAt).toBeGreaterThanOrEqual(before + 1_500);
    expect(await engine.wait(past.executionId, { timeoutMs: 10_000, pollMs: 20 })).toMatchObject({
      status: 'completed',
    });
    const queued = await engine.result(delayed.executionId);
    expect(queued).toMatchObject({ status: 'queued', startAt: delayed.status === 'queued' ? delayed.startAt : 0 });
    const done = await engine.wait(delayed.executionId, { timeoutMs: 10_000, pollMs: 20 });
    expect(done.status).toBe('completed');
    expect(ran.find((r) => r.id === 'later')!.at).toBeGreaterThanOrEqual(before + 1_500);
  });

  test('a worker of concurrency 1 takes the higher priority first (lower number)', async () => {
    const { engine, startWorker } = runtime('so2');
    startWorker({ concurrency: 1 });
    const held = await engine.start(block, {});
    await until(async () => (await engine.result(held.executionId))?.status === 'running', 5_000, 'the blocker');
    const low = await engine.start(work, { id: 'low' }, { priority: 10 });
    const high = await engine.start(work, { id: 'high' }, { priority: 1 });
    expect((await engine.store.get(high.executionId))?.background?.priority).toBe(1);
    blocker.open();
    await engine.wait(low.executionId, { timeoutMs: 10_000, pollMs: 20 });
    const order = ran.filter((r) => r.id === 'low' || r.id === 'high').map((r) => r.id);
    expect(order).toEqual(['high', 'low']);
  });

  test("a retry's job carries the execution's priority to BullMQ", async () => {
    const { engine, startWorker } = runtime('so4');
    startWorker({ concurrency: 1 });
    const queued = await engine.start(flaky, {}, { priority: 5 });
    expect((await engine.wait(queued.executionId, { timeoutMs: 10_000, pollMs: 20 })).status).toBe('completed');
    expect(flakyAttempts).toBe(2);
    const queue = new Queue('ts-reactor', { connection: { url: server.url }, prefix: 'so4' });
    closers.push(() => queue.close());
    for (const n of [1, 2]) {
      const job = await queue.getJob(toBullmqJobId(`${queued.executionId}:${n}`));
      expect(job?.opts.priority, `job ${n}`).toBe(5);
    }
  });

  test('startMany: one result per entry in order, an invalid input isolated, all valid ones run', async () => {
    const { engine, startWorker } = runtime('so3');
    startWorker({ concurrency: 4 });
    const results = await engine.startMany([
      { reactor: work, input: { id: 'm1' } },
      { reactor: work, input: { id: 7 as unknown as string } },
      { reactor: work, input: { id: 'm2' }, options: { priority: 2 } },
    ]);
    expect(results.map((r) => r.status)).toEqual(['queued', 'failed', 'queued']);
    expect(await engine.store.get(results[1].executionId)).toBeUndefined();
    for (const r of [results[0], results[2]])
      expect((await engine.wait(r.executionId, { timeoutMs: 10_000, pollMs: 20 })).status).toBe('completed');
  });

  test('startMany of 1,000 inputs: every job add goes out in one pipeline (one round trip for the enqueue)', async () => {
    const pipelines = new Map<object, string[]>();
    let single = 0;
    let counting = false;
    // Wrapped before the runtime connects: its connections keep the method they were made with.
    const original = Redis.prototype.sendCommand;
    Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<Redis['sendCommand']>) {
      const stream = args[1] as { isPipeline?: boolean } | undefined;
      if (counting && stream?.isPipeline) pipelines.set(stream, [...(pipelines.get(stream) ?? []), args[0].name]);
      // Only this runtime's commands: workers left by earlier tests keep polling on their own prefixes.
      else if (counting && args[0].args.some((a) => String(a).includes('so5'))) single += 1;
      return original.apply(this, args);
    };
    let results: Awaited<ReturnType<RedisRuntime['engine']['startMany']>>;
    try {
      const { engine } = runtime('so5');
      const entries = (from: number, count: number) =>
        Array.from({ length: count }, (_, i) => ({ reactor: work, input: { id: `bulk-${from + i}` } }));
      await engine.startMany(entries(0, 2)); // the connections are up and BullMQ's scripts are loaded
      counting = true;
      results = await engine.startMany(entries(2, 1_000));
    } finally {
      counting = false;
      Redis.prototype.sendCommand = original;
    }
    expect(results.filter((r) => r.status === 'queued')).toHaveLength(1_000);
    expect([...pipelines.values()].map((commands) => commands.length)).toEqual([1_000]);
    expect(single).toBe(1_000); // one record write each, sent together (not awaited one by one)
    const queue = new Queue('ts-reactor', { connection: { url: server.url }, prefix: 'so5' });
    closers.push(() => queue.close());
    expect(await queue.getJobCountByTypes('waiting', 'prioritized')).toBe(1_002);
  });
});
