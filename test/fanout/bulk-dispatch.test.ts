/**
 * A fan-out map's element jobs are enqueued in bulk: the first batch in one `enqueueMany` call
 * (memory queue, counted by a spy), each later element by the settlement that frees its slot;
 * a queue without `enqueueMany` gets them one `enqueue` at a time, with the same result.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEngine,
  defineStep,
  MemoryCoordinator,
  MemoryFanOutLedger,
  MemoryStore,
  reactor,
} from '../../src/index.js';
import type { EnqueueEntry, JobQueue } from '../../src/ports/queue.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { createWorker } from '../../src/queue/worker.js';

const SIZE = 50;
const BATCH = 20;

const double = defineStep({ input: { n: z.number().int() }, run: ({ n }) => n * 2 });
const doubling = reactor('bulk-dispatch')
  .input({ xs: z.array(z.number().int()) })
  .map('m', { source: ($) => $.input('xs'), each: double, args: (n) => ({ n }), fanOut: { batchSize: BATCH } })
  .returns('m');

/** `queue` with its calls counted: the entries of each `enqueueMany`, the ids of each `enqueue`; `bulk: false` hides `enqueueMany`. */
function spied(queue: JobQueue, bulk: boolean): { queue: JobQueue; batches: string[][]; singles: string[] } {
  const batches: string[][] = [];
  const singles: string[] = [];
  const counted: JobQueue = {
    enqueue: (job, options) => (singles.push(options.jobId), queue.enqueue(job, options)),
    promote: (jobId) => queue.promote(jobId),
    jobStates: (jobIds) => queue.jobStates!(jobIds),
    close: () => queue.close(),
    ...(bulk
      ? {
          enqueueMany: (entries: readonly EnqueueEntry[]) => {
            batches.push(entries.map((e) => e.options.jobId));
            return queue.enqueueMany!(entries);
          },
        }
      : {}),
  };
  return { queue: counted, batches, singles };
}

/** An engine over a memory queue seen through the spy, and a worker on that queue. */
function setup(bulk: boolean) {
  const memory = createMemoryQueue();
  const spy = spied(memory.queue, bulk);
  const engine = createEngine({
    store: new MemoryStore(),
    coordinator: new MemoryCoordinator(),
    queue: spy.queue,
    waitList: memory.waitList,
    fanOut: new MemoryFanOutLedger(),
    background: { workerWaitMs: 0 },
  });
  const worker = createWorker({ engine, consumer: memory.consumer, concurrency: 8 });
  return { engine, worker, spy };
}

describe('fan-out: element jobs enqueued in bulk', () => {
  for (const bulk of [true, false])
    test(
      bulk
        ? `${SIZE} elements, batch ${BATCH}: the first ${BATCH} element jobs in one enqueueMany, the rest one per settlement`
        : 'a queue without enqueueMany: the first batch one enqueue at a time, same result',
      async () => {
        const { engine, worker, spy } = setup(bulk);
        try {
          const xs = Array.from({ length: SIZE }, (_, i) => i);
          const { executionId } = await engine.start(doubling, { xs });
          const result = await engine.wait(executionId, { timeoutMs: 10_000, pollMs: 5 });
          expect(result.status === 'completed' && (result.value as { values: number[] }).values).toEqual(
            xs.map((x) => x * 2),
          );
          const first = (i: number): string => `${executionId}/m[${i}]:1`;
          const elementSingles = spy.singles.filter((id) => id.includes('/m['));
          if (bulk) {
            expect(spy.batches).toEqual([Array.from({ length: BATCH }, (_, i) => first(i))]);
            // Each later element once, by the settlement that freed its slot (in settlement order).
            expect([...elementSingles].sort(byIndex)).toEqual(
              Array.from({ length: SIZE - BATCH }, (_, i) => first(BATCH + i)),
            );
          } else {
            expect(spy.batches).toEqual([]);
            expect(elementSingles.slice(0, BATCH)).toEqual(Array.from({ length: BATCH }, (_, i) => first(i)));
            expect(elementSingles).toHaveLength(SIZE);
          }
        } finally {
          await worker.close();
          await engine.idle();
        }
      },
    );
});

function byIndex(a: string, b: string): number {
  const index = (id: string): number => Number(/\[(\d+)\]/.exec(id)![1]);
  return index(a) - index(b);
}
