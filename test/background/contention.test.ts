/**
 * Contention in a worker parks the execution and the release wakes it (decision 7, issue 4 §4),
 * on the embedded default: reference scenario 2 restated, FIFO wake among waiters, a rate limit
 * parking until its window allows, ordered locks in the background. Real clock, small delays;
 * park fallbacks are set long where only a wake can explain a fast completion.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createEmbeddedEngine, MemoryCoordinator, reactor } from '../../src/index.js';
import type { CoordinatorFastPaths } from '../../src/ports/coordinator.js';
import { changeHolderEvery, eventsOf, gate, manualEngine, sleep, until, untilStatus } from './helpers.js';

const OTHER = { owner: 'someone-else' };
let seq = 0;
const fresh = (name: string): string => `${name}:${++seq}:${Date.now()}`;

describe('4. reference scenario 2: a held lock parks the execution', () => {
  test('parked with what it waits for; the release by the holding execution wakes it long before the fallback', async () => {
    const key = fresh('user');
    const coordinator = new MemoryCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 10_000 } });
    const holding = gate();
    const holderIn = gate();
    let ran = 0;
    // The other owner: an in-process run of another reactor on the same engine, holding the key.
    const holder = reactor('holder')
      .withLock({ key: () => key })
      .step('hold', { run: async () => (holderIn.open(), await holding.promise) })
      .build();
    const simple = reactor('simple-lock')
      .input({ id: z.string() })
      .withLock({ key: () => key })
      .step('s', { run: () => ++ran })
      .build();
    try {
      const held = engine.run(holder, {});
      await holderIn.promise;
      const started = await engine.start(simple, { id: '1' });
      const parked = await untilStatus(engine, started.executionId, 'parked');
      expect(parked.status === 'parked' && parked.waitingFor).toMatchObject({ primitive: 'lock', key, attempt: 1 });
      expect(eventsOf(parked.trace, 'run.parked')).toMatchObject([{ primitive: 'lock', key, attempt: 1 }]);
      expect(ran).toBe(0);
      expect(eventsOf(parked.trace, 'step.started')).toEqual([]);
      const t0 = Date.now();
      holding.open();
      expect((await held).status).toBe('completed');
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done?.status).toBe('completed');
      expect(Date.now() - t0).toBeLessThan(5_000); // the fallback is 10 s: only the wake explains this
      expect(ran).toBe(1);
      expect(await coordinator.lockState(key)).toBeUndefined();
      const trace = done?.trace ?? [];
      expect(eventsOf(trace, 'run.parked')).toHaveLength(1);
      expect(eventsOf(trace, 'run.resumed')).toHaveLength(2);
      expect((await engine.store.get(started.executionId))?.background).toMatchObject({ contention: 1 });
    } finally {
      await engine.close();
    }
  });

  test('a key the coordinator frees on its own (a grant nobody took, decision 059) wakes a parked execution like a release', async () => {
    const key = fresh('user');
    /** A coordinator that reports keys it freed itself, as the Redis one does with a cross-process grant nobody here could take. */
    class FreeingCoordinator extends MemoryCoordinator {
      override readonly fastPaths: CoordinatorFastPaths = { changes: this, cancels: this, freed: this };
      readonly freed = new Set<(kind: 'lock', key: string) => void>();
      onFreed(listener: (kind: 'lock', key: string) => void): () => void {
        this.freed.add(listener);
        return () => this.freed.delete(listener);
      }
    }
    const coordinator = new FreeingCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 10_000 } });
    const simple = reactor('freed-lock')
      .withLock({ key: () => key })
      .step('s', { run: () => 1 })
      .build();
    try {
      await coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
      const started = await engine.start(simple, {});
      await untilStatus(engine, started.executionId, 'parked');
      const t0 = Date.now();
      await coordinator.lockRelease(key, OTHER.owner); // not through the engine: nothing else wakes the waiter
      for (const listener of coordinator.freed) listener('lock', key);
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done?.status).toBe('completed');
      expect(Date.now() - t0).toBeLessThan(5_000); // the fallback is 10 s
    } finally {
      await engine.close();
    }
  });

  test('with contentionCap 3 and the lock changing hands between its polls (never free) it ends failed with a contention error naming the key; no step, no rollback', async () => {
    const key = fresh('user');
    const coordinator = new MemoryCoordinator();
    await coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
    const stop = changeHolderEvery(coordinator, key, OTHER, 10); // each fallback poll finds a new holder: each one spends an attempt
    const engine = createEmbeddedEngine({ coordinator, background: { contentionCap: 3, parkFallbackMs: 30 } });
    let ran = 0;
    let compensated = 0;
    let undone = 0;
    const simple = reactor('simple-lock')
      .input({ id: z.string() })
      .withLock({ key: () => key })
      .step('s', { run: () => ++ran, compensate: () => void compensated++, undo: () => void undone++ })
      .build();
    try {
      const started = await engine.start(simple, { id: '1' });
      const done = await engine.wait(started.executionId, { timeoutMs: 3_000, pollMs: 5 });
      expect(done?.status).toBe('failed');
      if (done?.status !== 'failed') return;
      // Rebuilt from the record: the class is not restored (see the report), the code, name and details are.
      expect(done.error).toMatchObject({
        code: 'contention',
        name: 'ContentionError',
        details: { primitive: 'lock', key },
      });
      expect(done.error.message).toContain(`"${key}"`);
      expect(done.error.message).toContain('cap 3');
      expect(done.failedStep).toBeUndefined();
      expect(eventsOf(done.trace, 'run.parked').map((e) => e.attempt)).toEqual([1, 2, 3]);
      expect(done.trace.filter((e) => e.type.startsWith('step.'))).toEqual([]);
      expect(eventsOf(done.trace, 'run.rolling_back')).toEqual([]);
      expect([ran, compensated, undone]).toEqual([0, 0, 0]);
      expect(done.rollbackFailures).toEqual([]);
      await engine.drain(); // nothing is left pending
      expect((await coordinator.lockState(key))?.holder.owner).toBe('someone-else');
    } finally {
      stop();
      await engine.close();
    }
  });
});

