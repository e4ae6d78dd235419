/**
 * The trace is bounded (docs/decisions/073, docs/limits.md): past `maxTraceEntries` (default
 * 1,000) the oldest entries after the first are folded into one `trace.summarized` entry whose
 * counts are exact, the order is kept and the newest entries are left as they were — in the rule
 * itself, in an inline run's result, in a background execution's record, and in the events the
 * sweep and a retry append to a persisted trace. Memory backend, manual clock, no sleeps.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEmbeddedEngine,
  createEngine,
  DEFAULT_MAX_TRACE_ENTRIES,
  defineStep,
  MemoryCoordinator,
  MemoryStore,
  reactor,
  RECORD_VERSION,
  type AnyReactorDefinition,
  type ReactorEvent,
  type TraceSummary,
} from '../../src/index.js';
import { appendToTrace, boundTrace } from '../../src/engine/model/trace-bound.js';
import { ManualClock } from '../../src/testing/clock.js';
import { manualEngine, type Manual } from '../background/helpers.js';

type Builder = {
  step(name: string, options: object): Builder;
  background(mode: 'all'): Builder;
  build(): AnyReactorDefinition;
};

/** A chain of `n` steps, each advancing the clock by 1 ms (so every entry has its own time). */
function chain(name: string, n: number, clock: ManualClock, options: { background?: boolean } = {}) {
  let builder = reactor(name).step('s0', { run: () => (clock.advance(1), 0) }) as unknown as Builder;
  for (let i = 1; i < n; i++)
    builder = builder.step(`s${i}`, { waitFor: [`s${i - 1}`], run: () => (clock.advance(1), i) });
  return (options.background === true ? builder.background('all') : builder).build();
}

/** A synthetic event, numbered by `at`. */
function entry(at: number, type: 'step.started' | 'step.succeeded' | 'run.started' = 'step.started'): ReactorEvent {
  const base = { executionId: 'e', rootExecutionId: 'e', reactor: 'r', at };
  return type === 'run.started' ? { ...base, type, input: {} } : { ...base, type, step: `s${at}`, attempt: 1 };
}

/** How many of each type `events` holds. */
function countByType(events: readonly ReactorEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.type] = (counts[e.type] ?? 0) + 1;
  return counts;
}

/**
 * Checks `trace` against `all`, every entry it was built from, in order: the first entry, one
 * summary of exactly the entries after it that are missing, then the rest of `all` unchanged.
 */
function expectFolded(trace: readonly ReactorEvent[], all: readonly ReactorEvent[], max: number): TraceSummary {
  expect(trace.length).toBeLessThanOrEqual(max);
  expect(trace[0]).toEqual(all[0]);
  const summary = trace[1] as TraceSummary;
  expect(summary.type).toBe('trace.summarized');
  expect(trace.filter((e) => e.type === 'trace.summarized')).toHaveLength(1);
  const dropped = all.slice(1, 1 + summary.dropped);
  expect(summary.dropped + trace.length - 1).toBe(all.length); // nothing lost, nothing counted twice
  expect(summary.byType).toEqual(countByType(dropped));
  expect(Object.values(summary.byType).reduce((a, b) => a + b, 0)).toBe(summary.dropped);
  expect(summary).toMatchObject({ from: dropped[0]!.at, to: dropped.at(-1)!.at, at: dropped.at(-1)!.at });
  expect(summary).toMatchObject({
    executionId: all[0]!.executionId,
    rootExecutionId: all[0]!.rootExecutionId,
    reactor: all[0]!.reactor,
  });
  expect(trace.slice(2)).toEqual(all.slice(1 + summary.dropped)); // the newest, in order, as they were
  return summary;
}

