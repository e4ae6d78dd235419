/**
 * `engine.list` and execution tags in workers on every backend of the matrix: paging by tag
 * through 10,000 retained executions yields each exactly once while executions are started
 * meanwhile and the worker changes their statuses; the status filter follows the record, whichever
 * runtime changed it; tags, reactor, time range and cursor filter; an expired record is never
 * listed (docs/decisions/103). On Redis, the index ZSETs (tag, status) are checked too: a status
 * change moves the record between status indexes in the same script, and a listing drops the
 * entries of an expired record it meets.
 */
import { Redis } from 'ioredis';
import { afterEach, expect, test } from 'vitest';
import { z } from 'zod';
import { reactor, type ListQuery } from '../../src/index.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import { gate, until } from '../background/helpers.js';
import { describeOnBackends, testWhere, type MatrixBackend, type MatrixRuntime } from '../support/backend-matrix.js';
import { pageThroughWhileAdding } from './scenario.js';

const order = reactor('history-order')
  .input({ n: z.number() })
  .step('note', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => n })
  .returns('note');

/** The Redis index ZSETs of a runtime's namespace (a Redis store's own layout); undefined on the other backends. */
interface RedisIndexes {
  status(status: string, id: string): Promise<string | null>;
  tag(name: string, value: string, id: string): Promise<string | null>;
  readonly redis: Redis;
  readonly keys: RedisKeys;
}

function indexesOf(backend: MatrixBackend, runtime: MatrixRuntime, opened: Redis[]): RedisIndexes | undefined {
  if (backend.name !== 'redis') return undefined;
  const redis = new Redis(backend.address().url!);
  opened.push(redis);
  const keys = new RedisKeys(runtime.namespace);
  return {
    redis,
    keys,
    status: (status, id) => redis.zscore(keys.executionIndexByStatus(status), id),
    tag: (name, value, id) => redis.zscore(keys.executionIndexByTag(name, value), id),
  };
}

