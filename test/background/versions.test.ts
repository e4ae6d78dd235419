/**
 * Versioned definitions (decision 082): a worker runs a persisted execution only on the definition
 * its record names (or one that migrates from it); without it the job is left for another worker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { reactor, ReactorError, type AnyReactorDefinition, type ExecutionRecord } from '../../src/index.js';
import { executionJob } from '../../src/engine/execution/next-job.js';
import { createWorker, type Worker } from '../../src/queue/worker.js';
import { eventsOf, manualEngine, until, untilStatus } from './helpers.js';
import { summaryOf } from '../../src/ops/executions.js';
import { executionLine } from '../../src/cli/ops-format.js';

const calls: string[] = [];
let bFailures = 0;

/** v1: a → b; b fails its first attempt and retries after 150 ms. */
function v1(version: string | undefined = '1'): AnyReactorDefinition {
  return reactor('flow', version === undefined ? {} : { version })
    .step('a', { run: () => (calls.push('a@1'), 1), undo: () => void calls.push('undo a@1') })
    .step('b', {
      waitFor: ['a'],
      retry: { maxAttempts: 3, baseDelay: 150 },
      run: () => {
        calls.push('b@1');
        if (bFailures-- > 0) throw new Error('flaky');
        return 2;
      },
    })
    .build();
}

/** v2: a renamed a2 → b. */
function v2(options: Parameters<typeof reactor>[1] = { version: '2' }, tag = '2'): AnyReactorDefinition {
  return reactor('flow', options)
    .step('a2', { run: () => (calls.push(`a2@${tag}`), 1), undo: () => void calls.push(`undo a2@${tag}`) })
    .step('b', { waitFor: ['a2'], run: () => (calls.push(`b@${tag}`), 2) })
    .build();
}

const workers: Worker[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.close().catch(() => undefined);
  calls.length = 0;
  bFailures = 0;
});

/** A v1 execution parked in b's retry delay, its worker stopped; returns the shared store and coordinator. */
async function parkedInRetry() {
  const first = manualEngine({ reactors: [v1()] });
  const worker = first.startWorker();
  bFailures = 1;
  const started = await first.engine.start(v1(), {});
  const id = started.executionId;
  await until(async () => (await first.store.get(id))?.steps['b']?.status === 'retrying', 3_000, 'b retrying');
  await worker.close();
  const record = (await first.store.get(id))!;
  expect(record.status).toBe('pending');
  return { id, store: first.store, coordinator: first.coordinator, record };
}