describe('the rule (model/trace-bound.ts)', () => {
  test('appending one entry at a time never holds more than the bound; each fold takes a quarter of it', () => {
    const max = 40;
    const all: ReactorEvent[] = [entry(0, 'run.started')];
    const trace: ReactorEvent[] = [all[0]!];
    let folds = 0;
    for (let at = 1; at <= 1_000; at++) {
      const e = entry(at, at % 2 === 0 ? 'step.succeeded' : 'step.started');
      all.push(e);
      trace.push(e);
      const before = trace.length;
      boundTrace(trace, max);
      expect(trace.length).toBeLessThanOrEqual(max);
      if (trace.length < before) {
        folds++;
        expect(trace.length).toBe(max - max / 4); // 30 after each fold, then it grows to 40 again
      }
      if (at >= max) expectFolded(trace, all, max);
    }
    // The first fold at 41 entries, then one per 11 appended (30 → 41): amortised, not one per entry.
    expect(folds).toBe(1 + Math.floor((1_001 - (max + 1)) / (max / 4 + 1)));
  });

  test('a trace at or under the bound is left as it is', () => {
    const trace = Array.from({ length: 10 }, (_, i) => entry(i));
    const copy = [...trace];
    boundTrace(trace, 10);
    expect(trace).toEqual(copy);
  });

  test('a trace far over the bound (a record written under a larger one) is folded in one go', () => {
    const all = Array.from({ length: 5_000 }, (_, i) => entry(i));
    const trace = [...all];
    boundTrace(trace, 100);
    expect(trace).toHaveLength(75);
    expectFolded(trace, all, 100);
  });

  test('a trace that starts with a summary folds it into the next one (the counts add up)', () => {
    const first: TraceSummary = {
      type: 'trace.summarized',
      executionId: 'e',
      rootExecutionId: 'e',
      reactor: 'r',
      at: 4,
      dropped: 5,
      byType: { 'step.started': 5 },
      from: 0,
      to: 4,
    };
    const trace: ReactorEvent[] = [first, ...Array.from({ length: 10 }, (_, i) => entry(10 + i, 'step.succeeded'))];
    boundTrace(trace, 10);
    expect(trace).toHaveLength(8);
    expect(trace[0]).toEqual({
      ...first,
      dropped: 8,
      byType: { 'step.started': 5, 'step.succeeded': 3 },
      to: 12,
      at: 12,
    });
    expect(trace.slice(1).map((e) => e.at)).toEqual([13, 14, 15, 16, 17, 18, 19]);
  });

  test('appendToTrace copies: the persisted trace it was given is not changed', () => {
    const persisted = Array.from({ length: 10 }, (_, i) => entry(i));
    const next = appendToTrace(persisted, 10, entry(10));
    expect(persisted).toHaveLength(10);
    expect(next).toHaveLength(8);
    expect(next.at(-1)).toEqual(entry(10));
    expect(appendToTrace(undefined, 10, entry(1))).toEqual([entry(1)]);
  });
});

describe('createEngine({ maxTraceEntries })', () => {
  test('is validated: an integer >= 10, else a RangeError naming the option', () => {
    const store = new MemoryStore();
    for (const bad of [9, 0, -1, 10.5, Number.NaN, Number.POSITIVE_INFINITY, '100'])
      expect(() => createEngine({ store, maxTraceEntries: bad as number })).toThrow(
        /createEngine: maxTraceEntries must be an integer >= 10/,
      );
    expect(() => createEngine({ store, maxTraceEntries: 9 })).toThrow(RangeError);
    expect(() => createEngine({ store, maxTraceEntries: 10 })).not.toThrow();
    expect(() => createEmbeddedEngine({ maxTraceEntries: 3 })).toThrow(RangeError);
  });

  test('an inline run with more events than the bound: its result holds the bound at most, the summary exact', async () => {
    const clock = new ManualClock();
    const engine = createEngine({ store: new MemoryStore({ clock }), clock, maxTraceEntries: 50 });
    const live: ReactorEvent[] = [];
    engine.subscribe((e) => live.push(e));
    const result = await engine.run(chain('trace-inline', 100, clock), {});
    expect(result.status).toBe('completed');
    expect(live.length).toBeGreaterThan(200); // run.started, started and succeeded per step, run.completed
    expectFolded(result.trace, live, 50);
    expect(live.some((e) => e.type === 'trace.summarized')).toBe(false); // never published
    expect(result.trace.at(-1)?.type).toBe('run.completed');
  });

  test('the default bound is 1,000: an in-process map of 2,000 elements keeps at most 1,000 entries', async () => {
    expect(DEFAULT_MAX_TRACE_ENTRIES).toBe(1_000);
    const clock = new ManualClock();
    const engine = createEngine({ store: new MemoryStore({ clock }), clock });
    const live: ReactorEvent[] = [];
    engine.subscribe((e) => live.push(e));
    const element = defineStep({ input: { n: z.number() }, run: ({ n }) => n });
    const mapping = reactor('trace-map')
      .input({ items: z.array(z.number()) })
      .map('each', { source: ($) => $.input('items'), each: element, args: (n) => ({ n }) })
      .build();
    const items = Array.from({ length: 2_000 }, (_, i) => i);
    const result = await engine.run(mapping, { items });
    expect(result.status).toBe('completed');
    expect(live.length).toBeGreaterThan(4_000);
    const summary = expectFolded(result.trace, live, 1_000);
    expect(summary.byType['step.succeeded']).toBeGreaterThan(1_000);
  });

  test('createEmbeddedEngine passes the bound through', async () => {
    const clock = new ManualClock();
    const engine = createEmbeddedEngine({ clock, maxTraceEntries: 10 });
    const result = await engine.run(chain('trace-embedded', 20, clock), {});
    expect(result.trace.length).toBeLessThanOrEqual(10);
    expect(result.trace[1]?.type).toBe('trace.summarized');
    await engine.close();
  });
});

