/**
 * Versioned definitions on the manual clock (decision 082): a job left for another version comes
 * back every `parkFallbackMs` of engine time, the wait is written once, and a worker with the
 * definition continues the execution at its retry's due time.
 */
import { afterEach, expect, test } from 'vitest';
import { MemoryCoordinator, MemoryStore, reactor, type AnyReactorDefinition } from '../../src/index.js';
import { executionJob } from '../../src/engine/execution/next-job.js';
import { ManualClock } from '../../src/testing/clock.js';
import { createWorker, type Worker } from '../../src/queue/worker.js';
import { eventsOf, manualEngine, type Manual } from './helpers.js';

const workers: Worker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.close().catch(() => undefined);
});

let failures = 1;
const calls: string[] = [];
const v1: AnyReactorDefinition = reactor('clocked-flow', { version: '1' })
  .step('a', { run: () => (calls.push('a@1'), 1) })
  .step('b', {
    waitFor: ['a'],
    retry: { maxAttempts: 3, baseDelay: '10s' },
    run: () => {
      calls.push('b@1');
      if (failures-- > 0) throw new Error('flaky');
      return 2;
    },
  })
  .build();
const v2: AnyReactorDefinition = reactor('clocked-flow', { version: '2' })
  .step('a2', { run: () => (calls.push('a2@2'), 1) })
  .step('b', { waitFor: ['a2'], run: () => (calls.push('b@2'), 2) })
  .build();

/** Lets the event loop turn a few times (virtual time stands still), then waits for the pool to settle. */
async function settle(m: Pick<Manual, 'memory' | 'engine'>): Promise<void> {
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    await m.memory.queue.settled();
    await m.engine.idle();
  }
}

test('a v2-only worker re-checks every parkFallbackMs without writing again; a worker with v1 completes it at its due time', async () => {
  const clock = new ManualClock({ autoAdvance: false });
  const store = new MemoryStore({ clock });
  const coordinator = new MemoryCoordinator({ clock });
  const shared = { clock, store, coordinator, checkpointIntervalMs: 0 };
  const first = manualEngine({ ...shared, queueOptions: { clock }, reactors: [v1] });
  const w1 = first.startWorker();
  const id = (await first.engine.start(v1, {})).executionId;
  await settle(first);
  const parked = (await store.get(id))!;
  expect(parked.steps['b']).toMatchObject({ status: 'retrying', attempts: 1 });
  await w1.close();

  const only2 = manualEngine({ ...shared, queueOptions: { clock }, reactors: [v2] });
  workers.push(only2.startWorker());
  await only2.memory.queue.enqueue(executionJob(id, 'clocked-flow'), { jobId: `${id}:moved` });
  await settle(only2);
  expect(eventsOf(only2.events, 'run.version_unavailable')).toHaveLength(1);
  const waiting = (await store.get(id))!;
  expect(waiting.background?.waitingForVersion).toMatchObject({ version: '1', since: clock.now() });
  clock.advance(5_000); // the default parkFallbackMs
  await settle(only2);
  expect(eventsOf(only2.events, 'run.version_unavailable')).toHaveLength(2);
  expect((await store.get(id))!.updatedAt).toBe(waiting.updatedAt); // written once
  expect((await store.get(id))!.steps).toEqual(parked.steps);
  await workers.pop()!.close();

  const both = manualEngine({ ...shared, queue: only2.memory.queue, reactors: [v1, v2] });
  workers.push(createWorker({ engine: both.engine, consumer: only2.memory.consumer }));
  clock.advance(5_000); // the next check: now on a worker with v1, at b's due time
  await settle(only2);
  await settle(both);
  expect((await store.get(id))!.status).toBe('completed');
  expect(calls).toEqual(['a@1', 'b@1', 'b@1']);
});
