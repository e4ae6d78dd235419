/**
 * Start options in a worker on every backend of the matrix (docs/decisions/078, 079): a delayed
 * start stays queued (with its start time) until its delay runs out, `at` in the past runs at
 * once, a worker of concurrency 1 takes the higher priority first, `startMany` isolates an invalid
 * entry; on Redis, a retry's BullMQ job carries the priority, and `startMany` goes through one
 * `addBulk`: its 1,000 job adds in one ioredis pipeline (one socket write), counted at the client.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, expect, test } from 'vitest';
import { z } from 'zod';
import { reactor, type Engine } from '../../src/index.js';
import { toBullmqJobId } from '../../src/queue/job-id.js';
import { describeOnBackends, testWhere, type MatrixRuntime } from '../support/backend-matrix.js';
import { gate, until } from './helpers.js';

describeOnBackends('start options in a worker', (backend) => {
  const ran: { id: string; at: number }[] = [];
  const work = reactor('start-options')
    .input({ id: z.string() })
    .step('work', { args: ($) => ({ id: $.input('id') }), run: ({ id }) => (ran.push({ id, at: Date.now() }), id) })
    .returns('work');
  const blocker = gate();
  const block = reactor('start-options-block')
    .step('hold', { run: () => blocker.promise })
    .build();

  let flakyAttempts = 0;
  const flaky = reactor('start-options-flaky')
    .step('try', {
      retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: '100ms' },
      run: () => {
        flakyAttempts += 1;
        if (flakyAttempts === 1) throw new Error('transient');
        return 'ok';
      },
    })
    .returns('try');

  const runtime = (): MatrixRuntime => backend.runtime({ reactors: [work, block, flaky] });
  const queues: Queue[] = [];
  afterEach(async () => {
    while (queues.length > 0) await queues.pop()?.close();
  });
  /** The runtime's BullMQ queue, read from Redis. */
  const queueOf = (rt: MatrixRuntime): Queue => {
    const queue = new Queue(`${rt.namespace}-q`, { connection: { url: backend.address().url! }, prefix: rt.namespace });
    queues.push(queue);
    return queue;
  };

  test('a delayed start is queued with its start time until its time; at in the past runs at once', async () => {
    const { engine, startWorker } = runtime();
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
    const { engine, startWorker } = runtime();
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

  // Reads BullMQ's jobs straight from Redis: a Redis-only reader.
  testWhere(backend.name === 'redis')("a retry's job carries the execution's priority to BullMQ", async () => {
    const rt = runtime();
    const { engine, startWorker } = rt;
    startWorker({ concurrency: 1 });
    const queued = await engine.start(flaky, {}, { priority: 5 });
    expect((await engine.wait(queued.executionId, { timeoutMs: 10_000, pollMs: 20 })).status).toBe('completed');
    expect(flakyAttempts).toBe(2);
    const queue = queueOf(rt);
    for (const n of [1, 2]) {
      const job = await queue.getJob(toBullmqJobId(`${queued.executionId}:${n}`));
      expect(job?.opts.priority, `job ${n}`).toBe(5);
    }
  });

  test('startMany: one result per entry in order, an invalid input isolated, all valid ones run', async () => {
    const { engine, startWorker } = runtime();
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

  // Counts ioredis pipelines at the client: Redis's own round trips.
  testWhere(backend.name === 'redis')(
    'startMany of 1,000 inputs: every job add goes out in one pipeline (one round trip for the enqueue)',
    async () => {
      const pipelines = new Map<object, string[]>();
      let single = 0;
      let counting = false;
      let namespace = '\0';
      // Wrapped before the runtime connects: its connections keep the method they were made with.
      const original = Redis.prototype.sendCommand;
      Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<Redis['sendCommand']>) {
        const stream = args[1] as { isPipeline?: boolean } | undefined;
        if (counting && stream?.isPipeline) pipelines.set(stream, [...(pipelines.get(stream) ?? []), args[0].name]);
        // Only this runtime's commands (workers left by earlier tests keep polling on their own
        // prefixes), and not the appends to the executions' event streams (`…:events`), which
        // watchers read and which go out beside the writes, not awaited one by one either.
        else if (
          counting &&
          args[0].args.some((a) => String(a).includes(namespace)) &&
          !args[0].args.some((a) => String(a).endsWith(':events'))
        )
          single += 1;
        return original.apply(this, args);
      };
      let results: Awaited<ReturnType<Engine['startMany']>>;
      let rt: MatrixRuntime | undefined;
      try {
        rt = runtime();
        namespace = rt.namespace;
        const { engine } = rt;
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
      const queue = queueOf(rt);
      expect(await queue.getJobCountByTypes('waiting', 'prioritized')).toBe(1_002);
    },
  );
});
