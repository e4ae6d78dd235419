/**
 * A large in-process map (more than 1,000 elements) keeps its element states apart from the
 * record, under their own budget: the record stays small, a later job reads the map's result and
 * undoes its elements from those states, a worker that lost its lease writes none of them, and
 * states over their budget fail the run clearly — on memory and on Redis (docs/limits.md,
 * decision 076).
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime } from '../../src/bullmq.js';
import { COMPACT_MAP_ABOVE, CompactMap } from '../../src/engine/run/compact-map.js';
import {
  createEmbeddedEngine,
  createEngine,
  defineStep,
  LeaseLostError,
  MemoryStore,
  reactor,
  type Engine,
  type ExecutionRecord,
  type Store,
} from '../../src/index.js';
import { RedisStore } from '../../src/storage/redis/store.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

/** A connection to the suite's server, closed after the file. */
function client(): Redis {
  const redis = new Redis(server.url);
  closers.push(() => redis.quit());
  return redis;
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/**
 * `all` maps `double` over 0..n-1 (its undo counts in `log.undone`); `after` reads the map's
 * result and fails its first `failures` attempts (each retry is a new job in a worker).
 */
function doubling(
  name: string,
  log: { undone: number; seen: number[] },
  failures: number,
  background = false,
  maxAttempts = failures + 1,
  fanOut = false,
) {
  const double = defineStep({
    input: { x: z.number() },
    run: ({ x }) => x * 2,
    undo: () => void log.undone++,
  });
  let attempts = 0;
  const start = reactor(name).input({ n: z.number() });
  return (background ? start.background('all') : start)
    .map('all', {
      source: ($) => $.input('n').transform((n) => range(n)),
      each: double,
      args: (x) => ({ x }),
      maxElements: 200_000,
      ...(fanOut ? { fanOut: { batchSize: 500 } } : {}),
    })
    .step('after', {
      args: ($) => ({ all: $.result('all') }),
      retry: { maxAttempts, baseDelay: '1ms' },
      run: ({ all }) => {
        log.seen.push(all.successes.length);
        if (++attempts <= failures) throw new Error(`after fails (attempt ${attempts})`);
        return all.values.reduce((sum: number, v) => sum + (v ?? 0), 0);
      },
    })
    .returns('after');
}

describe('CompactMap', () => {
  test('keeps status, attempts, results (null and undefined apart) and errors; a non-completion keeps the result', () => {
    const map = new CompactMap(4);
    map.set(0, { status: 'completed', attempts: 1, result: 7 });
    map.set(1, { status: 'completed', attempts: 2, result: null });
    map.set(2, { status: 'completed', attempts: 1 });
    map.set(3, { status: 'failed', attempts: 3, error: { name: 'Error', message: 'no' } });
    map.set(0, { status: 'undone', attempts: 1 });
    const restored = new CompactMap(
      4,
      JSON.parse(JSON.stringify(map.snapshot())) as ReturnType<CompactMap['snapshot']>,
    );
    expect([0, 1, 2, 3].map((i) => restored.get(i))).toEqual([
      { status: 'undone', attempts: 1, result: 7 },
      { status: 'completed', attempts: 2, result: null },
      { status: 'completed', attempts: 1 },
      { status: 'failed', attempts: 3, error: { name: 'Error', message: 'no' } },
    ]);
    expect(map.snapshot().status).toBe('ucCF');
  });

  test('the persisted form is one object until the next change, and its revision moves with each change', () => {
    const map = new CompactMap(2);
    const first = map.snapshot();
    expect(map.snapshot()).toBe(first);
    map.set(1, { status: 'completed', attempts: 1, result: 'b' });
    expect(map.snapshot()).not.toBe(first);
    expect(map.snapshot().rev).toBeGreaterThan(first.rev);
    expect(() => map.set(2, { status: 'completed', attempts: 1 })).toThrow(RangeError);
  });

  test('rebuilds the map result from the element states once the map settled', () => {
    const map = new CompactMap(3);
    map.set(0, { status: 'completed', attempts: 1, result: 'a' });
    map.set(2, { status: 'skipped', attempts: 1, result: 'c' });
    map.settle({ values: [], successes: [], succeeded: [], failures: [], notStarted: [1] });
    const rebuilt = new CompactMap(3, map.snapshot()).result();
    expect(rebuilt).toEqual({
      values: ['a', undefined, 'c'],
      successes: ['a', 'c'],
      succeeded: [
        { index: 0, value: 'a' },
        { index: 2, value: 'c' },
      ],
      failures: [],
      notStarted: [1],
    });
  });
});

describe.each([
  ['memory', () => ({ store: new MemoryStore() })],
  ['Redis', () => ({ store: new RedisStore({ redis: client(), prefix: `cm${Math.random()}` }) })],
])('an inline map of 100,000 elements (%s)', (_name, make) => {
  test('runs within the default record limit: the record holds the map, its element states are kept apart', async () => {
    const { store } = make();
    const log = { undone: 0, seen: [] as number[] };
    const engine = createEngine({ store });
    const result = await engine.run(doubling('cm-large', log, 0), { n: 100_000 });
    expect(result.status).toBe('completed');
    expect(result.status === 'completed' && result.value).toBe(99_999 * 100_000); // 2 × (0 + … + 99,999)
    const record = (await store.get(result.executionId))!;
    expect(Object.keys(record.steps).sort()).toEqual(['after', 'all']);
    expect(record.steps.all).not.toHaveProperty('result');
    expect(JSON.stringify({ ...record, mapStates: undefined }).length).toBeLessThan(2_000);
    expect(record.mapStates?.all).toMatchObject({ size: 100_000, status: 'c'.repeat(100_000) });
    expect(record.mapStates?.all?.results[99_999]).toBe(199_998);
  });
});

test(`a map of ${COMPACT_MAP_ABOVE} elements or fewer keeps one step record per element, as before`, async () => {
  const store = new MemoryStore();
  const result = await createEngine({ store }).run(doubling('cm-small', { undone: 0, seen: [] }, 0), {
    n: COMPACT_MAP_ABOVE,
  });
  const record = (await store.get(result.executionId))!;
  expect(record.steps[`all[${COMPACT_MAP_ABOVE - 1}]`]).toMatchObject({ status: 'completed', result: 1998 });
  expect(record.mapStates).toBeUndefined();
});

/** Runs `reactor` in the background and waits for its outcome. */
async function inBackground(engine: Engine, definition: ReturnType<typeof doubling>, n: number) {
  const started = await engine.start(definition, { n });
  return engine.wait(started.executionId, { timeoutMs: 60_000 });
}

describe.each([
  [
    'embedded pool',
    () => {
      const engine = createEmbeddedEngine({ workerConcurrency: 2 });
      closers.push(() => engine.close());
      return engine;
    },
  ],
  [
    'Redis workers',
    () => {
      const runtime = createRedisRuntime({ url: server.url, prefix: `cmw${Math.random()}` });
      const worker = runtime.startWorker({ concurrency: 2 });
      closers.push(
        () => runtime.close(),
        () => worker.stop(),
      );
      return runtime.engine;
    },
  ],
])('a later job of a large map (%s)', (_name, make) => {
  test('reads the map result rebuilt from the element states, and a rollback undoes every element from them', async () => {
    const engine = make();
    const log = { undone: 0, seen: [] as number[] };
    const definition = doubling('cm-later', log, 99, true, 3);
    engine.register(definition);
    const failed = await inBackground(engine, definition, 2_000);
    expect(failed.status).toBe('failed');
    expect(failed.status === 'failed' && failed.failedStep).toBe('after');
    expect(log.seen).toEqual([2_000, 2_000, 2_000]);
    expect(log.undone).toBe(2_000);

    const passing = doubling('cm-later-ok', log, 2, true, 3);
    engine.register(passing);
    const done = await inBackground(engine, passing, 2_000);
    expect(done).toMatchObject({ status: 'completed', value: 1_999 * 2_000 });
  });
});

test('a fan-out map of more than 1,000 elements keeps its collected values once, in its element states (embedded pool)', async () => {
  const store = new MemoryStore();
  const engine = createEmbeddedEngine({ workerConcurrency: 16, store });
  closers.push(() => engine.close());
  const log = { undone: 0, seen: [] as number[] };
  const definition = doubling('cm-fanout', log, 0, true, 1, true);
  engine.register(definition);
  const done = await inBackground(engine, definition, 3_000);
  expect(done).toMatchObject({ status: 'completed', value: 2_999 * 3_000 });
  const record = (await store.get(done.executionId))!;
  expect(record.steps.all).toMatchObject({ status: 'completed' });
  expect(record.steps.all).not.toHaveProperty('result');
  expect(record.mapStates?.all).toMatchObject({ size: 3_000, status: 'c'.repeat(3_000) });
  expect(record.mapStates?.all?.results[2_999]).toBe(5_998);
});

describe('writes of a large map', () => {
  const withStates = (id: string, rev: number): ExecutionRecord => {
    const map = new CompactMap(1_001);
    for (let i = 0; i <= rev; i++) map.set(i, { status: 'completed', attempts: 1, result: i });
    const now = Date.now();
    return {
      v: 1,
      id,
      rootId: id,
      reactor: 'cm',
      status: 'running',
      input: {},
      steps: {},
      rollbackFailures: [],
      mapStates: { all: map.snapshot() },
      createdAt: now,
      updatedAt: now,
    };
  };

  test('a worker that does not hold the lease writes neither the record nor the element states (Redis)', async () => {
    const redis = client();
    const store = new RedisStore({ redis, prefix: `cmf${Math.random()}` });
    await redis.hset(store.keys.lock('live:x'), 'owner', 'someone-else');
    await expect(store.saveFenced(withStates('x', 3), 'live:x', 'me')).rejects.toBeInstanceOf(LeaseLostError);
    expect(await redis.exists(store.keys.executionMapPart('x', 'all'), store.keys.execution('x'))).toBe(0);
  });

  test.each([
    ['memory', () => new MemoryStore({ maxMapStateBytes: 1_000 }) as Store],
    ['Redis', () => new RedisStore({ redis: client(), prefix: `cmb${Math.random()}`, maxMapStateBytes: 1_000 })],
  ])('element states over their budget are refused before anything is written (%s)', async (_name, make) => {
    const store = make();
    const error = await store.save(withStates('big', 600)).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'record_too_large',
      details: { executionId: 'big', limit: 1_000, mapStates: 'all' },
    });
    expect(await store.get('big')).toBeUndefined();
  });

  test('createRedisRuntime passes maxMapStateBytes to its store', async () => {
    const runtime = createRedisRuntime({ url: server.url, prefix: `cmr${Math.random()}`, maxMapStateBytes: 4_000 });
    closers.push(() => runtime.close());
    const result = await runtime.engine.run(doubling('cm-runtime', { undone: 0, seen: [] }, 0), { n: 2_000 });
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'record_too_large',
      details: { mapStates: 'all', limit: 4_000 },
    });
  });

  test('a run whose map states outgrow their budget fails with record_too_large naming the map, never left running', async () => {
    const store = new MemoryStore({ maxMapStateBytes: 4_000 });
    const log = { undone: 0, seen: [] as number[] };
    const result = await createEngine({ store }).run(doubling('cm-budget', log, 0), { n: 2_000 });
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'record_too_large',
      details: { mapStates: 'all' },
    });
    expect((await store.get(result.executionId))?.status).toBe('failed');
  });
});
