/**
 * Fan-out maps on the embedded backend (memory store, ledger and queue; real clock, small
 * delays): elements as jobs in batches, collect, atomic stop, non-atomic failures, scenario 21's
 * rollback order, rollback failures, at-least-once safety, events, inline runs.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEmbeddedEngine,
  defineStep,
  MemoryFanOutLedger,
  NonRetryableError,
  reactor,
  type ReactorEvent,
  type RunResult,
} from '../../src/index.js';
import { eventsOf, gate as openable, manualEngine, sleep } from '../background/helpers.js';
import { buildFanOut, failsAt, loggingHooks } from './scenario.js';

const FAST = { parkFallbackMs: 2_000, workerWaitMs: 0 };

async function runInWorker(
  fails: boolean[],
  options: {
    batchSize?: number;
    atomic?: boolean;
    failB?: boolean;
    log?: string[];
    hooks?: Parameters<typeof loggingHooks>[1];
  } = {},
) {
  const log = options.log ?? [];
  const r = buildFanOut(loggingHooks(log, options.hooks), {
    batchSize: options.batchSize ?? 4,
    atomic: options.atomic ?? true,
  });
  const m = manualEngine({ fanOut: new MemoryFanOutLedger(), background: FAST });
  const worker = m.startWorker(8);
  try {
    const started = await m.engine.start(r, { fails, failB: options.failB ?? false });
    const result = await m.engine.wait(started.executionId, { timeoutMs: 10_000, pollMs: 5 });
    return { result, log, m, executionId: started.executionId };
  } finally {
    await worker.stop();
  }
}

const typed = <T extends ReactorEvent['type']>(events: readonly ReactorEvent[], type: T) => eventsOf(events, type);

describe('fan-out: elements as jobs, collected when all settle', () => {
  test('every element runs once, in its own record; the next step reads successes and failures', async () => {
    const { result, log, m, executionId } = await runInWorker(failsAt(10), { batchSize: 3 });
    expect(result.status).toBe('completed');
    expect(result.status === 'completed' && result.value).toEqual({
      successes: [0, 10, 20, 30, 40, 50, 60, 70, 80, 90],
      failures: [],
    });
    expect(log.filter((l) => l.startsWith('run ')).sort()).toEqual(
      [...Array.from({ length: 10 }, (_, i) => `run ${i}`), 'run a', 'run b'].sort(),
    );
    const element = await m.store.get(`${executionId}/items[4]`);
    expect(element).toMatchObject({
      status: 'completed',
      value: 40,
      parentId: executionId,
      rootId: executionId,
      element: { parentId: executionId, step: 'items', index: 4 },
    });
    expect(result.steps['items']).toMatchObject({
      status: 'completed',
      result: { successes: [0, 10, 20, 30, 40, 50, 60, 70, 80, 90], failures: [], notStarted: [] },
    });
    expect((result.steps['items']?.result as { succeeded: unknown[] }).succeeded[4]).toEqual({ index: 4, value: 40 });
  });

  test('at most batchSize elements are in flight at once', async () => {
    let inFlight = 0;
    let most = 0;
    const hooks = {
      element: async () => {
        most = Math.max(most, ++inFlight);
        await sleep(5);
        inFlight--;
      },
    };
    const { result } = await runInWorker(failsAt(12), { batchSize: 3, hooks });
    expect(result.status).toBe('completed');
    expect(most).toBe(3);
  });

  test('the parent parks while elements run (status parked, waiting for the map) and is woken when all settle', async () => {
    const release = openable();
    const r = buildFanOut(loggingHooks([], { element: () => release.promise }), { batchSize: 2 });
    const m = manualEngine({ fanOut: new MemoryFanOutLedger(), background: FAST });
    const worker = m.startWorker(8);
    try {
      const { executionId } = await m.engine.start(r, { fails: failsAt(3) });
      let parked: RunResult | undefined;
      for (let i = 0; i < 2_000 && parked?.status !== 'parked'; i++)
        parked = (await sleep(5), await m.engine.result(executionId));
      expect(parked).toMatchObject({ status: 'parked', waitingFor: { primitive: 'map', key: 'items' } });
      release.open();
      const done = await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done?.status).toBe('completed');
      // Woken by the last settlement, not by the fallback timer.
      expect(done.trace.at(-1)!.at - parked!.trace.at(-1)!.at).toBeLessThan(FAST.parkFallbackMs);
    } finally {
      await worker.stop();
    }
  });

  test('an empty collection completes at once with an empty result', async () => {
    const { result } = await runInWorker([]);
    expect(result.status === 'completed' && result.value).toEqual({ successes: [], failures: [] });
  });

  test('non-atomic: every element runs, failures are compensated in their job and collected with index and error', async () => {
    const { result, log } = await runInWorker([false, true, false, true], { atomic: false, batchSize: 2 });
    expect(result.status === 'completed' && result.value).toEqual({ successes: [0, 20], failures: [1, 3] });
    expect(log.filter((l) => l.startsWith('compensate')).sort()).toEqual(['compensate 1', 'compensate 3']);
    const map = result.steps['items']?.result as { failures: { index: number; error: { message: string } }[] };
    expect(map.failures.map((f) => [f.index, f.error.message])).toEqual([
      [1, 'element 1 failed'],
      [3, 'element 3 failed'],
    ]);
  });
});

describe('fan-out: scenario 21 rollback order (atomic)', () => {
  test('element 2 fails: it is compensated, elements 1 and 0 are undone (highest first), then a; 3 never starts', async () => {
    const { result, log, m, executionId } = await runInWorker(failsAt(4, 2), { batchSize: 1 });
    expect(result).toMatchObject({ status: 'failed', failedStep: 'items[2]' });
    expect(log).toEqual(['run a', 'run 0', 'run 1', 'run 2', 'compensate 2', 'undo 1', 'undo 0', 'undo a']);
    expect((await m.store.get(`${executionId}/items[3]`))?.status).toBe('pending'); // never dispatched
    expect(typed(result.trace, 'map.collected')).toMatchObject([
      { step: 'items', completed: 2, failed: 1, notStarted: 1 },
    ]);
  });

  test('in-flight elements finish, unstarted ones settle as not started; every completed one is undone highest first', async () => {
    const gate = openable();
    const log: string[] = [];
    // Element 1 fails at once while 0, 2, 3 wait on the gate; 4..7 are never dispatched.
    const hooks = {
      element: async (index: number) => (log.push(`run ${index}`), index === 1 ? undefined : gate.promise),
    };
    setTimeout(() => gate.open(), 50);
    const { result, m, executionId } = await runInWorker(failsAt(8, 1), { batchSize: 4, log, hooks });
    expect(result).toMatchObject({ status: 'failed', failedStep: 'items[1]' });
    expect(log.filter((l) => l.startsWith('undo'))).toEqual(['undo 3', 'undo 2', 'undo 0', 'undo a']);
    expect(log.filter((l) => /^run [4-7]$/.test(l))).toEqual([]);
    const statuses = await Promise.all(
      [4, 5, 6, 7].map(async (i) => (await m.store.get(`${executionId}/items[${i}]`))?.status),
    );
    expect(statuses.every((s) => s === 'pending' || s === 'cancelled')).toBe(true);
  });

  test('an element dispatched before the stop whose job starts after it settles as not started: its body never runs', async () => {
    const release = openable();
    const log: string[] = [];
    const r = buildFanOut(
      loggingHooks(log, { element: async (i) => (log.push(`run ${i}`), i === 1 ? release.promise : undefined) }),
      { batchSize: 3 },
    );
    const m = manualEngine({ fanOut: new MemoryFanOutLedger(), background: FAST });
    const worker = m.startWorker(2); // elements 0 and 1 run; 2 waits for a free slot
    try {
      const { executionId } = await m.engine.start(r, { fails: failsAt(3, 0) });
      for (let i = 0; i < 400 && (await m.store.get(`${executionId}/items[2]`))?.status !== 'cancelled'; i++)
        await sleep(5);
      release.open();
      const done = await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toMatchObject({ status: 'failed', failedStep: 'items[0]' });
      expect(log.filter((l) => l.startsWith('run ')).sort()).toEqual(['run 0', 'run 1', 'run a']);
      expect(log.slice(-2)).toEqual(['undo 1', 'undo a']);
      expect(typed(m.events, 'map.element_skipped')).toMatchObject([
        { step: 'items', index: 2, reason: 'not_started' },
      ]);
      expect(eventsOf(done.trace, 'map.collected')).toMatchObject([{ completed: 1, failed: 1, notStarted: 1 }]);
    } finally {
      await worker.stop();
    }
  });

  test('b fails: all four elements are undone highest index first, then a', async () => {
    const { result, log } = await runInWorker(failsAt(4), { batchSize: 4, failB: true });
    expect(result).toMatchObject({ status: 'failed', failedStep: 'b' });
    expect(log.slice(-5)).toEqual(['undo 3', 'undo 2', 'undo 1', 'undo 0', 'undo a']);
    expect(typed(result.trace, 'map.parked').map((e) => e.phase)).toEqual(['collect', 'rollback']);
  });

  test('a failing element undo is a rollback failure with the map step and element index; rollback goes on', async () => {
    const log: string[] = [];
    const { result } = await runInWorker(failsAt(4), {
      failB: true,
      log,
      hooks: {
        undo: (index) => (index === 2 ? Promise.reject(new Error('refund refused')) : void log.push(`undo ${index}`)),
      },
    });
    expect(result.status).toBe('failed');
    expect(log.slice(-4)).toEqual(['undo 3', 'undo 1', 'undo 0', 'undo a']);
    expect(result.rollbackFailures).toEqual([
      {
        step: 'items[2]',
        kind: 'undo',
        reason: 'raised',
        message: 'refund refused',
        mapStep: 'items',
        elementIndex: 2,
      },
    ]);
  });

  test('a failing element compensate is reported with the map step and element index', async () => {
    const { result } = await runInWorker(failsAt(3, 1), {
      batchSize: 1,
      hooks: { compensate: () => Promise.reject(new Error('no')) },
    });
    expect(result.rollbackFailures).toEqual([
      { step: 'items[1]', kind: 'compensate', reason: 'raised', message: 'no', mapStep: 'items', elementIndex: 1 },
    ]);
  });
});

describe('fan-out: at-least-once safety', () => {
  test('a redelivered element job never runs a completed element again; the collector counts it once', async () => {
    const runs = new Map<number, number>();
    const log: string[] = [];
    const r = buildFanOut(loggingHooks(log, { element: (i) => void runs.set(i, (runs.get(i) ?? 0) + 1) }), {
      batchSize: 5,
    });
    const m = manualEngine({ fanOut: new MemoryFanOutLedger(), background: FAST });
    const worker = m.startWorker(4);
    try {
      const { executionId } = await m.engine.start(r, { fails: failsAt(5) });
      const done = await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done?.status).toBe('completed');
      // Deliver every element job again (a duplicate, a stalled job's redelivery).
      for (let i = 0; i < 5; i++)
        await m.engine.process(
          { v: 1, executionId: `${executionId}/items[${i}]`, reactor: r.name },
          { jobId: `dup-${i}`, delivery: 2 },
        );
      expect([...runs.values()]).toEqual([1, 1, 1, 1, 1]);
      expect(log.filter((l) => l === 'run b')).toHaveLength(1);
      expect(await m.engine.result(executionId)).toMatchObject({
        status: 'completed',
        value: { successes: [0, 10, 20, 30, 40] },
      });
    } finally {
      await worker.stop();
    }
  });

  test('the ledger counts a settlement once and hands out each element once', async () => {
    const ledger = new MemoryFanOutLedger();
    await ledger.open('m', { total: 3, batchSize: 1, atomic: true });
    const first = await ledger.settle('m', 0, 'completed');
    const again = await ledger.settle('m', 0, 'completed');
    expect(first).toMatchObject({ first: true, claim: 1, done: false });
    expect(again).toMatchObject({ first: false, claim: 1, done: false });
    expect((await ledger.snapshot('m'))?.settled).toBe(1);
  });
});

describe('fan-out: redeliveries of the parent and of undo jobs', () => {
  test('a parent job delivered again while elements run parks again; nothing runs twice', async () => {
    const release = openable();
    const runs = new Map<number, number>();
    const log: string[] = [];
    const r = buildFanOut(
      loggingHooks(log, { element: async (i) => (runs.set(i, (runs.get(i) ?? 0) + 1), release.promise) }),
      { batchSize: 2 },
    );
    const m = manualEngine({ fanOut: new MemoryFanOutLedger(), background: FAST });
    const worker = m.startWorker(8);
    try {
      const { executionId } = await m.engine.start(r, { fails: failsAt(4) });
      for (let i = 0; i < 200 && (await m.engine.result(executionId))?.status !== 'parked'; i++) await sleep(5);
      // A stray or duplicated parent job: it finds the map unfinished, dispatches nothing new and parks again.
      await m.engine.process({ v: 1, executionId, reactor: r.name }, { jobId: 'stray', delivery: 1 });
      expect(await m.engine.result(executionId)).toMatchObject({
        status: 'parked',
        waitingFor: { primitive: 'map', key: 'items' },
      });
      release.open();
      const done = await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done?.status).toBe('completed');
      expect([...runs.entries()].sort()).toEqual([
        [0, 1],
        [1, 1],
        [2, 1],
        [3, 1],
      ]);
      expect(log.filter((l) => l === 'run b')).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  });

  test('undo jobs delivered again after the rollback undo nothing twice', async () => {
    const { result, log, m, executionId } = await runInWorker(failsAt(4), { failB: true });
    expect(result.status).toBe('failed');
    const undos = log.filter((l) => l.startsWith('undo'));
    for (let i = 0; i < 4; i++)
      await m.engine.process(
        { v: 1, executionId: `${executionId}/items[${i}]`, reactor: 'fan-21' },
        { jobId: `again-${i}`, delivery: 2 },
      );
    expect(log.filter((l) => l.startsWith('undo'))).toEqual(undos);
    expect(undos).toEqual(['undo 3', 'undo 2', 'undo 1', 'undo 0', 'undo a']);
  });
  test('fallback wakes of the parent during a slow element rollback park it again; order and counts hold', async () => {
    const log: string[] = [];
    const r = buildFanOut(loggingHooks(log, { undo: async (i) => (await sleep(8), void log.push(`undo ${i}`)) }), {
      batchSize: 6,
    });
    const m = manualEngine({ fanOut: new MemoryFanOutLedger(), background: { parkFallbackMs: 5, workerWaitMs: 0 } });
    const worker = m.startWorker(4);
    try {
      const { executionId } = await m.engine.start(r, { fails: failsAt(6), failB: true });
      const done = await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toMatchObject({ status: 'failed', failedStep: 'b' });
      expect(log.filter((l) => l.startsWith('undo'))).toEqual([
        'undo 5',
        'undo 4',
        'undo 3',
        'undo 2',
        'undo 1',
        'undo 0',
        'undo a',
      ]);
      expect(eventsOf(done.trace, 'map.parked').filter((e) => e.phase === 'rollback').length).toBeGreaterThan(1);
    } finally {
      await worker.stop();
    }
  });
});

describe('fan-out: operator undo', () => {
  test('cancel while elements run: completed elements are undone at once, running ones undo themselves when they finish, unstarted ones never run', async () => {
    const release = openable();
    const log: string[] = [];
    const r = buildFanOut(
      loggingHooks(log, { element: async (i) => (log.push(`run ${i}`), i === 0 ? undefined : release.promise) }),
      { batchSize: 3 },
    );
    const m = manualEngine({ fanOut: new MemoryFanOutLedger(), background: FAST });
    const worker = m.startWorker(8);
    try {
      const { executionId } = await m.engine.start(r, { fails: failsAt(6) });
      // Wait until element 0 completed and its settlement dispatched element 3, which runs now.
      for (
        let i = 0;
        i < 400 && !(log.includes('run 3') && (await m.engine.result(executionId))?.status === 'parked');
        i++
      )
        await sleep(5);
      const cancelled = await m.engine.cancel(executionId, { reason: 'operator' });
      expect(cancelled.status).toBe('cancelled');
      expect(log.filter((l) => l.startsWith('undo'))).toEqual(['undo 0', 'undo a']);
      release.open();
      await m.memory.drain();
      // Element 0's settlement had dispatched element 3: 1, 2 and 3 were running at the cancel.
      expect(
        log
          .filter((l) => l.startsWith('undo'))
          .slice(2)
          .sort(),
      ).toEqual(['undo 1', 'undo 2', 'undo 3']);
      expect(log.filter((l) => /^run [4-5]$/.test(l))).toEqual([]);
      expect((await m.engine.result(executionId))?.status).toBe('cancelled');
    } finally {
      await worker.stop();
    }
  });

  test('undo of a completed run undoes the elements in this process, highest index first, then a', async () => {
    const { result, log, m, executionId } = await runInWorker(failsAt(5), { batchSize: 5 });
    expect(result.status).toBe('completed');
    const undone = await m.engine.undo(executionId, { reason: 'customer asked' });
    expect(undone.status).toBe('cancelled');
    expect(log.filter((l) => l.startsWith('undo'))).toEqual([
      'undo 4',
      'undo 3',
      'undo 2',
      'undo 1',
      'undo 0',
      'undo a',
    ]);
    expect((await m.store.get(`${executionId}/items[2]`))?.status).toBe('cancelled');
  });
});

describe('fan-out: retries and events', () => {
  test('an element retry is its own delayed job of its own record; events name the map step and the element index', async () => {
    const attempts = new Map<number, number>();
    const hooks = {
      element: (i: number) => {
        const n = (attempts.get(i) ?? 0) + 1;
        attempts.set(i, n);
        if (i === 1 && n === 1) throw new Error('flaky');
      },
    };
    const r = buildFanOut(loggingHooks([], hooks), {
      batchSize: 2,
      retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 20 },
    });
    const m = manualEngine({ fanOut: new MemoryFanOutLedger(), background: FAST });
    const worker = m.startWorker(4);
    try {
      const { executionId } = await m.engine.start(r, { fails: failsAt(3, 2) });
      const done = await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toMatchObject({ status: 'failed', failedStep: 'items[2]' });
      expect(attempts.get(1)).toBe(2);
      const events = m.events;
      expect(
        typed(events, 'map.element_dispatched')
          .map((e) => e.index)
          .sort(),
      ).toEqual([0, 1, 2]);
      expect(typed(events, 'map.element_retrying')).toMatchObject([
        { step: 'items', index: 1, attempt: 2, delayMs: 20, jobId: `${executionId}/items[1]:2` },
      ]);
      expect(
        typed(events, 'map.element_completed')
          .map((e) => e.index)
          .sort(),
      ).toEqual([0, 1]);
      expect(typed(events, 'map.element_failed')).toMatchObject([
        { step: 'items', index: 2, error: { message: 'element 2 failed' } },
      ]);
      expect(typed(events, 'map.element_undone').map((e) => e.index)).toEqual([1, 0]);
      expect(typed(events, 'map.rollback_dispatched')).toMatchObject([{ step: 'items', index: 1 }]);
      // The element's own trace is on its record; the parent's trace has the dispatches, parks and the collection.
      const element = await m.engine.result(`${executionId}/items[1]`);
      expect(eventsOf(element!.trace, 'map.element_retrying')).toHaveLength(1);
      expect(eventsOf(done.trace, 'map.collected')).toMatchObject([{ completed: 2, failed: 1, notStarted: 0 }]);
      expect(eventsOf(done.trace, 'map.parked').map((e) => e.phase)).toEqual(['collect', 'rollback']);
    } finally {
      await worker.stop();
    }
  });
});

describe('fan-out: a reactor per element', () => {
  test("each element runs the child reactor's steps in its own job; rollback replays each child's undos, highest index first", async () => {
    const log: string[] = [];
    const child = reactor('fo-child')
      .input({ n: z.number() })
      .step('reserve', {
        args: ($) => ({ n: $.input('n') }),
        run: ({ n }) => n,
        undo: (n) => void log.push(`unreserve ${n}`),
      })
      .step('charge', {
        args: ($) => ({ n: $.result('reserve') }),
        run: ({ n }) => n * 100,
        undo: (v) => void log.push(`refund ${v}`),
      })
      .returns('charge');
    const parent = reactor('fo-parent')
      .input({ items: z.array(z.number()) })
      .map('all', { source: ($) => $.input('items'), each: child, args: (n) => ({ n }), fanOut: { batchSize: 2 } })
      .step('fail', {
        waitFor: ['all'],
        run: () => {
          throw new NonRetryableError('late failure');
        },
      })
      .build();
    const m = manualEngine({ fanOut: new MemoryFanOutLedger(), background: FAST });
    const worker = m.startWorker(4);
    try {
      const { executionId } = await m.engine.start(parent, { items: [1, 2, 3] });
      const done = await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toMatchObject({ status: 'failed', failedStep: 'fail' });
      expect(log).toEqual(['refund 300', 'unreserve 3', 'refund 200', 'unreserve 2', 'refund 100', 'unreserve 1']);
      expect((await m.store.get(`${executionId}/all[1]`))?.steps).toMatchObject({
        'all[1].reserve': { status: 'completed' },
        'all[1].charge': { status: 'completed', result: 200 },
      });
    } finally {
      await worker.stop();
    }
  });
});

describe('fan-out: step-level coordination on the element step', () => {
  test("an element step's lock is taken in each element's job: elements on one key never overlap, across element jobs", async () => {
    let inside = 0;
    let most = 0;
    const each = defineStep({
      input: { n: z.number() },
      lock: { key: () => 'fan-shared', ttl: '5s' },
      run: async ({ n }) => {
        most = Math.max(most, ++inside);
        await sleep(3);
        inside--;
        return n;
      },
    });
    const r = reactor('fo-locked')
      .input({ items: z.array(z.number()) })
      .map('all', { source: ($) => $.input('items'), each, args: (n) => ({ n }), fanOut: { batchSize: 4 } })
      .returns('all');
    const m = manualEngine({
      fanOut: new MemoryFanOutLedger(),
      background: { parkFallbackMs: 2_000, workerWaitMs: 2_000 },
    });
    const worker = m.startWorker(8);
    try {
      const { executionId } = await m.engine.start(r, { items: [1, 2, 3, 4, 5, 6] });
      const done = await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done?.status === 'completed' && done.value).toMatchObject({ successes: [1, 2, 3, 4, 5, 6] });
      expect(most).toBe(1);
      expect(eventsOf(m.events, 'coordination.acquired').filter((e) => e.key === 'fan-shared')).toHaveLength(6);
    } finally {
      await worker.stop();
    }
  });
});

describe('fan-out: inline runs', () => {
  test('engine.run (no worker) runs the elements in this process, as a plain map', async () => {
    const log: string[] = [];
    const engine = createEmbeddedEngine();
    try {
      const r = buildFanOut(loggingHooks(log), { batchSize: 2 });
      const result = await engine.run(r, { fails: failsAt(4, 2) });
      expect(result).toMatchObject({ status: 'failed', failedStep: 'items[2]' });
      // In-process, elements run maxConcurrency (4) at a time: element 3 completed too and is undone first.
      expect(log.slice(-5)).toEqual(['compensate 2', 'undo 3', 'undo 1', 'undo 0', 'undo a']);
      expect(eventsOf(result.trace, 'map.element_dispatched')).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});