describe('persisted traces', () => {
  function setup(max: number): { clock: ManualClock; manual: Manual } {
    const clock = new ManualClock();
    const manual = manualEngine({
      clock,
      store: new MemoryStore({ clock }),
      coordinator: new MemoryCoordinator({ clock }),
      queueOptions: { clock },
      checkpointIntervalMs: 0,
      maxTraceEntries: max,
      background: { livenessTtlMs: 3_000 },
    });
    return { clock, manual };
  }

  async function settle(manual: Manual): Promise<void> {
    await manual.engine.idle();
    await manual.memory.drain();
  }

  test("a background execution's record keeps the bound at most, its summary exact", async () => {
    const { clock, manual } = setup(20);
    manual.startWorker();
    const queued = await manual.engine.start(chain('trace-background', 30, clock, { background: true }), {});
    await settle(manual);
    const record = await manual.store.get(queued.executionId);
    expect(record?.status).toBe('completed');
    const trace = record?.trace ?? [];
    const own = manual.events.filter((e) => e.executionId === queued.executionId);
    expect(own[0]?.type).toBe('run.queued');
    expectFolded(trace, own, 20);
    expect(trace.at(-1)?.type).toBe('run.completed');
    expect(await manual.engine.result(queued.executionId)).toMatchObject({ status: 'completed', trace });
  });

  test('the sweep appends its event to a full persisted trace within the bound', async () => {
    const { clock, manual } = setup(10);
    manual.engine.register(chain('trace-swept', 1, clock));
    const at = clock.now();
    const trace = Array.from({ length: 10 }, (_, i): ReactorEvent => ({
      ...entry(at + i),
      executionId: 'lost-1',
      rootExecutionId: 'lost-1',
      reactor: 'trace-swept',
    }));
    await manual.store.save({
      v: RECORD_VERSION,
      id: 'lost-1',
      rootId: 'lost-1',
      reactor: 'trace-swept',
      status: 'pending',
      input: {},
      steps: {},
      rollbackFailures: [],
      background: { jobs: 1, contention: 0 },
      trace,
      createdAt: at,
      updatedAt: at,
    });
    clock.advance(3_001);
    expect(await manual.engine.sweep()).toMatchObject({ requeued: 1 });
    const swept = (await manual.store.get('lost-1'))?.trace ?? [];
    const recovered = manual.events.find((e) => e.type === 'run.recovered');
    expect(recovered).toBeDefined();
    expectFolded(swept, [...trace, recovered!], 10);
    expect(swept.at(-1)).toEqual(recovered);
  });

  test("a retry's link is appended to the retried execution's full trace within the bound", async () => {
    const { clock, manual } = setup(10);
    manual.startWorker();
    let calls = 0;
    const flaky = reactor('trace-retried')
      .step('s0', { run: () => (clock.advance(1), 0) })
      .step('s1', { waitFor: ['s0'], run: () => (clock.advance(1), 1) })
      .step('s2', { waitFor: ['s1'], run: () => (clock.advance(1), 2) })
      .step('s3', { waitFor: ['s2'], run: () => (clock.advance(1), 3) })
      .step('boom', {
        waitFor: ['s3'],
        run: () => {
          if (calls++ === 0) throw new Error('first time');
          return 'ok';
        },
      })
      .background('all')
      .build();
    const queued = await manual.engine.start(flaky, {});
    await settle(manual);
    const failed = await manual.store.get(queued.executionId);
    expect(failed?.status).toBe('failed');
    expect(failed?.trace?.length).toBeLessThanOrEqual(10);
    const retried = await manual.engine.retry(queued.executionId);
    await settle(manual);
    expect(await manual.engine.result(retried.executionId)).toMatchObject({ status: 'completed' });
    const source = (await manual.store.get(queued.executionId))?.trace ?? [];
    const own = manual.events.filter((e) => e.executionId === queued.executionId);
    expect(source.at(-1)).toMatchObject({ type: 'run.retried', retryExecutionId: retried.executionId });
    expectFolded(source, own, 10);
  });
});
