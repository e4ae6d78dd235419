/**
 * Debounced starts on Redis + BullMQ with a worker in this process and a throwaway redis-server
 * (docs/decisions/086): 20 starts on one key within the window run one execution, with the last
 * input, and the BullMQ queue ran no step of the others; two engines (two processes' worth of
 * connections) starting on one key concurrently still leave exactly one to run; a bad option
 * writes nothing and enqueues nothing.
 */
import { Queue } from 'bullmq';
import { afterAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime } from '../../src/bullmq.js';
import { reactor, StartOptionsError, SupersededError, type RunResult } from '../../src/index.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const ran: number[] = [];
const work = reactor('debounce-redis')
  .input({ n: z.number() })
  .step('work', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => (ran.push(n), n) })
  .returns('work');

function runtime(prefix: string) {
  const created = createRedisRuntime({ url: server.url, prefix, reactors: [work] });
  closers.push(() => created.close());
  return created;
}

/** Follows `supersededBy` from `id` to the execution that ran. */
async function winnerOf(engine: ReturnType<typeof runtime>['engine'], id: string): Promise<RunResult> {
  let result = await engine.wait(id, { timeoutMs: 15_000, pollMs: 20 });
  while (result.status === 'cancelled' && result.supersededBy !== undefined)
    result = await engine.wait(result.supersededBy, { timeoutMs: 15_000, pollMs: 20 });
  return result;
}

describe('debounce on Redis', () => {
  test('20 debounced starts on one key within the window: exactly one execution, with the last input', async () => {
    ran.length = 0;
    const { engine, startWorker } = runtime('db1');
    startWorker({ concurrency: 4 });
    const started: RunResult[] = [];
    for (let n = 1; n <= 20; n++)
      started.push(await engine.start(work, { n }, { debounce: { key: 'user-1', window: '4s' } }));
    const last = started[19]!;
    // The superseded starts' delayed jobs are removed: one job is left, the last start's.
    const queue = new Queue('ts-reactor', { connection: { url: server.url }, prefix: 'db1' });
    closers.push(() => queue.close());
    expect(await queue.getJobCounts('delayed', 'waiting', 'active')).toMatchObject({
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

  test('two engines starting on one key at once: one execution runs, every other start leads to it', async () => {
    ran.length = 0;
    const a = runtime('db2');
    const b = runtime('db2');
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
  });

  test('a bad debounce option: StartOptionsError, no record, no job', async () => {
    const { engine } = runtime('db3');
    const error: unknown = await engine
      .start(work, { n: 1 }, { debounce: { key: 'k', window: 0 } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartOptionsError);
    expect(error).toMatchObject({ code: 'start_options_invalid', details: { option: 'debounce.window' } });
    expect((await engine.store.list()).records).toHaveLength(0);
    const queue = new Queue('ts-reactor', { connection: { url: server.url }, prefix: 'db3' });
    closers.push(() => queue.close());
    expect(await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized')).toMatchObject({
      waiting: 0,
      delayed: 0,
      active: 0,
      prioritized: 0,
    });
  });
});
