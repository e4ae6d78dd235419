/**
 * The trace bound in a worker on every backend of the matrix (docs/decisions/073): a background
 * execution with more events than `maxTraceEntries` is persisted with at most that many trace
 * entries, the oldest folded into one exact summary; a bad bound is refused by the server
 * backends' runtime factories before they open a connection.
 */
import { describe, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import { reactor, type AnyReactorDefinition, type ReactorEvent, type TraceSummary } from '../../src/index.js';
import { createPostgresRuntime } from '../../src/postgres.js';
import { describeOnBackends } from '../support/backend-matrix.js';

type Builder = {
  step(name: string, options: object): Builder;
  background(mode: 'all'): Builder;
  build(): AnyReactorDefinition;
};

/** A background chain of `n` steps. */
function chain(name: string, n: number): AnyReactorDefinition {
  let builder = reactor(name).step('s0', { run: () => 0 }) as unknown as Builder;
  for (let i = 1; i < n; i++) builder = builder.step(`s${i}`, { waitFor: [`s${i - 1}`], run: () => i });
  return builder.background('all').build();
}

describeOnBackends('a bounded trace in a worker', (backend) => {
  test('a background run with more events than maxTraceEntries is persisted with the bound at most, its summary exact', async () => {
    const definition = chain('trace-bound', 40);
    const runtime = backend.runtime({ reactors: [definition], maxTraceEntries: 20 });
    const live: ReactorEvent[] = [];
    runtime.engine.subscribe((e) => live.push(e));
    runtime.startWorker({ concurrency: 2 });
    const queued = await runtime.engine.start(definition, {});
    const done = await runtime.engine.wait(queued.executionId, { timeoutMs: 15_000, pollMs: 10 });
    expect(done.status).toBe('completed');
    const record = await runtime.engine.store.get(queued.executionId);
    const trace = record?.trace ?? [];
    const own = live.filter((e) => e.executionId === queued.executionId);
    expect(own.length).toBeGreaterThan(80);
    expect(trace.length).toBeLessThanOrEqual(20);
    expect(trace[0]).toEqual(own[0]);
    expect(trace[0]?.type).toBe('run.queued');
    const summary = trace[1] as TraceSummary;
    expect(summary.type).toBe('trace.summarized');
    expect(summary.dropped + trace.length - 1).toBe(own.length);
    const counts: Record<string, number> = {};
    for (const e of own.slice(1, 1 + summary.dropped)) counts[e.type] = (counts[e.type] ?? 0) + 1;
    expect(summary.byType).toEqual(counts);
    expect(trace.slice(2)).toEqual(own.slice(1 + summary.dropped));
    expect(trace.at(-1)?.type).toBe('run.completed');
  });
});

describe('the runtime factories', () => {
  test('createRedisRuntime and createPostgresRuntime refuse a bad bound before they connect', () => {
    expect(() => createRedisRuntime({ url: 'redis://127.0.0.1:1', maxTraceEntries: 5 })).toThrow(
      /createRedisRuntime: maxTraceEntries must be an integer >= 10/,
    );
    expect(() =>
      createPostgresRuntime({ connection: 'postgres://postgres@127.0.0.1:1/none', maxTraceEntries: 5 }),
    ).toThrow(/createPostgresRuntime: maxTraceEntries must be an integer >= 10/);
  });
});
