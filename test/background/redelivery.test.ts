/**
 * At-least-once delivery (R5 of the quality bars, issue 4 §6): a job delivered twice, or again
 * after its execution finished, runs no completed step's body again, charges a rate limit once,
 * marks a period once and changes no outcome. And a composed child's retry in a worker resumes
 * without re-running the child's completed steps.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { reactor, type ExecutionJob, type JobQueue, type PeriodMarkRequest } from '../../src/index.js';
import { createWorker, type Worker } from '../../src/queue/worker.js';
import { eventsOf, gate, manualEngine, sleep, untilStatus, type Manual } from './helpers.js';

let seq = 0;
const fresh = (name: string): string => `${name}:${++seq}:${Date.now()}`;

/** Wraps a queue so that every job is enqueued twice, the copy under another id. */
function duplicating(queue: JobQueue, copies: string[]): JobQueue {
  return {
    enqueue: async (job: ExecutionJob, options) => {
      await queue.enqueue(job, options);
      copies.push(`${options.jobId}:dup`);
      await queue.enqueue(job, { ...options, jobId: `${options.jobId}:dup` });
    },
    promote: (jobId) => queue.promote(jobId),
    close: () => queue.close(),
  };
}

function counting() {
  const bodies: Record<string, number> = {};
  const count = (name: string): void => void (bodies[name] = (bodies[name] ?? 0) + 1);
  return { bodies, count };
}

