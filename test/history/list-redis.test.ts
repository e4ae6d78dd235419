/**
 * `engine.list` and execution tags on Redis + BullMQ, against a throwaway redis-server with a
 * worker in this process: paging by tag through 10,000 retained executions yields each exactly
 * once while executions are started meanwhile and the worker changes their statuses; the index
 * ZSETs (tag, reactor, status) follow the record — a status change moves it between status
 * indexes in the same script — and an expired record's entries are dropped when a listing meets
 * them (docs/decisions/103).
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { reactor, type ListQuery } from '../../src/index.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import { gate, until } from '../background/helpers.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { pageThroughWhileAdding } from './scenario.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const order = reactor('history-redis-order')
  .input({ n: z.number() })
  .step('note', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => n })
  .returns('note');
const held = gate();
const waits = reactor('history-redis-waits')
  .step('hold', { run: () => held.promise.then(() => 'done') })
  .returns('hold');

function runtime(prefix: string, recordTtlMs?: number): RedisRuntime {
  const created = createRedisRuntime({
    url: server.url,
    prefix,
    reactors: [order, waits],
    ...(recordTtlMs === undefined ? {} : { recordTtlMs }),
  });
  closers.push(() => created.close());
  return created;
}

describe('engine.list on Redis', () => {
  test('pages by tag through 10,000 retained executions exactly once while executions are added', async () => {
    const { engine, startWorker } = runtime('hl1');
    startWorker({ concurrency: 16 }); // statuses change under the listing
    const report = await pageThroughWhileAdding({
      engine,
      reactor: order,
      total: 10_000,
      pageSize: 500,
      // Executions started from here on are created after every one of the 10,000.
      afterCreate: (newest) => until(() => Date.now() > newest, 5_000, 'the clock to pass the newest'),
    });
    expect(report.listed).toHaveLength(10_000);
    expect(new Set(report.listed).size).toBe(10_000);
    expect(new Set(report.listed)).toEqual(new Set(report.created));
    expect(report.added).toBeGreaterThan(0);
  }, 120_000);

  test('the status indexes follow status changes; tags and reactor filter; result carries the tags', async () => {
    const prefix = 'hl2';
    const { engine, startWorker } = runtime(prefix);
    const keys = new RedisKeys(prefix);
    const redis = new Redis(server.url);
    closers.push(() => redis.quit());
    const a = await engine.start(waits, {}, { tags: { orderId: '7', kind: 'a' } });
    const b = await engine.start(order, { n: 1 }, { tags: { orderId: '7', kind: 'b' } });
    const ids = async (query: ListQuery) => (await engine.list(query)).executions.map((e) => e.executionId);
    expect(await ids({ status: 'pending' })).toEqual(expect.arrayContaining([a.executionId, b.executionId]));
    expect(await redis.zscore(keys.executionIndexByStatus('pending'), a.executionId)).not.toBeNull();
    expect(await redis.zscore(keys.executionIndexByTag('orderId', '7'), a.executionId)).not.toBeNull();
    startWorker({ concurrency: 4 });
    await expect.poll(() => ids({ status: 'completed' })).toEqual([b.executionId]);
    await expect.poll(() => ids({ status: 'pending' })).toEqual([]);
    // The record left the pending index in the script that changed its status (not when a listing read it).
    expect(await redis.zscore(keys.executionIndexByStatus('pending'), b.executionId)).toBeNull();
    expect(await redis.zscore(keys.executionIndexByStatus('completed'), b.executionId)).not.toBeNull();
    expect(await ids({ tags: { orderId: '7' } })).toEqual(expect.arrayContaining([a.executionId, b.executionId]));
    expect(await ids({ tags: { orderId: '7', kind: 'a' } })).toEqual([a.executionId]);
    expect(await ids({ tags: { orderId: '7' }, reactor: 'history-redis-order' })).toEqual([b.executionId]);
    expect(await ids({ tags: { orderId: '8' } })).toEqual([]);
    held.open();
    await expect.poll(() => ids({ status: 'completed', reactor: 'history-redis-waits' })).toEqual([a.executionId]);
    for (const status of ['pending', 'running', 'parked'])
      expect(await redis.zscore(keys.executionIndexByStatus(status), a.executionId)).toBeNull();
    expect((await engine.result(a.executionId))?.tags).toEqual({ kind: 'a', orderId: '7' });
    // A time range and a cursor on Redis too.
    const newest = (await engine.list({ limit: 1 })).executions[0]!;
    expect(await ids({ from: newest.createdAt + 1 })).toEqual([]);
    const first = await engine.list({ limit: 1 });
    const second = await engine.list({ limit: 1, cursor: first.cursor! });
    expect(second.executions[0]!.executionId).not.toBe(first.executions[0]!.executionId);
    expect(second.cursor).toBeUndefined();
  }, 60_000);

  test('a status change leaves the old status index whichever process made the record: the worker that entered the job, or an operator that never saw it', async () => {
    const prefix = 'hl5';
    const keys = new RedisKeys(prefix);
    const redis = new Redis(server.url);
    closers.push(() => redis.quit());
    const starter = runtime(prefix);
    const started = await starter.engine.start(order, { n: 2 });
    const cancelled = await starter.engine.start(order, { n: 3 });
    // An operator in another process, with no memory of the record, cancels one while it is queued.
    const operator = runtime(prefix);
    await operator.engine.cancel(cancelled.executionId, { reason: 'not needed' });
    expect(await redis.zscore(keys.executionIndexByStatus('pending'), cancelled.executionId)).toBeNull();
    expect(await redis.zscore(keys.executionIndexByStatus('cancelled'), cancelled.executionId)).not.toBeNull();
    // A worker in a third process runs the other one: it leaves pending, then running.
    const worker = runtime(prefix);
    worker.startWorker({ concurrency: 2 });
    await expect.poll(async () => (await worker.engine.result(started.executionId))?.status).toBe('completed');
    for (const status of ['pending', 'running', 'parked'])
      expect(await redis.zscore(keys.executionIndexByStatus(status), started.executionId)).toBeNull();
    expect(await redis.zscore(keys.executionIndexByStatus('completed'), started.executionId)).not.toBeNull();
  }, 60_000);

  test("an expired record's index entries are dropped when a listing meets them", async () => {
    const prefix = 'hl3';
    const { engine } = runtime(prefix, 1_000);
    const keys = new RedisKeys(prefix);
    const redis = new Redis(server.url);
    closers.push(() => redis.quit());
    const q = await engine.start(order, { n: 1 }, { tags: { orderId: 'gone' } });
    expect(await redis.zscore(keys.executionIndexByTag('orderId', 'gone'), q.executionId)).not.toBeNull();
    await until(async () => (await redis.exists(keys.execution(q.executionId))) === 0, 15_000, 'the record to expire');
    // The tag index may outlive the record by a few ms (its TTL was set by the same save); a listing drops what it meets.
    expect((await engine.list({ tags: { orderId: 'gone' } })).executions).toEqual([]);
    expect(await redis.zscore(keys.executionIndexByTag('orderId', 'gone'), q.executionId)).toBeNull();
  }, 30_000);

  test('recordTtlMs: Infinity keeps records (a TTL of 100 years)', async () => {
    const prefix = 'hl4';
    const { engine } = runtime(prefix, Infinity);
    const keys = new RedisKeys(prefix);
    const redis = new Redis(server.url);
    closers.push(() => redis.quit());
    const q = await engine.start(order, { n: 1 }, { tags: { orderId: 'kept' } });
    expect(await redis.pttl(keys.execution(q.executionId))).toBeGreaterThan(99 * 365 * 24 * 3600 * 1000);
    expect(await redis.pttl(keys.executionIndexByTag('orderId', 'kept'))).toBeGreaterThan(99 * 365 * 24 * 3600 * 1000);
  });
});
