/**
 * A record that outgrows the store's size limit mid-run (a step returns a big value) ends the
 * execution `failed` with `RecordTooLargeError` as its error and the step that made it as
 * `failedStep` — on memory and on Redis, inline and in a worker — and `engine.result` says so
 * later: the failure record is written without the oversized result (docs/limits.md, decision 071).
 */
import { afterAll, describe, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import {
  createEmbeddedEngine,
  createEngine,
  MemoryStore,
  reactor,
  RecordTooLargeError,
  type Engine,
  type RunResult,
} from '../../src/index.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

/** A run whose second step returns `bytes` characters: over the limit when `bytes` is. */
function growing(name: string, bytes: number, undone: string[] = []) {
  return reactor(name)
    .step('small', { run: () => 'ok', undo: () => void undone.push('small') })
    .step('blob', { waitFor: ['small'], run: () => 'x'.repeat(bytes), undo: () => void undone.push('blob') })
    .step('after', { waitFor: ['blob'], run: () => void undone.push('after ran') })
    .build();
}

async function expectFailedOverLimit(engine: Engine, result: RunResult | undefined, limit: number): Promise<void> {
  expect(result?.status).toBe('failed');
  if (result?.status !== 'failed') return;
  expect(result.error).toBeInstanceOf(RecordTooLargeError);
  expect(result.failedStep).toBe('blob');
  expect((result.error as RecordTooLargeError).details.limit).toBe(limit);
  const later = await engine.result(result.executionId);
  expect(later?.status).toBe('failed'); // never left running (or queued)
  if (later?.status !== 'failed') return;
  expect(later.error).toBeInstanceOf(RecordTooLargeError); // revived from the record
  expect(later.failedStep).toBe('blob');
  expect(later.steps.blob?.result).toBeUndefined(); // the failure record is written without it
  expect(later.steps.small?.result).toBe('ok'); // only what did not fit is dropped
}

describe('record size overflow mid-run, inline (engine.run)', () => {
  test('memory: failed, rolled back, and the stored record says failed', async () => {
    const undone: string[] = [];
    const engine = createEngine({ store: new MemoryStore({ maxRecordBytes: 4_096 }) });
    const result = await engine.run(growing('inline-memory', 8_000, undone), {});
    await expectFailedOverLimit(engine, result, 4_096);
    expect(undone).toEqual(['blob', 'small']);
  });

  test('Redis: failed, rolled back, and the stored record says failed', async () => {
    const backend = createRedisBackend({ url: server.url, prefix: 'lim-inline', maxRecordBytes: 4_096 });
    closers.push(() => backend.close());
    const engine = createEngine({ store: backend.store, coordinator: backend.coordinator });
    const undone: string[] = [];
    const result = await engine.run(growing('inline-redis', 8_000, undone), {});
    await expectFailedOverLimit(engine, result, 4_096);
    expect(undone).toEqual(['blob', 'small']);
  });
});

describe('record size overflow mid-run, in a worker (engine.start)', () => {
  test('embedded engine (memory): the execution ends failed, not queued or running', async () => {
    const undone: string[] = [];
    const def = growing('worker-memory', 8_000, undone);
    const engine = createEmbeddedEngine({ store: new MemoryStore({ maxRecordBytes: 4_096 }), reactors: [def] });
    closers.push(() => engine.close());
    const started = await engine.start(def, {});
    const done = await engine.wait(started.executionId, { timeoutMs: 10_000, pollMs: 10 });
    await expectFailedOverLimit(engine, done, 4_096);
    expect(undone).toEqual(['blob', 'small']);
  });

  test('Redis runtime (BullMQ worker, the default 512 KiB limit): the execution ends failed', async () => {
    const undone: string[] = [];
    const def = growing('worker-redis', 600 * 1024, undone);
    const runtime = createRedisRuntime({ url: server.url, prefix: 'lim-worker', reactors: [def] });
    closers.push(() => runtime.close());
    runtime.startWorker({ concurrency: 1 });
    const started = await runtime.engine.start(def, {});
    const done = await runtime.engine.wait(started.executionId, { timeoutMs: 15_000, pollMs: 20 });
    await expectFailedOverLimit(runtime.engine, done, 512 * 1024);
    expect(undone).toEqual(['blob', 'small']);
  });
});

describe('a completed run whose final record is over the limit', () => {
  test('memory and Redis: stored completed without its value (the steps and their results stay, for undo)', async () => {
    const backend = createRedisBackend({ url: server.url, prefix: 'lim-completed', maxRecordBytes: 4_096 });
    closers.push(() => backend.close());
    const stores = [new MemoryStore({ maxRecordBytes: 4_096 }), backend.store];
    for (const store of stores) {
      const engine = createEngine({ store, coordinator: backend.coordinator });
      // every step fits, but the value (all results, no `returns`) doubles the record
      const def = reactor('completed-big')
        .step('a', { run: () => 'a'.repeat(1_500) })
        .step('b', { run: () => 'b'.repeat(1_500) })
        .build();
      const result = await engine.run(def, {});
      expect(result.status).toBe('completed');
      const later = await engine.result(result.executionId);
      expect(later?.status).toBe('completed');
      expect(later?.status === 'completed' && later.value).toBeUndefined();
      expect(later?.steps.a?.result).toBe('a'.repeat(1_500));
    }
  });
});
