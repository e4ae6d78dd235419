/**
 * A map whose source has more elements than its `maxElements` (default 10,000) fails with
 * `MapTooLargeError` before any element runs — in process and fanned out, on memory and on
 * Redis — and the run rolls back like after any failed step (docs/limits.md, decision 072).
 */
import { afterAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime } from '../../src/bullmq.js';
import { DEFAULT_MAP_MAX_ELEMENTS } from '../../src/dsl/reactor.js';
import {
  createEmbeddedEngine,
  createEngine,
  defineStep,
  DefinitionError,
  MapTooLargeError,
  MemoryStore,
  reactor,
  type Engine,
  type RunResult,
} from '../../src/index.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

/** A reactor mapping over `input.items`; every element body and undo is logged in `log`. */
function mapping(name: string, log: string[], options: { maxElements?: number; fanOut?: boolean } = {}) {
  const element = defineStep({
    input: { n: z.number() },
    run: ({ n }) => void log.push(`element ${n}`),
  });
  return reactor(name)
    .input({ items: z.array(z.number()) })
    .step('open', { run: () => 'opened', undo: () => void log.push('open undone') })
    .map('each', {
      source: ($) => $.input('items'),
      each: element,
      args: (n) => ({ n }),
      waitFor: ['open'],
      ...(options.maxElements === undefined ? {} : { maxElements: options.maxElements }),
      ...(options.fanOut ? { fanOut: { batchSize: 2 } } : {}),
    })
    .build();
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

async function expectMapTooLarge(
  engine: Engine,
  result: RunResult | undefined,
  log: string[],
  elements: number,
  limit: number,
): Promise<void> {
  expect(result?.status).toBe('failed');
  if (result?.status !== 'failed') return;
  expect(result.failedStep).toBe('each');
  expect(result.error).toBeInstanceOf(MapTooLargeError);
  expect((result.error as MapTooLargeError).details).toEqual({ step: 'each', elements, limit });
  expect(result.error.message).toContain(`limit of ${limit}`);
  expect(result.error.message).toContain('maxElements');
  expect(log.filter((line) => line.startsWith('element'))).toEqual([]); // no element's body ran
  expect(log).toContain('open undone');
  const later = await engine.result(result.executionId);
  expect(later?.status === 'failed' && later.error).toBeInstanceOf(MapTooLargeError); // revived from the record
}

describe('maxElements on a map declaration', () => {
  test('defaults to 10,000 and is validated when the reactor is built', () => {
    expect(DEFAULT_MAP_MAX_ELEMENTS).toBe(10_000);
    const node = mapping('default-limit', []).byName.get('each');
    expect(node?.kind === 'map' && node.maxElements).toBe(10_000);
    expect(() => mapping('bad-limit', [], { maxElements: -1 })).toThrow(DefinitionError);
    expect(() => mapping('bad-limit', [], { maxElements: 1.5 })).toThrow(/maxElements must be an integer/);
  });

  test('a source at the limit runs every element', async () => {
    const log: string[] = [];
    const result = await createEngine({ store: new MemoryStore() }).run(mapping('at-limit', log, { maxElements: 3 }), {
      items: range(3),
    });
    expect(result.status).toBe('completed');
    expect(log.filter((line) => line.startsWith('element'))).toHaveLength(3);
  });
});

describe('a map over its element limit fails before any element runs', () => {
  test('memory, inline, the default limit: 10,001 elements', async () => {
    const log: string[] = [];
    const engine = createEngine({ store: new MemoryStore() });
    const result = await engine.run(mapping('inline-default', log), { items: range(DEFAULT_MAP_MAX_ELEMENTS + 1) });
    await expectMapTooLarge(engine, result, log, DEFAULT_MAP_MAX_ELEMENTS + 1, DEFAULT_MAP_MAX_ELEMENTS);
  });

  test('memory, embedded worker, fanned out: no element record or job', async () => {
    const log: string[] = [];
    const def = mapping('embedded-fanout', log, { maxElements: 3, fanOut: true });
    const engine = createEmbeddedEngine({ reactors: [def] });
    closers.push(() => engine.close());
    const started = await engine.start(def, { items: range(5) });
    const done = await engine.wait(started.executionId, { timeoutMs: 10_000, pollMs: 10 });
    await expectMapTooLarge(engine, done, log, 5, 3);
    expect(await engine.result(`${started.executionId}/each[0]`)).toBeUndefined();
  });

  test('Redis runtime, BullMQ worker, fanned out', async () => {
    const log: string[] = [];
    const def = mapping('redis-fanout', log, { maxElements: 3, fanOut: true });
    const runtime = createRedisRuntime({ url: server.url, prefix: 'lim-map-fan', reactors: [def] });
    closers.push(() => runtime.close());
    runtime.startWorker({ concurrency: 2 });
    const started = await runtime.engine.start(def, { items: range(5) });
    const done = await runtime.engine.wait(started.executionId, { timeoutMs: 15_000, pollMs: 20 });
    await expectMapTooLarge(runtime.engine, done, log, 5, 3);
    expect(await runtime.engine.result(`${started.executionId}/each[0]`)).toBeUndefined();
  });

  test('Redis runtime, in process (inline run, no fan-out)', async () => {
    const log: string[] = [];
    const def = mapping('redis-inline', log, { maxElements: 3 });
    const runtime = createRedisRuntime({ url: server.url, prefix: 'lim-map-inline', reactors: [def] });
    closers.push(() => runtime.close());
    const result = await runtime.engine.run(def, { items: range(4) });
    await expectMapTooLarge(runtime.engine, result, log, 4, 3);
  });
});