describe('4c. the fallback for a releaser that died', () => {
  test('a holder whose lock lapses by TTL wakes nobody; the timed fallback job resumes the waiter', async () => {
    const key = fresh('user');
    const coordinator = new MemoryCoordinator();
    await coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 120 }); // never released: it lapses
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 200, workerWaitMs: 0 } });
    const r = reactor('after-dead-holder')
      .withLock({ key: () => key })
      .step('s', { run: () => 'done' })
      .returns('s');
    try {
      const t0 = Date.now();
      const started = await engine.start(r, {});
      await untilStatus(engine, started.executionId, 'parked');
      const done = await engine.wait(started.executionId, { timeoutMs: 3_000, pollMs: 5 });
      expect(done?.status === 'completed' && done.value).toBe('done');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(200); // resumed by the fallback, not earlier
      expect(eventsOf(done?.trace ?? [], 'run.parked')).toHaveLength(1);
    } finally {
      await engine.close();
    }
  });
});

describe('5. two or more executions on one lock key in the background', () => {
  test('the later ones park and are woken one by one by the releases, in park order (FIFO)', async () => {
    const key = fresh('acct');
    const m = manualEngine({ background: { parkFallbackMs: 10_000 } });
    const firstIn = gate();
    const firstGo = gate();
    const completed: number[] = [];
    let inside = 0;
    let maxInside = 0;
    const r = reactor('serial')
      .input({ i: z.number() })
      .withLock({ key: () => key })
      .step('work', {
        run: async ({ i }) => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          if (i === 0) {
            firstIn.open();
            await firstGo.promise;
          }
          await sleep(2);
          completed.push(i);
          inside--;
          return i;
        },
      })
      .returns('work');
    const worker = m.startWorker(8);
    try {
      const first = await m.engine.start(r, { i: 0 });
      await firstIn.promise;
      const waiters = [];
      for (let i = 1; i <= 4; i++) {
        const started = await m.engine.start(r, { i });
        await untilStatus(m.engine, started.executionId, 'parked');
        waiters.push(started.executionId);
      }
      expect(await m.memory.waitList.list(`lock:${key}`)).toEqual(waiters.map((id) => `${id}:2`));
      const t0 = Date.now();
      firstGo.open();
      for (const id of [first.executionId, ...waiters])
        expect((await m.engine.wait(id, { timeoutMs: 5_000, pollMs: 5 }))?.status).toBe('completed');
      expect(Date.now() - t0).toBeLessThan(5_000); // fallback is 10 s
      expect(completed).toEqual([0, 1, 2, 3, 4]);
      expect(maxInside).toBe(1);
      for (const id of waiters) {
        const trace = (await m.engine.result(id))?.trace ?? [];
        expect(eventsOf(trace, 'run.parked')).toHaveLength(1); // each was woken when its turn came, never earlier
      }
      expect(await m.memory.waitList.list(`lock:${key}`)).toEqual([]);
    } finally {
      await worker.stop();
    }
  });
});