describeOnBackends('engine.list in workers', (backend) => {
  const held = gate();
  const waits = reactor('history-waits')
    .step('hold', { run: () => held.promise.then(() => 'done') })
    .returns('hold');
  const opened: Redis[] = [];
  afterEach(async () => {
    while (opened.length > 0) await opened.pop()?.quit();
  });
  const runtime = (options: { recordTtlMs?: number; namespace?: string } = {}): MatrixRuntime =>
    backend.runtime({ reactors: [order, waits], ...options });

  test('pages by tag through 10,000 retained executions exactly once while executions are added', async () => {
    const { engine, startWorker } = runtime();
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
  }, 300_000);

  test('the status filter follows status changes; tags and reactor filter; result carries the tags', async () => {
    const rt = runtime();
    const { engine, startWorker } = rt;
    const index = indexesOf(backend, rt, opened);
    const a = await engine.start(waits, {}, { tags: { orderId: '7', kind: 'a' } });
    const b = await engine.start(order, { n: 1 }, { tags: { orderId: '7', kind: 'b' } });
    const ids = async (query: ListQuery) => (await engine.list(query)).executions.map((e) => e.executionId);
    expect(await ids({ status: 'pending' })).toEqual(expect.arrayContaining([a.executionId, b.executionId]));
    if (index !== undefined) {
      expect(await index.status('pending', a.executionId)).not.toBeNull();
      expect(await index.tag('orderId', '7', a.executionId)).not.toBeNull();
    }
    startWorker({ concurrency: 4 });
    await expect.poll(() => ids({ status: 'completed' })).toEqual([b.executionId]);
    await expect.poll(() => ids({ status: 'pending' })).toEqual([]);
    if (index !== undefined) {
      // The record left the pending index in the script that changed its status (not when a listing read it).
      expect(await index.status('pending', b.executionId)).toBeNull();
      expect(await index.status('completed', b.executionId)).not.toBeNull();
    }
    expect(await ids({ tags: { orderId: '7' } })).toEqual(expect.arrayContaining([a.executionId, b.executionId]));
    expect(await ids({ tags: { orderId: '7', kind: 'a' } })).toEqual([a.executionId]);
    expect(await ids({ tags: { orderId: '7' }, reactor: 'history-order' })).toEqual([b.executionId]);
    expect(await ids({ tags: { orderId: '8' } })).toEqual([]);
    held.open();
    await expect.poll(() => ids({ status: 'completed', reactor: 'history-waits' })).toEqual([a.executionId]);
    for (const status of ['pending', 'running', 'parked'] as const) {
      expect(await ids({ status })).toEqual([]);
      if (index !== undefined) expect(await index.status(status, a.executionId)).toBeNull();
    }
    expect((await engine.result(a.executionId))?.tags).toEqual({ kind: 'a', orderId: '7' });
    const newest = (await engine.list({ limit: 1 })).executions[0]!;
    expect(await ids({ from: newest.createdAt + 1 })).toEqual([]);
    const first = await engine.list({ limit: 1 });
    const second = await engine.list({ limit: 1, cursor: first.cursor! });
    expect(second.executions[0]!.executionId).not.toBe(first.executions[0]!.executionId);
    expect(second.cursor).toBeUndefined();
  }, 60_000);

  // Three runtimes over one namespace stand for three processes sharing a server's backend; the memory backend lives in one process.
  testWhere(backend.shared)(
    'a status change leaves the old status whichever process made the record: the worker that entered the job, or an operator that never saw it',
    async () => {
      const starter = runtime();
      const index = indexesOf(backend, starter, opened);
      const started = await starter.engine.start(order, { n: 2 });
      const cancelled = await starter.engine.start(order, { n: 3 });
      const statusIds = async (status: 'pending' | 'cancelled' | 'running' | 'parked' | 'completed') =>
        (await starter.engine.list({ status })).executions.map((e) => e.executionId);
      // An operator in another process, with no memory of the record, cancels one while it is queued.
      const operator = runtime({ namespace: starter.namespace });
      await operator.engine.cancel(cancelled.executionId, { reason: 'not needed' });
      expect(await statusIds('pending')).not.toContain(cancelled.executionId);
      expect(await statusIds('cancelled')).toEqual([cancelled.executionId]);
      if (index !== undefined) {
        expect(await index.status('pending', cancelled.executionId)).toBeNull();
        expect(await index.status('cancelled', cancelled.executionId)).not.toBeNull();
      }
      // A worker in a third process runs the other one: it leaves pending, then running.
      const worker = runtime({ namespace: starter.namespace });
      worker.startWorker({ concurrency: 2 });
      await expect.poll(async () => (await worker.engine.result(started.executionId))?.status).toBe('completed');
      for (const status of ['pending', 'running', 'parked'] as const) {
        expect(await statusIds(status)).toEqual([]);
        if (index !== undefined) expect(await index.status(status, started.executionId)).toBeNull();
      }
      expect(await statusIds('completed')).toEqual([started.executionId]);
    },
    60_000,
  );

  test('an expired record is never listed (on Redis, a listing drops the index entries it meets)', async () => {
    const rt = runtime({ recordTtlMs: 1_000 });
    const index = indexesOf(backend, rt, opened);
    const q = await rt.engine.start(order, { n: 1 }, { tags: { orderId: 'gone' } });
    expect((await rt.engine.list({ tags: { orderId: 'gone' } })).executions).toHaveLength(1);
    await until(async () => (await rt.engine.result(q.executionId)) === undefined, 30_000, 'the record to expire');
    expect((await rt.engine.list({ tags: { orderId: 'gone' } })).executions).toEqual([]);
    if (index !== undefined) expect(await index.tag('orderId', 'gone', q.executionId)).toBeNull();
  }, 60_000);

  // The TTL Redis sets on a record and its indexes: a Redis store's own layout.
  testWhere(backend.name === 'redis')('recordTtlMs: Infinity keeps records (a TTL of 100 years)', async () => {
    const rt = runtime({ recordTtlMs: Infinity });
    const { redis, keys } = indexesOf(backend, rt, opened)!;
    const q = await rt.engine.start(order, { n: 1 }, { tags: { orderId: 'kept' } });
    const century = 99 * 365 * 24 * 3600 * 1000;
    expect(await redis.pttl(keys.execution(q.executionId))).toBeGreaterThan(century);
    expect(await redis.pttl(keys.executionIndexByTag('orderId', 'kept'))).toBeGreaterThan(century);
  });
});
