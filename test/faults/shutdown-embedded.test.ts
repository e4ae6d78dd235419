/**
 * A worker's close with a deadline, in one process on the memory backend: at the deadline the
 * in-flight step's `ctx.signal` is aborted with `WorkerShutdownError`, the execution is handed
 * back (record as it was, a new job queued, lease released once the body returned) and another
 * worker finishes it; a body that ignores its signal is left running with its lease held.
 */
import { describe, expect, test } from 'vitest';
import {
  createEmbeddedEngine,
  createEngine,
  MemoryCoordinator,
  MemoryStore,
  NonRetryableError,
  reactor,
  WorkerShutdownError,
  type ReactorEvent,
} from '../../src/index.js';
import { livenessKey } from '../../src/engine/model/keys.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { createWorker } from '../../src/queue/worker.js';

interface Entry {
  readonly run: number;
  readonly attempt: number;
  readonly enteredAt: number;
  exitedAt?: number;
  reason?: unknown;
}

/** A reactor whose `long` step waits 60 s (or until its signal aborts) on its first run, and returns at once on later ones. */
function longReactor(name: string, options: { readonly ignoreSignal?: Promise<void> } = {}) {
  const entries: Entry[] = [];
  const definition = reactor(name)
    .step('first', { run: () => 'first done' })
    .step('long', {
      waitFor: ['first'],
      run: async (_args, ctx) => {
        const entry: Entry = { run: entries.length + 1, attempt: ctx.attempt, enteredAt: performance.now() };
        entries.push(entry);
        try {
          if (entry.run > 1) return 'done';
          if (options.ignoreSignal) {
            await options.ignoreSignal; // deaf to ctx.signal
            throw new Error('gave up late');
          }
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, 60_000);
            ctx.signal.addEventListener('abort', () => (clearTimeout(timer), reject(ctx.signal.reason as Error)), {
              once: true,
            });
          });
          return 'slept 60 s';
        } catch (error) {
          entry.reason = ctx.signal.reason;
          throw error;
        } finally {
          entry.exitedAt = performance.now();
        }
      },
    })
    .background('all')
    .returns('long');
  return { definition, entries };
}

