/**
 * Start options on the memory backend with a manual clock (docs/decisions/078, 079): a delayed
 * start stays queued until its time and then runs, `at` in the past runs at once, idempotency
 * with a delayed start, bad values refused before anything is written, priorities on the
 * embedded pool (kept across a retry and a park), and `startMany` (order, an invalid entry
 * isolated, one bulk enqueue). No test sleeps: the clock is advanced by hand.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEmbeddedEngine,
  MemoryCoordinator,
  MemoryStore,
  reactor,
  type EngineOptions,
  StartOptionsError,
  type EnqueueEntry,
  type EnqueueOptions,
  type JobQueue,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/clock.js';
import { createWorker } from '../../src/queue/worker.js';
import { gate, manualEngine, type Manual } from './helpers.js';

const T0 = Date.UTC(2026, 0, 1);

/** A manual clock that moves only when the test advances it. */
const clockAt = (): ManualClock => new ManualClock({ start: T0, autoAdvance: false });

/** The memory queue with every enqueue recorded (options, and the bulk calls). */
function spied(queue: JobQueue): { queue: JobQueue; enqueued: EnqueueOptions[]; bulk: EnqueueEntry[][] } {
  const enqueued: EnqueueOptions[] = [];
  const bulk: EnqueueEntry[][] = [];
  return {
    enqueued,
    bulk,
    queue: {
      ...queue,
      enqueue: (job, options) => (enqueued.push(options), queue.enqueue(job, options)),
      enqueueMany: (entries) => (bulk.push([...entries]), queue.enqueueMany!(entries)),
      promote: (jobId) => queue.promote(jobId),
      jobStates: (ids) => queue.jobStates!(ids),
      close: () => queue.close(),
    },
  };
}

/** Lets the event loop turn `n` times (no timer: virtual time stands still). */
async function turns(n = 30): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Lets the event loop turn a few times (no timer: virtual time stands still), then waits for the pool to settle. */
async function settle(m: Pick<Manual, 'memory' | 'engine'>): Promise<void> {
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    await m.memory.queue.settled();
    await m.engine.idle();
  }
}

/** An engine over the memory queue, store and coordinator, all on `clock`; its worker is started by hand. */
function clocked(clock: ManualClock, options: Partial<EngineOptions> = {}): Manual {
  return manualEngine({
    clock,
    queueOptions: { clock },
    store: new MemoryStore({ clock }),
    coordinator: new MemoryCoordinator({ clock }),
    checkpointIntervalMs: 0,
    ...options,
  });
}

/** An engine whose queue is the memory queue with every enqueue recorded; its worker is started by hand. */
function spiedEngine(clock: ManualClock, background: Record<string, number> = {}) {
  const base = clocked(clock);
  const spy = spied(base.memory.queue);
  const m = manualEngine({
    clock,
    queueOptions: { clock },
    checkpointIntervalMs: 0,
    store: base.store,
    coordinator: base.coordinator,
    queue: spy.queue,
    waitList: base.memory.waitList,
    background,
  });
  const startWorker = (concurrency: number) =>
    createWorker({ engine: m.engine, consumer: base.memory.consumer, concurrency });
  return { ...m, memory: base.memory, spy, startWorker };
}

/** A reactor that records its runs by input `id`. */
function recorder(runs: string[], name = 'delayed') {
  return reactor(name)
    .input({ id: z.string() })
    .step('work', { args: ($) => ({ id: $.input('id') }), run: ({ id }) => (runs.push(id), id) })
    .returns('work');
}

