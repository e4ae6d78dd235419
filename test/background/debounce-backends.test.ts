/**
 * Debounced starts in a worker on every backend of the matrix (docs/decisions/086): 20 starts on
 * one key within the window run one execution, with the last input, and the queue ran no step of
 * the others; two runtimes (two processes' worth of connections, on the server backends) starting
 * on one key concurrently still leave exactly one to run; a bad option writes nothing and enqueues
 * nothing.
 */
import { expect, test } from 'vitest';
import { z } from 'zod';
import { reactor, StartOptionsError, SupersededError, type Engine, type RunResult } from '../../src/index.js';
import { describeOnBackends, testWhere, type MatrixRuntime } from '../support/backend-matrix.js';

const ran: number[] = [];
const work = reactor('debounce-work')
  .input({ n: z.number() })
  .step('work', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => (ran.push(n), n) })
  .returns('work');

/** The runtime's jobs by state, as its queue inspector counts them (a state without jobs: 0). */
async function jobCounts(
  runtime: MatrixRuntime,
): Promise<Record<'waiting' | 'delayed' | 'active' | 'prioritized', number>> {
  const { counts } = await runtime.queueInspector.inspectQueue();
  return {
    waiting: counts.waiting ?? 0,
    delayed: counts.delayed ?? 0,
    active: counts.active ?? 0,
    prioritized: counts.prioritized ?? 0,
  };
}

/** Follows `supersededBy` from `id` to the execution that ran. */
async function winnerOf(engine: Engine, id: string): Promise<RunResult> {
  let result = await engine.wait(id, { timeoutMs: 15_000, pollMs: 20 });
  while (result.status === 'cancelled' && result.supersededBy !== undefined)
    result = await engine.wait(result.supersededBy, { timeoutMs: 15_000, pollMs: 20 });
  return result;
}

describeOnBackends('debounced starts in a worker', (backend) => {
  const runtime = (namespace?: string): MatrixRuntime =>
    backend.runtime({ reactors: [work], ...(namespace === undefined ? {} : { namespace }) });

  test('20 debounced starts on one key within the window: exactly one execution, with the last input', async () => {
    ran.length = 0;
    const runtime = backend.runtime({ reactors: [work] });
    const { engine, startWorker } = runtime;
    startWorker({ concurrency: 4 });
    const started: RunResult[] = [];
    for (let n = 1; n <= 20; n++)
      started.push(await engine.start(work, { n }, { debounce: { key: 'user-1', window: '4s' } }));
    const last = started[19]!;
    // The superseded starts' delayed jobs are removed: one job is left, the last start's.
    expect(await jobCounts(runtime)).toMatchObject({
      delayed: 1,
      waiting: 0,
      active: 0,
    });
    expect(await engine.wait(last.executionId, { timeoutMs: 15_000, pollMs: 20 })).toMatchObject({
      status: 'completed',
      value: 20,
    });
    for (let i = 0; i < 19; i++) {
      const result = await engine.wait(started[i]!.executionId, { timeoutMs: 15_000, pollMs: 20 });
      expect(result).toMatchObject({ status: 'cancelled', supersededBy: started[i + 1]!.executionId });
      if (result.status === 'cancelled') expect(result.cause).toBeInstanceOf(SupersededError);
    }
    await engine.idle();
    expect(ran).toEqual([20]);
  });

  // Two runtimes over one namespace stand for two processes sharing a server's backend; the memory backend lives in one process.
  testWhere(backend.shared)(
    'two engines starting on one key at once: one execution runs, every other start leads to it',
    async () => {
      ran.length = 0;
      const a = runtime();
      const b = runtime(a.namespace);
      a.startWorker({ concurrency: 2 });
      const starts = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? a : b).engine.start(work, { n: i + 1 }, { debounce: { key: 'k', window: 4_000 } }),
        ),
      );
      const winners = await Promise.all(starts.map((s) => winnerOf(a.engine, s.executionId)));
      const ids = new Set(winners.map((w) => w.executionId));
      expect(ids.size).toBe(1);
      expect(winners[0]).toMatchObject({ status: 'completed' });
      await a.engine.idle();
      expect(ran).toHaveLength(1);
    },
  );

  test('a bad debounce option: StartOptionsError, no record, no job', async () => {
    const rt = runtime();
    const { engine } = rt;
    const error: unknown = await engine
      .start(work, { n: 1 }, { debounce: { key: 'k', window: 0 } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartOptionsError);
    expect(error).toMatchObject({ code: 'start_options_invalid', details: { option: 'debounce.window' } });
    expect((await engine.store.list()).records).toHaveLength(0);
    expect(await jobCounts(rt)).toMatchObject({
      waiting: 0,
      delayed: 0,
      active: 0,
      prioritized: 0,
    });
  });
});
