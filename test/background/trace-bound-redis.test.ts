/**
 * The trace bound on Redis + BullMQ (docs/decisions/073), with a worker in this process and a
 * throwaway redis-server: a background execution with more events than `maxTraceEntries` is
 * persisted with at most that many trace entries, the oldest folded into one exact summary; a
 * bad bound is refused by `createRedisRuntime` before it opens a connection.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import { reactor, type AnyReactorDefinition, type ReactorEvent, type TraceSummary } from '../../src/index.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

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

describe('on Redis, a bounded trace', () => {
  test('a background run with more events than maxTraceEntries is persisted with the bound at most, its summary exact', async () => {
    const definition = chain('trace-redis', 40);
    const runtime = createRedisRuntime({ url: server.url, prefix: 'tb1', reactors: [definition], maxTraceEntries: 20 });
    closers.push(() => runtime.close());
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

  test('createRedisRuntime refuses a bad bound before it connects', () => {
    expect(() => createRedisRuntime({ url: 'redis://127.0.0.1:1', maxTraceEntries: 5 })).toThrow(
      /createRedisRuntime: maxTraceEntries must be an integer >= 10/,
    );
  });
});