describe('a delayed start (memory, manual clock)', () => {
  test('stays queued with its start time until then, then runs', async () => {
    const clock = clockAt();
    const runs: string[] = [];
    const m = clocked(clock);
    m.startWorker(2);
    const r = recorder(runs);
    const queued = await m.engine.start(r, { id: 'a' }, { delay: '5m' });
    expect(queued).toMatchObject({ status: 'queued', startAt: T0 + 300_000 });
    await settle(m);
    expect(m.memory.queue.counts()).toMatchObject({ ready: 0, delayed: 1, running: 0 });
    expect(await m.engine.result(queued.executionId)).toMatchObject({ status: 'queued', startAt: T0 + 300_000 });
    clock.advance(299_999);
    await settle(m);
    expect(runs).toEqual([]);
    clock.advance(1);
    await settle(m);
    expect(runs).toEqual(['a']);
    const done = await m.engine.result(queued.executionId);
    expect(done).toMatchObject({ status: 'completed', value: 'a' });
    expect(done).not.toHaveProperty('startAt');
    expect(done?.trace.find((e) => e.type === 'run.queued')).toMatchObject({ delayMs: 300_000, reason: 'start' });
  });

  test('cancelled before its time: it ends cancelled and its delayed job is removed, so nothing is delivered', async () => {
    const clock = clockAt();
    const runs: string[] = [];
    const m = clocked(clock);
    m.startWorker(2);
    const queued = await m.engine.start(recorder(runs), { id: 'a' }, { delay: '5m' });
    await settle(m);
    expect(m.memory.queue.counts()).toMatchObject({ delayed: 1 });
    expect(await m.engine.cancel(queued.executionId, { reason: 'not needed' })).toMatchObject({ status: 'cancelled' });
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
    clock.advance(300_000);
    await settle(m);
    expect(runs).toEqual([]);
    expect(await m.engine.result(queued.executionId)).toMatchObject({ status: 'cancelled' });
  });

  test('`at` a Date in the future waits for it; `at` in the past runs at once (no startAt)', async () => {
    const clock = clockAt();
    const runs: string[] = [];
    const m = clocked(clock);
    m.startWorker(2);
    const r = recorder(runs);
    const later = await m.engine.start(r, { id: 'later' }, { at: new Date(T0 + 1_000) });
    const past = await m.engine.start(r, { id: 'past' }, { at: T0 - 60_000 });
    expect(later).toMatchObject({ status: 'queued', startAt: T0 + 1_000 });
    expect(past.status).toBe('queued');
    expect(past).not.toHaveProperty('startAt');
    await settle(m);
    expect(runs).toEqual(['past']);
    clock.advance(1_000);
    await settle(m);
    expect(runs).toEqual(['past', 'later']);
  });

  test('an early delivery of a delayed start waits for its time (the record says when it is due)', async () => {
    const clock = clockAt();
    const runs: string[] = [];
    const m = clocked(clock);
    m.startWorker(1);
    const queued = await m.engine.start(recorder(runs), { id: 'a' }, { delay: 10_000 });
    expect(await m.memory.queue.promote(`${queued.executionId}:1`)).toBe(true); // a stray early delivery
    await settle(m);
    expect(runs).toEqual([]);
    expect((await m.engine.result(queued.executionId))?.status).toBe('queued');
    clock.advance(10_000);
    await settle(m);
    expect(runs).toEqual(['a']);
  });

  test('idempotency: a repeat of a delayed start is a replay of the same queued execution; it runs once', async () => {
    const clock = clockAt();
    const runs: string[] = [];
    const m = clocked(clock);
    m.startWorker(2);
    const r = recorder(runs);
    const first = await m.engine.start(r, { id: 'a' }, { delay: '1m', idempotencyKey: 'k1' });
    const again = await m.engine.start(r, { id: 'a' }, { delay: '1m', idempotencyKey: 'k1' });
    expect(first).toMatchObject({ status: 'queued', startAt: T0 + 60_000, replay: false });
    expect(again).toMatchObject({ executionId: first.executionId, status: 'queued', replay: true });
    expect((await m.store.list()).records).toHaveLength(1);
    clock.advance(60_000);
    await settle(m);
    expect(runs).toEqual(['a']);
    const late = await m.engine.start(r, { id: 'a' }, { delay: '1m', idempotencyKey: 'k1' });
    expect(late).toMatchObject({ executionId: first.executionId, status: 'completed', replay: true });
  });

  test('the recovery sweep leaves a delayed start to its delayed job', async () => {
    const clock = clockAt();
    const m = clocked(clock, { background: { livenessTtlMs: 1_000 } });
    const queued = await m.engine.start(recorder([]), { id: 'a' }, { delay: '1h' });
    clock.advance(10_000);
    const report = await m.engine.sweep();
    expect(report).toMatchObject({ ran: true, requeued: 0 });
    expect((await m.engine.result(queued.executionId))?.status).toBe('queued');
  });

  test('on the embedded engine with a clock', async () => {
    const clock = clockAt();
    const runs: string[] = [];
    const engine = createEmbeddedEngine({ clock });
    try {
      const queued = await engine.start(recorder(runs), { id: 'e' }, { delay: '2s' });
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(runs).toEqual([]);
      expect((await engine.result(queued.executionId))?.status).toBe('queued');
      clock.advance(2_000);
      for (let i = 0; i < 50 && runs.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(runs).toEqual(['e']);
    } finally {
      await engine.close();
    }
  });
});

describe('bad start options are refused before anything is written', () => {
  const cases: [string, object][] = [
    ['a negative delay', { delay: -1 }],
    ['a NaN delay', { delay: Number.NaN }],
    ['a delay string not understood', { delay: 'soon' }],
    ['both delay and at', { delay: 10, at: T0 + 10 }],
    ['an invalid Date', { at: new Date('nope') }],
    ['a NaN at', { at: Number.NaN }],
    ['priority 0', { priority: 0 }],
    ['a fractional priority', { priority: 1.5 }],
    ['a priority over the bound', { priority: 2_097_152 }],
  ];
  for (const [what, options] of cases)
    test(what, async () => {
      const clock = clockAt();
      const m = clocked(clock);
      const error = await m.engine.start(recorder([]), { id: 'x' }, options as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StartOptionsError);
      expect((error as StartOptionsError).code).toBe('start_options_invalid');
      expect((await m.store.list()).records).toEqual([]);
      expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
    });
});

describe('priorities on the embedded pool', () => {
  test('a saturated worker takes the higher priority first (lower number), FIFO within one, unprioritized first', async () => {
    const clock = clockAt();
    const m = clocked(clock);
    const order: string[] = [];
    const blocker = gate();
    const block = reactor('block')
      .step('hold', { run: () => blocker.promise })
      .build();
    const r = reactor('prio')
      .input({ id: z.string() })
      .step('work', { args: ($) => ({ id: $.input('id') }), run: ({ id }) => void order.push(id) })
      .build();
    m.startWorker(1);
    await m.engine.start(block, {});
    await new Promise((resolve) => setImmediate(resolve));
    await m.engine.start(r, { id: 'low' }, { priority: 10 });
    await m.engine.start(r, { id: 'high-1' }, { priority: 1 });
    await m.engine.start(r, { id: 'mid' }, { priority: 5 });
    await m.engine.start(r, { id: 'high-2' }, { priority: 1 });
    await m.engine.start(r, { id: 'none' });
    blocker.open();
    await settle(m);
    expect(order).toEqual(['none', 'high-1', 'high-2', 'mid', 'low']);
  });

  test('the priority is kept on the record and on the jobs of a retry and a park', async () => {
    const clock = clockAt();
    const m = spiedEngine(clock, { workerWaitMs: 0 });
    const spy = m.spy;
    let attempts = 0;
    const holding = gate();
    const flaky = reactor('flaky')
      .input({ id: z.string() })
      .withLock({ key: () => 'res' })
      .step('try', {
        args: ($) => ({ id: $.input('id') }),
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: '1s' },
        run: async ({ id }) => {
          if (id === 'holder') return holding.promise.then(() => 'held');
          attempts += 1;
          if (attempts === 1) throw new Error('transient');
          return 'ok';
        },
      })
      .returns('try');
    const worker = m.startWorker(2);
    const holder = await m.engine.start(flaky, { id: 'holder' });
    await turns();
    const queued = await m.engine.start(flaky, { id: 'p' }, { priority: 7 });
    await turns();
    expect((await m.engine.result(queued.executionId))?.status).toBe('parked');
    expect((await m.store.get(queued.executionId))?.background?.priority).toBe(7);
    holding.open();
    await settle(m);
    expect((await m.engine.result(holder.executionId))?.status).toBe('completed');
    clock.advance(1_000);
    await settle(m);
    expect((await m.engine.result(queued.executionId))?.status).toBe('completed');
    expect(attempts).toBe(2);
    const own = spy.enqueued.filter((o) => o.jobId.startsWith(queued.executionId));
    expect(own.length).toBeGreaterThanOrEqual(3); // start, park, retry
    for (const options of own) expect(options.priority, options.jobId).toBe(7);
    await worker.close();
  });
});