describe('6. a rate-limited execution parks until the window allows it', () => {
  test('it completes no earlier than the window end and soon after; counted as contention', async () => {
    const key = fresh('api');
    const coordinator = new MemoryCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 10_000 } });
    const ranAt: number[] = [];
    const r = reactor('limited')
      .withRateLimit({ key: () => key, limit: 1, per: 300 })
      .step('call', { run: () => void ranAt.push(Date.now()) })
      .build();
    try {
      const t0 = Date.now();
      const first = await engine.start(r, {});
      expect((await engine.wait(first.executionId, { timeoutMs: 2_000, pollMs: 5 }))?.status).toBe('completed');
      const second = await engine.start(r, {});
      const parked = await untilStatus(engine, second.executionId, 'parked');
      expect(parked.status === 'parked' && parked.waitingFor).toMatchObject({
        primitive: 'rate_limit',
        key,
        attempt: 1,
      });
      const parkEvent = eventsOf(parked.trace, 'run.parked')[0];
      expect(parkEvent).toMatchObject({ primitive: 'rate_limit', key, attempt: 1 });
      const done = await engine.wait(second.executionId, { timeoutMs: 3_000, pollMs: 5 });
      expect(done?.status).toBe('completed');
      expect(ranAt).toHaveLength(2);
      // The slot of the first was taken after t0: the window ends no earlier than t0 + 300.
      expect(ranAt[1]! - t0).toBeGreaterThanOrEqual(300);
      // Parked for the retry-after the window gave (at most its 300 ms, counted from a moment
      // before the park was announced), not the 10 s fallback nor a polling snooze; woken at it.
      const dueAt = parked.status === 'parked' ? parked.waitingFor?.dueAt : undefined;
      expect(dueAt).toBeGreaterThanOrEqual(t0 + 300);
      expect(dueAt! - parkEvent!.at).toBeLessThanOrEqual(300);
      expect(ranAt[1]! - ranAt[0]!).toBeLessThan(300 + 5_000);
      const record = await engine.store.get(second.executionId);
      expect(record?.background).toMatchObject({ contention: 1 });
      expect(record?.steps['call']).toMatchObject({ status: 'completed', attempts: 1 });
      expect((await coordinator.rateState(key, 300)).count).toBe(1); // the first's start has left the window
    } finally {
      await engine.close();
    }
  });

  test('rate-limit parks count against the contention cap', async () => {
    const key = fresh('api');
    const coordinator = new MemoryCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { contentionCap: 0 } });
    let ran = 0;
    const r = reactor('limited-capped')
      .withRateLimit({ key: () => key, limit: 1, per: '10s' })
      .step('call', { run: () => ++ran })
      .build();
    try {
      const first = await engine.start(r, {});
      expect((await engine.wait(first.executionId, { timeoutMs: 2_000, pollMs: 5 }))?.status).toBe('completed');
      const second = await engine.start(r, {});
      const done = await engine.wait(second.executionId, { timeoutMs: 2_000, pollMs: 5 });
      expect(done?.status).toBe('failed');
      expect(done?.status === 'failed' && done.error).toMatchObject({
        code: 'contention',
        name: 'ContentionError',
        details: { primitive: 'rate_limit', key },
      });
      expect(ran).toBe(1);
    } finally {
      await engine.close();
    }
  });
});