describe('versioned definitions', () => {
  it('records carry the fingerprint and version of the definition they started with', async () => {
    const m = manualEngine();
    workers.push(m.startWorker());
    const def = v2();
    const started = await m.engine.start(def, {});
    await untilStatus(m.engine, started.executionId, 'completed');
    const record = (await m.store.get(started.executionId))!;
    expect(record.fingerprint).toBe(def.fingerprint);
    expect(record.version).toBe('2');
  });

  it('a worker without the execution’s definition runs nothing and reports the version it waits for', async () => {
    const { id, store, coordinator, record } = await parkedInRetry();
    const only2 = manualEngine({ store, coordinator, reactors: [v2()], background: { parkFallbackMs: 40 } });
    workers.push(only2.startWorker());
    await only2.memory.queue.enqueue(executionJob(id, 'flow'), { jobId: `${id}:test` });
    await until(() => eventsOf(only2.events, 'run.version_unavailable').length >= 2, 3_000, 'version waits');
    const event = eventsOf(only2.events, 'run.version_unavailable')[0]!;
    expect(event).toMatchObject({ executionId: id, fingerprint: record.fingerprint, version: '1', delayMs: 40 });
    const waiting = (await store.get(id))!;
    expect(waiting.status).toBe('pending');
    expect(waiting.steps).toEqual(record.steps); // no attempt counted, nothing run
    expect(waiting.background?.waitingForVersion).toMatchObject({ fingerprint: record.fingerprint, version: '1' });
    expect(calls.filter((c) => c.includes('@2'))).toEqual([]);
    // What the dashboard and the CLI show of it.
    const summary = summaryOf(waiting);
    expect(summary).toMatchObject({ version: '1', waitingForVersion: { version: '1' } });
    expect(executionLine(summary)).toContain(`waiting for version 1 (fingerprint ${record.fingerprint!})`);
  });

  it('side by side: the v1 execution finishes on v1 while a new start runs v2', async () => {
    const { id, store, coordinator, record } = await parkedInRetry();
    const only2 = manualEngine({ store, coordinator, reactors: [v2()], background: { parkFallbackMs: 40 } });
    const w2 = only2.startWorker();
    await only2.memory.queue.enqueue(executionJob(id, 'flow'), { jobId: `${id}:test` });
    await until(() => eventsOf(only2.events, 'run.version_unavailable').length > 0, 3_000, 'a version wait');
    await w2.close();
    // A rolling deploy: a worker with both definitions takes the left job over the same queue.
    const both = manualEngine({
      store,
      coordinator,
      queue: only2.memory.queue,
      reactors: [v1(), v2()],
      background: { parkFallbackMs: 40 },
    });
    workers.push(createWorker({ engine: both.engine, consumer: only2.memory.consumer }));
    const done = await untilStatus(both.engine, id, 'completed');
    expect(done.status).toBe('completed');
    const finished = (await store.get(id))!;
    expect(finished.fingerprint).toBe(record.fingerprint);
    expect(finished.steps['b']?.attempts).toBe(2);
    expect(finished.background?.waitingForVersion).toBeUndefined();
    expect(Object.keys(finished.steps).sort()).toEqual(['a', 'b']);
    const fresh = await both.engine.start(v2(), {});
    await untilStatus(both.engine, fresh.executionId, 'completed');
    expect((await store.get(fresh.executionId))!.version).toBe('2');
    expect(calls).toEqual(['a@1', 'b@1', 'b@1', 'a2@2', 'b@2']);
  });

  it('a definition that migrates from version 1 continues its execution with the steps renamed', async () => {
    const { id, store, coordinator } = await parkedInRetry();
    const v3 = v2({ version: '3', migrateFrom: [{ version: '1', renamed: { a: 'a2' } }] }, '3');
    const m = manualEngine({ store, coordinator, reactors: [v3] });
    workers.push(m.startWorker());
    await m.memory.queue.enqueue(executionJob(id, 'flow'), { jobId: `${id}:test` });
    await untilStatus(m.engine, id, 'completed');
    const finished = (await store.get(id))!;
    expect(finished.fingerprint).toBe(v3.fingerprint);
    expect(finished.version).toBe('3');
    expect(finished.steps['a2']?.status).toBe('completed');
    expect(calls).toEqual(['a@1', 'b@1', 'b@3']); // a2 not run again: it is a's record
    expect(eventsOf(m.events, 'run.version_unavailable')).toEqual([]);
  });

  it('undo uses the definition the execution ran with; without it undo is refused with version_unavailable', async () => {
    const first = manualEngine({ reactors: [v1()] });
    const ran = await first.engine.run(v1(), {});
    expect(ran.status).toBe('completed');
    const { store, coordinator } = first;
    const without = manualEngine({ store, coordinator, reactors: [v2()] });
    const refused = await without.engine.undo(ran.executionId).catch((e: unknown) => e);
    expect(ReactorError.is(refused, 'version_unavailable')).toBe(true);
    expect((refused as ReactorError<'version_unavailable'>).details).toMatchObject({ version: '1', reactor: 'flow' });
    const both = manualEngine({ store, coordinator, reactors: [v1(), v2()] });
    const undone = await both.engine.undo(ran.executionId);
    expect(undone.status).toBe('cancelled');
    expect(calls).toEqual(['a@1', 'b@1', 'undo a@1']);
  });

  it('retry of a v1 execution starts a new execution on the current definition, linked to it', async () => {
    bFailures = 10;
    const one = v1();
    const first = manualEngine({ reactors: [one] });
    const ran = await first.engine.run(one, {});
    expect(ran.status).toBe('failed');
    const both = manualEngine({ store: first.store, coordinator: first.coordinator, reactors: [one, v2()] });
    workers.push(both.startWorker());
    const retried = await both.engine.retry(ran.executionId);
    await untilStatus(both.engine, retried.executionId, 'completed');
    const record = (await first.store.get(retried.executionId))!;
    expect(record).toMatchObject({ version: '2', retryOf: ran.executionId } satisfies Partial<ExecutionRecord>);
  });

  it('an asyncReactor child execution carries the fingerprint of the child definition', async () => {
    const kid = reactor('kid', { version: 'k1' })
      .step('k', { run: () => 1 })
      .build();
    const parent = reactor('parent')
      .asyncReactor('kid', kid)
      .step('after', { waitFor: ['kid'], run: () => 2 })
      .build();
    const m = manualEngine();
    workers.push(m.startWorker());
    const started = await m.engine.start(parent, {});
    await untilStatus(m.engine, started.executionId, 'completed');
    const childId = (await m.store.get(started.executionId))!.steps['kid']!.unitId!;
    expect((await m.store.get(childId))!).toMatchObject({ fingerprint: kid.fingerprint, version: 'k1' });
  });

  it('a record without a fingerprint (written before versioned definitions) runs on the registered definition', async () => {
    const { id, store, coordinator, record } = await parkedInRetry();
    const { fingerprint: _f, version: _v, ...legacy } = record;
    await store.save(legacy);
    const m = manualEngine({ store, coordinator, reactors: [v1(undefined)] });
    workers.push(m.startWorker());
    await m.memory.queue.enqueue(executionJob(id, 'flow'), { jobId: `${id}:test` });
    await untilStatus(m.engine, id, 'completed');
    expect((await store.get(id))!.fingerprint).toBeUndefined();
  });
});