describe('8. at-least-once redelivery', () => {
  test('every job delivered twice: no body runs twice, the rate limit is charged once, the period marked once, the outcome unchanged', async () => {
    const rateKey = fresh('rate');
    const periodKey = fresh('period');
    const lockKey = fresh('lock');
    const copies: string[] = [];
    const { bodies, count } = counting();
    const base = manualEngine({ background: { parkFallbackMs: 200 } });
    const m = manualEngine({
      coordinator: base.coordinator,
      queue: duplicating(base.memory.queue, copies),
      waitList: base.memory.waitList,
      background: { parkFallbackMs: 200 },
    });
    const marks: PeriodMarkRequest[] = [];
    const mark = m.coordinator.periodMark.bind(m.coordinator);
    m.coordinator.periodMark = async (request) => (marks.push(request), mark(request));
    let flaky = 0;
    const r = reactor('dup')
      .input({ n: z.number() })
      .withRateLimit({ key: () => rateKey, limit: 5, per: '10s' })
      .withPeriod({ key: () => periodKey, every: 'day' })
      .withLock({ key: () => lockKey })
      .step('a', { args: ($) => ({ n: $.input('n') }), run: async ({ n }) => (count('a'), await sleep(5), n + 1) })
      .step('b', {
        args: ($) => ({ v: $.result('a') }),
        retry: { maxAttempts: 3, baseDelay: 20 },
        run: ({ v }) => {
          count('b');
          if (++flaky < 2) throw new Error('flaky');
          return v * 10;
        },
      })
      .step('c', { args: ($) => ({ v: $.result('b') }), run: ({ v }) => (count('c'), v + 1) })
      .returns('c');
    // A queue-level consumer over the base memory queue processes both the originals and the copies.
    const worker = createWorkerOn(m, base);
    try {
      const started = await m.engine.start(r, { n: 1 });
      const done = await m.engine.wait(started.executionId, { timeoutMs: 3_000, pollMs: 5 });
      expect(done?.status === 'completed' && done.value).toBe(21);
      await base.memory.drain(); // every copy has been delivered and processed by now
      expect(copies.length).toBeGreaterThanOrEqual(2); // the start job and the retry job, at least
      expect(bodies).toEqual({ a: 1, b: 2, c: 1 });
      expect((await m.coordinator.rateState(rateKey, 10_000)).count).toBe(1);
      expect(marks).toHaveLength(1);
      const after = await m.engine.result(started.executionId);
      expect(after?.status === 'completed' && after.value).toBe(21);
      expect(after?.steps['b']).toMatchObject({ status: 'completed', attempts: 2 });
      expect(await m.coordinator.lockState(lockKey)).toBeUndefined();
    } finally {
      await worker.stop();
    }
  });

  test('a job processed again after its execution completed does nothing and changes nothing', async () => {
    const rateKey = fresh('rate');
    const { bodies, count } = counting();
    const m = manualEngine();
    const r = reactor('again')
      .withRateLimit({ key: () => rateKey, limit: 5, per: '10s' })
      .step('a', { run: () => (count('a'), 'A') })
      .returns('a');
    const worker = m.startWorker();
    const started = await m.engine.start(r, {});
    await m.engine.wait(started.executionId, { timeoutMs: 2_000, pollMs: 5 });
    await worker.stop();
    const before = await m.store.get(started.executionId);
    for (let delivery = 2; delivery <= 3; delivery++) {
      await m.engine.process(
        { v: 1, executionId: started.executionId, reactor: 'again' },
        { jobId: `${started.executionId}:1`, delivery },
      );
    }
    expect(bodies).toEqual({ a: 1 });
    expect((await m.coordinator.rateState(rateKey, 10_000)).count).toBe(1);
    expect(await m.store.get(started.executionId)).toEqual(before);
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
  });

  test('two deliveries of one job at the same time in two workers: one runs the execution, the other backs off; each body runs once', async () => {
    const { bodies, count } = counting();
    const a = manualEngine({ background: { parkFallbackMs: 100 } });
    const b = manualEngine({ store: a.store, coordinator: a.coordinator, background: { parkFallbackMs: 100 } });
    const inside = gate();
    const go = gate();
    const r = reactor('concurrent-dup')
      .step('a', { run: async () => (count('a'), inside.open(), await go.promise, 'A') })
      .step('b', { args: ($) => ({ a: $.result('a') }), run: ({ a }) => (count('b'), `${a}B`) })
      .returns('b');
    a.engine.register(r);
    b.engine.register(r);
    const started = await a.engine.start(r, {});
    const id = started.executionId;
    const job = { v: 1 as const, executionId: id, reactor: 'concurrent-dup' };
    const one = a.engine.process(job, { jobId: `${id}:1`, delivery: 1 });
    await inside.promise;
    await b.engine.process(job, { jobId: `${id}:1`, delivery: 2 }); // returns at once: another worker has the execution
    expect(bodies).toEqual({ a: 1 });
    expect(eventsOf(b.events, 'run.resumed')).toEqual([]);
    expect(b.memory.queue.counts()).toEqual({ ready: 0, delayed: 1, running: 0 }); // it comes back later
    go.open();
    await one;
    expect((await a.engine.result(id))?.status).toBe('completed');
    const workers = [a.startWorker(), b.startWorker()];
    try {
      await Promise.all([a.memory.drain(), b.memory.drain()]);
      expect(bodies).toEqual({ a: 1, b: 1 });
      const result = await b.engine.result(id);
      expect(result?.status === 'completed' && result.value).toBe('AB');
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  });

  test('a parked execution delivered twice (its wake job and a stray copy) still runs its steps once', async () => {
    const lockKey = fresh('lock');
    const copies: string[] = [];
    const { bodies, count } = counting();
    const base = manualEngine();
    const m = manualEngine({
      coordinator: base.coordinator,
      queue: duplicating(base.memory.queue, copies),
      waitList: base.memory.waitList,
      background: { parkFallbackMs: 60 },
    });
    const holderIn = gate();
    const holding = gate();
    const holder = reactor('holder')
      .withLock({ key: () => lockKey })
      .step('h', { run: async () => (holderIn.open(), await holding.promise) })
      .build();
    const r = reactor('parks')
      .withLock({ key: () => lockKey })
      .step('a', { run: () => (count('a'), 1) })
      .step('b', { waitFor: ['a'], run: () => (count('b'), 2) })
      .build();
    const worker = createWorkerOn(m, base);
    try {
      const held = m.engine.run(holder, {});
      await holderIn.promise;
      const started = await m.engine.start(r, {});
      await untilStatus(m.engine, started.executionId, 'parked');
      await sleep(150); // fallback jobs and their copies come back and park again
      holding.open();
      await held;
      expect((await m.engine.wait(started.executionId, { timeoutMs: 3_000, pollMs: 5 }))?.status).toBe('completed');
      await base.memory.drain();
      expect(bodies).toEqual({ a: 1, b: 1 });
      expect(copies.some((c) => c.endsWith(':2:dup'))).toBe(true);
    } finally {
      await worker.stop();
    }
  });
});

describe('11. a composed child retry inside a worker', () => {
  test('resumes in a new job without re-running the child’s completed steps nor the parent’s', async () => {
    const { bodies, count } = counting();
    const attempts: number[] = [];
    const child = reactor('child')
      .input({ x: z.number() })
      .step('c1', { args: ($) => ({ x: $.input('x') }), run: ({ x }) => (count('c1'), x + 1) })
      .step('c2', {
        args: ($) => ({ y: $.result('c1') }),
        retry: { maxAttempts: 3, baseDelay: 20 },
        run: ({ y }, ctx) => {
          count('c2');
          attempts.push(ctx.attempt);
          if (ctx.attempt < 3) throw new Error('child flake');
          return y * 2;
        },
      })
      .returns('c2');
    const parent = reactor('parent')
      .input({ x: z.number() })
      .step('p1', { args: ($) => ({ x: $.input('x') }), run: ({ x }) => (count('p1'), x) })
      .compose('sub', child, { args: ($) => ({ x: $.result('p1') }) })
      .step('p2', { args: ($) => ({ v: $.result('sub') }), run: ({ v }) => (count('p2'), v + 100) })
      .returns('p2');
    const m = manualEngine();
    const worker = m.startWorker();
    try {
      const started = await m.engine.start(parent, { x: 4 });
      const done = await m.engine.wait(started.executionId, { timeoutMs: 3_000, pollMs: 5 });
      expect(done?.status === 'completed' && done.value).toBe(110);
      expect(bodies).toEqual({ p1: 1, c1: 1, c2: 3, p2: 1 });
      expect(attempts).toEqual([1, 2, 3]);
      const id = started.executionId;
      const trace = done?.trace ?? [];
      expect(eventsOf(trace, 'run.resumed').map((e) => e.jobId)).toEqual([`${id}:1`, `${id}:2`, `${id}:3`]);
      expect(eventsOf(trace, 'step.retrying').map((e) => [e.step, e.attempt])).toEqual([
        ['sub.c2', 2],
        ['sub.c2', 3],
      ]);
      expect(eventsOf(trace, 'step.started').filter((e) => e.step === 'sub.c1')).toHaveLength(1);
      expect(done?.steps['sub.c2']).toMatchObject({ status: 'completed', attempts: 3 });
      expect(done?.steps['sub']).toMatchObject({ status: 'completed' });
      expect(
        eventsOf(m.events, 'run.queued')
          .filter((e) => e.executionId === id)
          .map((e) => e.reason),
      ).toEqual(['start', 'retry', 'retry']);
    } finally {
      await worker.stop();
    }
  });

  test('a failure after the retried child undoes the child’s steps once each, newest first', async () => {
    const undone: string[] = [];
    const child = reactor('child2')
      .step('c1', { run: () => 1, undo: () => void undone.push('c1') })
      .step('c2', {
        waitFor: ['c1'],
        retry: { maxAttempts: 2, baseDelay: 10 },
        run: (_i, ctx) => (ctx.attempt < 2 ? Promise.reject(new Error('flake')) : 2),
        undo: () => void undone.push('c2'),
      })
      .returns('c2');
    const parent = reactor('parent2')
      .step('p1', { run: () => 0, undo: () => void undone.push('p1') })
      .compose('sub', child, { waitFor: ['p1'] })
      .step('boom', { waitFor: ['sub'], run: () => Promise.reject(new Error('boom')) })
      .build();
    const m = manualEngine();
    const worker = m.startWorker();
    try {
      const started = await m.engine.start(parent, {});
      const done = await m.engine.wait(started.executionId, { timeoutMs: 3_000, pollMs: 5 });
      expect(done?.status === 'failed' && done.failedStep).toBe('boom');
      expect(undone).toEqual(['c2', 'c1', 'p1']);
    } finally {
      await worker.stop();
    }
  });
});

/** A worker for engine `m` consuming `base`'s memory queue (where `m`'s duplicating queue enqueues). */
function createWorkerOn(m: Manual, base: Manual): Worker {
  return createWorker({ engine: m.engine, consumer: base.memory.consumer, concurrency: 8 });
}