describe('7. ordered lock in the background', () => {
  const ordered = (key: string, log: number[]) =>
    reactor('ordered')
      .input({ i: z.number() })
      .withOrderedLock({ key: () => key })
      .step('a', { run: async ({ i }) => (await sleep(Math.floor(Math.random() * 8)), i) })
      .step('b', {
        args: ($) => ({ i: $.result('a') }),
        run: async ({ i }) => (await sleep(Math.floor(Math.random() * 8)), log.push(i), i),
      })
      .returns('b');

  test('positions are taken at start; executions complete in accept order though the worker takes them out of order; waits are not capped', async () => {
    const key = fresh('ledger');
    const log: number[] = [];
    const m = manualEngine({ background: { contentionCap: 1, parkFallbackMs: 10_000, workerWaitMs: 0 } });
    const r = ordered(key, log);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await m.engine.start(r, { i })).executionId);
    // Positions were handed out at acceptance, before any worker ran.
    expect(await m.coordinator.orderedState(key)).toMatchObject({ issued: 10, lastCompleted: 0 });
    for (const [i, id] of ids.entries())
      expect((await m.store.get(id))?.background?.ordered).toMatchObject({ key, nonce: i + 1 });
    // A worker takes the later ones first: they park, holding nothing, and keep their position.
    for (const i of [9, 7, 5, 3])
      await m.engine.process(
        { v: 1, executionId: ids[i]!, reactor: 'ordered' },
        { jobId: `${ids[i]!}:1`, delivery: 1 },
      );
    for (const i of [9, 7, 5, 3]) expect((await m.engine.result(ids[i]!))?.status).toBe('parked');
    expect(log).toEqual([]);
    const worker = m.startWorker(8);
    try {
      for (const id of ids)
        expect((await m.engine.wait(id, { timeoutMs: 5_000, pollMs: 5 }))?.status).toBe('completed');
      expect(log).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // Some waited more than once (every waiter is woken on each advance) and still completed under cap 1.
      const parks = await Promise.all(
        ids.map(async (id) => eventsOf((await m.engine.result(id))?.trace ?? [], 'run.parked').length),
      );
      expect(Math.max(...parks)).toBeGreaterThan(1);
      expect(await m.coordinator.orderedState(key)).toMatchObject({ inFlight: undefined });
    } finally {
      await worker.stop();
    }
  });

  test('on the embedded engine with concurrency 8, twelve executions complete in accept order', async () => {
    const key = fresh('ledger');
    const log: number[] = [];
    const engine = createEmbeddedEngine({
      workerConcurrency: 8,
      background: { contentionCap: 1, parkFallbackMs: 10_000 },
    });
    const r = ordered(key, log);
    try {
      const ids = [];
      for (let i = 0; i < 12; i++) ids.push((await engine.start(r, { i })).executionId);
      for (const id of ids) expect((await engine.wait(id, { timeoutMs: 5_000, pollMs: 5 }))?.status).toBe('completed');
      expect(log).toEqual(Array.from({ length: 12 }, (_, i) => i));
      await until(async () => (await engine.drain(), true));
    } finally {
      await engine.close();
    }
  });
});
