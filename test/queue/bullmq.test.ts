/**
 * The BullMQ adapter against a throwaway redis-server. Every test uses its own queue name, so
 * jobs of one test never reach another's consumer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MalformedJobError } from '../../src/errors.js';
import type { ExecutionJob, JobConsumer, JobDelivery, JobProcessor, JobQueue } from '../../src/ports/queue.js';
import { createBullmqConsumer, createBullmqQueue, type BullmqConsumerOptions } from '../../src/queue/bullmq.js';
import { decodeJob } from '../../src/queue/payload.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const HOLD_CONSUMER = fileURLToPath(new URL('./fixtures/hold-consumer.ts', import.meta.url));
const job = (executionId: string): ExecutionJob => ({ v: 1, executionId, reactor: 'orders' });
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let server: RedisServerHandle;
let counter = 0;
const closers: (() => Promise<void>)[] = [];
const children = new Set<ChildProcess>();

beforeAll(async () => {
  server = await startRedisServer();
});

afterEach(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
  while (closers.length > 0) await closers.pop()?.();
});

afterAll(async () => {
  await server.dispose();
});

interface Harness {
  readonly name: string;
  readonly queue: JobQueue;
  consumer(options?: Partial<BullmqConsumerOptions>): JobConsumer;
}

/** A queue with its own name; consumers made from it are stopped after the test. */
function harness(): Harness {
  const name = `q${++counter}`;
  const queue = createBullmqQueue({ connection: { url: server.url }, name });
  closers.push(() => queue.close());
  return {
    name,
    queue,
    consumer: (options = {}) => {
      const consumer = createBullmqConsumer({ connection: { url: server.url }, name, ...options });
      closers.push(() => consumer.stop());
      return consumer;
    },
  };
}

interface Call {
  readonly payload: unknown;
  readonly delivery: JobDelivery;
  readonly at: number;
}

function recorder(behaviour: (call: Call) => Promise<void> = async () => undefined): {
  calls: Call[];
  processor: JobProcessor;
} {
  const calls: Call[] = [];
  return {
    calls,
    processor: async (payload, delivery) => {
      const call = { payload, delivery, at: Date.now() };
      calls.push(call);
      await behaviour(call);
    },
  };
}