function pool(checkpointIntervalMs?: number) {
  const memory = createMemoryQueue();
  const coordinator = new MemoryCoordinator();
  const store = new MemoryStore();
  const engine = createEngine({
    store,
    coordinator,
    queue: memory.queue,
    waitList: memory.waitList,
    ...(checkpointIntervalMs === undefined ? {} : { checkpointIntervalMs }),
  });
  const events: ReactorEvent[] = [];
  engine.subscribe((e) => void events.push(e));
  return { memory, coordinator, store, engine, events };
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('worker.close({ timeoutMs }) on the memory backend', () => {
  test('at the deadline the step is interrupted, the execution handed back, and another worker finishes it', async () => {
    const { memory, coordinator, store, engine, events } = pool();
    const { definition, entries } = longReactor('shutdown-handback');
    const first = createWorker({
      engine,
      consumer: memory.consumer,
      reactors: [definition],
      concurrency: 2,
      shutdownTimeoutMs: 150,
    });
    const queued = await engine.start(definition, {});
    await until('the long step to start', () => entries.length === 1);
    await until(
      'the running checkpoint',
      async () => (await store.get(queued.executionId))?.steps['first']?.status === 'completed',
    );
    const before = await store.get(queued.executionId);
    expect(before?.status).toBe('running');

    const began = performance.now();
    const report = await first.close();
    const closeMs = performance.now() - began;
    expect(report).toEqual({ interrupted: 1, abandoned: 0 });
    expect(closeMs).toBeGreaterThanOrEqual(140);
    expect(closeMs).toBeLessThan(10_000); // the body would run 60 s
    expect(entries[0]!.reason).toBeInstanceOf(WorkerShutdownError);
    expect((entries[0]!.reason as WorkerShutdownError).code).toBe('worker_shutdown');

    // Handed back: the record is as it was (no failed step, no rollback), the lease is free, a job is queued.
    const after = await store.get(queued.executionId);
    expect(after?.status).toBe(before?.status);
    expect(after?.steps['long']).toEqual(before?.steps['long']);
    expect(after?.steps['first']?.status).toBe('completed');
    expect(await coordinator.lockState(livenessKey(queued.executionId))).toBeUndefined();
    expect(memory.queue.counts()).toEqual({ ready: 1, delayed: 0, running: 0 });
    const types = events.map((e) => e.type);
    expect(types).not.toContain('step.failed');
    expect(types).not.toContain('step.retrying');
    expect(types).not.toContain('run.rolling_back');
    expect(types).not.toContain('run.failed');
    expect(events.find((e) => e.type === 'run.stopped')).toMatchObject({ reason: 'worker_shutdown' });

    // The next worker resumes it: `first` is not run again; `long`, which the stopped job may have
    // run since its last checkpoint (no starts are written with an interval), is counted and runs
    // again as attempt 2 (decision 118).
    const second = createWorker({ engine, consumer: memory.consumer, concurrency: 2 });
    const done = await engine.wait(queued.executionId, { timeoutMs: 5_000 });
    expect(done.status).toBe('completed');
    expect(done.status === 'completed' ? done.value : undefined).toBe('done');
    expect(done.steps['long']).toMatchObject({ status: 'completed', attempts: 2 });
    expect(done.steps['long']?.runs?.map((r) => r.outcome)).toEqual(['may_have_run', 'succeeded']);
    expect(done.steps['first']?.attempts).toBe(1);
    expect(entries.map((e) => e.attempt)).toEqual([1, 2]);
    expect(entries[1]!.enteredAt).toBeGreaterThanOrEqual(entries[0]!.exitedAt!); // never two bodies at once
    expect(done.trace.find((e) => e.type === 'run.resumed' && e.jobId.includes(':handback:'))).toBeDefined();
    await second.close();
  });

  test('durable mode: the handed-back attempt is recorded interrupted, with the stopped worker, and the next one is attempt 2', async () => {
    const { memory, store, engine, events } = pool(0);
    const { definition, entries } = longReactor('shutdown-handback-durable');
    const first = createWorker({ engine, consumer: memory.consumer, concurrency: 2, shutdownTimeoutMs: 150 });
    const queued = await engine.start(definition, {});
    await until('the long step to start', () => entries.length === 1);
    const started = (await store.get(queued.executionId))?.steps['long']?.started;
    expect(started).toMatchObject({ attempt: 1 });
    expect(await first.close()).toEqual({ interrupted: 1, abandoned: 0 });
    const second = createWorker({ engine, consumer: memory.consumer, concurrency: 2 });
    try {
      const done = await engine.wait(queued.executionId, { timeoutMs: 5_000 });
      expect(done.status).toBe('completed');
      const long = done.steps['long']!;
      expect(long.attempts).toBe(2);
      expect(long.runs?.map((r) => [r.attempt, r.outcome, r.worker])).toEqual([
        [1, 'interrupted', started!.worker],
        [2, 'succeeded', expect.any(String)],
      ]);
      expect(entries.map((e) => e.attempt)).toEqual([1, 2]);
      expect(events.filter((e) => e.type === 'step.attempt_lost')).toEqual([
        expect.objectContaining({ step: 'long', attempt: 1, outcome: 'interrupted' }),
      ]);
    } finally {
      await second.close();
    }
  });

  test('without a deadline, close waits for the in-flight step (graceful stop)', async () => {
    const { memory, engine } = pool();
    const quick = reactor('shutdown-graceful')
      .step('nap', { run: async () => (await new Promise((r) => setTimeout(r, 200)), 'rested') })
      .background('all')
      .returns('nap');
    const worker = createWorker({ engine, consumer: memory.consumer, reactors: [quick] });
    const queued = await engine.start(quick, {});
    await until('the job to run', () => memory.queue.counts().running === 1);
    expect(await worker.close()).toEqual({ interrupted: 0, abandoned: 0 });
    expect((await engine.result(queued.executionId))?.status).toBe('completed');
  });

  test('a body that ignores its signal: close gives up after the grace, and the lease stays held until the body returns', async () => {
    const { memory, coordinator, store, engine, events } = pool();
    let letGo!: () => void;
    const deaf = new Promise<void>((resolve) => (letGo = resolve));
    const { definition, entries } = longReactor('shutdown-deaf', { ignoreSignal: deaf });
    const worker = createWorker({ engine, consumer: memory.consumer, reactors: [definition] });
    const queued = await engine.start(definition, {});
    await until('the long step to start', () => entries.length === 1);

    const began = performance.now();
    const report = await worker.close({ timeoutMs: 50, graceMs: 100 });
    expect(performance.now() - began).toBeLessThan(10_000);
    expect(report).toEqual({ interrupted: 1, abandoned: 1 });
    // The body may still run: its execution's liveness lease is not released (it lapses if the process exits).
    expect(await coordinator.lockState(livenessKey(queued.executionId))).toBeDefined();
    expect(memory.queue.counts().ready).toBe(0);

    letGo(); // the body returns at last: now the execution is handed back, never failed
    await until(
      'the lease to be released',
      async () => (await coordinator.lockState(livenessKey(queued.executionId))) === undefined,
    );
    expect(memory.queue.counts().ready).toBe(1);
    expect((await store.get(queued.executionId))?.status).not.toBe('failed');
    expect(events.map((e) => e.type)).not.toContain('step.failed');
  });

  test('a rollback under way at the deadline is not cut short: the run ends failed, rolled back, as it would have', async () => {
    const { memory, store, engine } = pool();
    const undone: string[] = [];
    let undoing = false;
    const failing = reactor('shutdown-rollback')
      .step('reserve', {
        run: () => 'reserved',
        undo: async () => {
          undoing = true;
          await new Promise((r) => setTimeout(r, 300)); // the deadline passes while this runs
          undone.push('reserve');
        },
      })
      .step('charge', {
        waitFor: ['reserve'],
        run: () => {
          throw new NonRetryableError('card declined');
        },
      })
      .background('all')
      .returns('charge');
    const worker = createWorker({ engine, consumer: memory.consumer, reactors: [failing] });
    const queued = await engine.start(failing, {});
    await until('the undo to start', () => undoing);
    expect(await worker.close({ timeoutMs: 50 })).toEqual({ interrupted: 1, abandoned: 0 });
    expect(undone).toEqual(['reserve']);
    const record = await store.get(queued.executionId);
    expect(record?.status).toBe('failed');
    expect(record?.failedStep).toBe('charge');
    expect(memory.queue.counts().ready).toBe(0); // nothing handed back
  });

  test('the embedded engine closes with a deadline too', async () => {
    const engine = createEmbeddedEngine();
    const { definition, entries } = longReactor('shutdown-embedded');
    const queued = await engine.start(definition, {});
    await until('the long step to start', () => entries.length === 1);
    const began = performance.now();
    await engine.close({ timeoutMs: 100 });
    expect(performance.now() - began).toBeLessThan(10_000);
    expect(entries[0]!.reason).toBeInstanceOf(WorkerShutdownError);
    expect((await engine.result(queued.executionId))?.status).not.toBe('failed');
  });

  test('a bad deadline is refused', () => {
    const { memory, engine } = pool();
    expect(() => createWorker({ engine, consumer: memory.consumer, shutdownTimeoutMs: -1 })).toThrow(RangeError);
  });
});