describe('startMany', () => {
  test('one result per entry in order, an invalid input failing only its own entry, one bulk enqueue', async () => {
    const clock = clockAt();
    const m = spiedEngine(clock);
    const spy = m.spy;
    const runs: string[] = [];
    const a = recorder(runs, 'many-a');
    const b = reactor('many-b')
      .input({ n: z.number() })
      .step('double', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => (runs.push(`b${n}`), n * 2) })
      .returns('double');
    const results = await m.engine.startMany([
      { reactor: a, input: { id: 'a1' } },
      { reactor: b, input: { n: 'not a number' as unknown as number } },
      { reactor: b, input: { n: 2 }, options: { priority: 3 } },
      { reactor: a, input: { id: 'a2' }, options: { delay: '1m' } },
    ]);
    expect(results.map((r) => r.status)).toEqual(['queued', 'failed', 'queued', 'queued']);
    const bad = results[1];
    expect(bad.status === 'failed' && bad.validationErrors.map((i) => i.path)).toEqual(['n']);
    expect(await m.store.get(bad.executionId)).toBeUndefined();
    expect(results[3]).toMatchObject({ startAt: T0 + 60_000 });
    expect(spy.bulk).toHaveLength(1);
    expect(spy.enqueued).toEqual([]);
    expect(spy.bulk[0]!.map((e) => e.options)).toEqual([
      { jobId: `${results[0].executionId}:1` },
      { jobId: `${results[2].executionId}:1`, priority: 3 },
      { jobId: `${results[3].executionId}:1`, delayMs: 60_000 },
    ]);
    m.startWorker(2);
    await settle(m);
    expect(runs.sort()).toEqual(['a1', 'b2']);
    expect(await m.engine.result(results[2].executionId)).toMatchObject({ status: 'completed', value: 4 });
    clock.advance(60_000);
    await settle(m);
    expect(runs.sort()).toEqual(['a1', 'a2', 'b2']);
  });

  test('a bad start option throws naming the entry, and nothing of any entry is written', async () => {
    const clock = clockAt();
    const m = clocked(clock);
    const r = recorder([], 'many-bad');
    const error = await m.engine
      .startMany([
        { reactor: r, input: { id: 'ok' } },
        { reactor: r, input: { id: 'bad' }, options: { delay: -5 } },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartOptionsError);
    expect((error as StartOptionsError).details).toMatchObject({ option: 'delay', entry: 1 });
    expect((await m.store.list()).records).toEqual([]);
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
  });

  test('an entry with an idempotency key is started on its own and replays like start', async () => {
    const clock = clockAt();
    const m = clocked(clock);
    const r = recorder([], 'many-key');
    const first = await m.engine.start(r, { id: 'k' }, { idempotencyKey: 'same' });
    const [again, other] = await m.engine.startMany([
      { reactor: r, input: { id: 'k' }, options: { idempotencyKey: 'same' } },
      { reactor: r, input: { id: 'new' } },
    ]);
    expect(again).toMatchObject({ executionId: first.executionId, replay: true });
    expect(other).toMatchObject({ status: 'queued', replay: false });
    expect(await m.engine.startMany([])).toEqual([]);
  });
});