describe('BullMQ queue and consumer', () => {
  it('delivers an enqueued job with its payload, engine job id and first delivery', async () => {
    const h = harness();
    const { calls, processor } = recorder();
    h.consumer().start(processor, { concurrency: 2 });
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1' });
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(1);
    expect(calls[0]?.payload).toEqual(job('exec-1'));
    expect(decodeJob(calls[0]?.payload)).toEqual(job('exec-1'));
    expect(calls[0]?.delivery).toEqual({ jobId: 'exec-1:1', delivery: 1 });
  });

  it('does not run a delayed job before its delay', async () => {
    const h = harness();
    const { calls, processor } = recorder();
    h.consumer().start(processor, { concurrency: 1 });
    const before = Date.now();
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1', delayMs: 600 });
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(1);
    expect(calls[0]?.at ?? 0).toBeGreaterThanOrEqual(before + 600);
  });

  it('promote runs a delayed job at once; false when not delayed or unknown', async () => {
    const h = harness();
    const { calls, processor } = recorder();
    h.consumer().start(processor, { concurrency: 1 });
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1', delayMs: 60_000 });
    await pause(100);
    expect(calls).toHaveLength(0);
    expect(await h.queue.promote('exec-1:1')).toBe(true);
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(1);
    expect(await h.queue.promote('exec-1:1')).toBe(false);
    expect(await h.queue.promote('never-enqueued:1')).toBe(false);
  });

  it('discard removes a delayed or waiting job so it is never delivered; false for an active, finished or unknown one', async () => {
    const h = harness();
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1', delayMs: 300 }); // watched for an on-time promotion too
    await h.queue.enqueue(job('exec-2'), { jobId: 'exec-2:1' });
    expect(await h.queue.discard!('exec-1:1')).toBe(true);
    expect(await h.queue.discard!('exec-2:1')).toBe(true);
    expect(await h.queue.discard!('exec-2:1')).toBe(false); // gone
    expect(await h.queue.discard!('never-enqueued:1')).toBe(false);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { calls, processor } = recorder(async (call) => {
      if (call.delivery.jobId === 'exec-3:1') await held;
    });
    h.consumer().start(processor, { concurrency: 2 });
    await h.queue.enqueue(job('exec-3'), { jobId: 'exec-3:1' });
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(1);
    expect(await h.queue.discard!('exec-3:1')).toBe(false); // a worker holds it
    release();
    await h.queue.enqueue(job('exec-4'), { jobId: 'exec-4:1' }); // delivered after the discarded ones would have been
    await expect.poll(() => calls.map((c) => c.delivery.jobId), { timeout: 5_000 }).toEqual(['exec-3:1', 'exec-4:1']);
    await pause(500); // past exec-1's delay and its on-time promotion
    expect(calls.map((c) => c.delivery.jobId)).toEqual(['exec-3:1', 'exec-4:1']);
  });

  it('adds a job id once', async () => {
    const h = harness();
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1' });
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1' });
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1', delayMs: 10 });
    const { calls, processor } = recorder();
    h.consumer().start(processor, { concurrency: 4 });
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(1);
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1' });
    await pause(300);
    expect(calls).toHaveLength(1);
  });

  it('fails a job whose processor reports MalformedJobError, without a retry', async () => {
    const h = harness();
    const failures: { jobId: string; final: boolean }[] = [];
    const { calls, processor } = recorder(async ({ payload }) => {
      decodeJob(payload);
    });
    h.consumer({ onFailed: ({ jobId, final }) => failures.push({ jobId, final }) }).start(processor, {
      concurrency: 1,
    });
    // A producer of another format version wrote this job (raw BullMQ, as an older/newer release would).
    const foreign = new Queue(h.name, { connection: { url: server.url }, prefix: 'rx' });
    closers.push(() => foreign.close());
    await foreign.add(
      'execution',
      { v: 2, executionId: 'exec-1', reactor: 'orders' },
      { jobId: 'foreign-1', attempts: 3, backoff: 10 },
    );
    await expect.poll(() => failures, { timeout: 5_000 }).toEqual([{ jobId: 'foreign-1', final: true }]);
    const failed = await foreign.getJob('foreign-1');
    expect(await failed?.getState()).toBe('failed');
    expect(failed?.failedReason).toMatch(/of another version/);
    await pause(300);
    expect(calls).toHaveLength(1);
  });

  it('refuses to enqueue a malformed job', async () => {
    const h = harness();
    await expect(h.queue.enqueue({ v: 1, executionId: '', reactor: 'r' }, { jobId: 'x:1' })).rejects.toBeInstanceOf(
      MalformedJobError,
    );
  });

  it('delivers again after an infrastructure failure, a bounded number of times, counting deliveries', async () => {
    const h = harness();
    const failures: boolean[] = [];
    const { calls, processor } = recorder(async () => {
      throw new Error('store unreachable');
    });
    h.consumer({ onFailed: ({ final }) => failures.push(final) }).start(processor, { concurrency: 1 });
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1' });
    await expect.poll(() => failures, { timeout: 5_000 }).toEqual([false, false, true]);
    expect(calls.map((c) => c.delivery.delivery)).toEqual([1, 2, 3]);
  });

  it('stop lets an in-flight job finish and completes it', async () => {
    const h = harness();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    const { calls, processor } = recorder(async () => {
      await gate;
      finished = true;
    });
    const consumer = h.consumer();
    consumer.start(processor, { concurrency: 1 });
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1' });
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(1);
    let stopped = false;
    const stopping = consumer.stop().then(() => (stopped = true));
    await pause(200);
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
    // Completed, not left active: another consumer does not get it.
    const inspect = new Queue(h.name, { connection: { url: server.url }, prefix: 'rx' });
    closers.push(() => inspect.close());
    expect(await (await inspect.getJob('exec-1%3A1'))?.getState()).toBe('completed');
  });

  it('redelivers the job of a worker killed with SIGKILL to another worker', async () => {
    const h = harness();
    const timing = { lockDurationMs: 2_000, stalledIntervalMs: 1_000 };
    await h.queue.enqueue(job('exec-1'), { jobId: 'exec-1:1' });

    const child = spawn(
      process.execPath,
      ['--import', 'tsx', HOLD_CONSUMER, JSON.stringify({ url: server.url, name: h.name, ...timing })],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.add(child);
    let output = '';
    let errors = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    await expect
      .poll(() => output.includes('"started"'), { timeout: 25_000 })
      .toBe(true)
      .catch((error: unknown) => {
        throw new Error(`the child never started the job; its stderr: ${errors}`, { cause: error });
      });
    const started = JSON.parse(output.split('\n').find((line) => line.includes('"started"')) ?? '{}') as {
      started?: string;
      delivery?: number;
    };
    expect(started).toMatchObject({ started: 'exec-1:1', delivery: 1 });

    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();

    const { calls, processor } = recorder();
    h.consumer(timing).start(processor, { concurrency: 1 });
    await expect.poll(() => calls.length, { timeout: 12_000, interval: 100 }).toBe(1);
    expect(calls[0]?.delivery.jobId).toBe('exec-1:1');
    expect(calls[0]?.delivery.delivery).toBeGreaterThanOrEqual(2);
    expect(calls[0]?.payload).toEqual(job('exec-1'));
    expect((calls[0]?.at ?? Infinity) - killedAt).toBeLessThan(12_000);
  });

  it('works over a connection passed in, which it leaves open', async () => {
    const redis = new Redis(server.url);
    closers.push(async () => void (await redis.quit()));
    const name = `q${++counter}`;
    const queue = createBullmqQueue({ connection: redis, name });
    const consumer = createBullmqConsumer({ connection: redis, name });
    const { calls, processor } = recorder();
    consumer.start(processor, { concurrency: 1 });
    await queue.enqueue(job('exec-1'), { jobId: 'exec-1:1' });
    await expect.poll(() => calls.length, { timeout: 5_000 }).toBe(1);
    await consumer.stop();
    await queue.close();
    expect(await redis.ping()).toBe('PONG');
  });

  it('validates its options', () => {
    expect(() => createBullmqQueue({ connection: { url: server.url }, name: 'a:b' })).toThrow(RangeError);
    const consumer = createBullmqConsumer({ connection: { url: server.url }, name: `q${++counter}` });
    expect(() => consumer.start(async () => undefined, { concurrency: 0 })).toThrow(RangeError);
    expect(() => createBullmqConsumer({ connection: { url: server.url }, lockDurationMs: 0 })).toThrow(RangeError);
  });
});
