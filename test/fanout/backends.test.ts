/**
 * Fan-out maps in workers on every backend of the matrix (workers in this process): scenario 21
 * in both variants, non-atomic results, element state on its own record, element contention that
 * parks and wakes at the release, a cancel with parked elements. The three-process acceptance run
 * is `test/multiprocess/fanout.test.ts`.
 */
import { describe, expect, test } from 'vitest';
import { describeOnBackends } from '../support/backend-matrix.js';
import { gate, sleep } from '../background/helpers.js';
import { fresh, holderOf, lockedMap } from './contention-scenario.js';
import { buildFanOut, failsAt, loggingHooks, type FanOutHooks } from './scenario.js';

describeOnBackends('fan-out maps in workers', (backend) => {
  async function run(
    fails: boolean[],
    options: { failB?: boolean; atomic?: boolean; batchSize?: number; hooks?: Partial<FanOutHooks> } = {},
  ) {
    const log: string[] = [];
    const r = buildFanOut(loggingHooks(log, options.hooks), {
      batchSize: options.batchSize ?? 4,
      atomic: options.atomic ?? true,
    });
    const runtime = backend.runtime({
      reactors: [r],
      background: { parkFallbackMs: 3_000, workerWaitMs: 0 },
    });
    runtime.startWorker({ concurrency: 6 });
    const started = await runtime.engine.start(r, { fails, failB: options.failB ?? false });
    const result = await runtime.engine.wait(started.executionId, { timeoutMs: 15_000, pollMs: 10 });
    return { result, log, runtime, executionId: started.executionId };
  }

  describe('scenario 21', () => {
    test('element 2 fails (atomic, one at a time): elements 1 and 0 undone, then a', async () => {
      const { result, log } = await run(failsAt(4, 2), { batchSize: 1 });
      expect(result).toMatchObject({ status: 'failed', failedStep: 'items[2]' });
      expect(log).toEqual(['run a', 'run 0', 'run 1', 'run 2', 'compensate 2', 'undo 1', 'undo 0', 'undo a']);
    });

    test('b fails: all four elements undone highest index first, then a, whatever order their jobs ran in', async () => {
      // Reverse the natural finishing order: higher indexes finish first.
      const hooks = { element: (i: number) => new Promise<void>((resolve) => setTimeout(resolve, (4 - i) * 15)) };
      const { result, log } = await run(failsAt(4), { failB: true, hooks });
      expect(result).toMatchObject({ status: 'failed', failedStep: 'b' });
      expect(log.slice(-5)).toEqual(['undo 3', 'undo 2', 'undo 1', 'undo 0', 'undo a']);
    });

    test('non-atomic: the next step reads successes and failures; element records live in the backend', async () => {
      const { result, runtime, executionId } = await run([true, false, false, true, false], {
        atomic: false,
        batchSize: 2,
      });
      expect(result.status === 'completed' && result.value).toEqual({ successes: [10, 20, 40], failures: [0, 3] });
      expect(await runtime.engine.result(`${executionId}/items[3]`)).toMatchObject({
        status: 'failed',
        error: { message: 'element 3 failed' },
      });
      expect(await runtime.engine.result(`${executionId}/items[4]`)).toMatchObject({ status: 'completed', value: 40 });
    });
  });

  /** A map whose elements all park on `key`, held by another execution until `leave` opens (its release wakes the key's waiters). */
  async function parkedMap(name: string, atomic: boolean) {
    const key = fresh(name);
    const log: string[] = [];
    const inside = gate();
    const leave = gate();
    const map = lockedMap(key, log, atomic);
    const holder = holderOf(key, inside, leave);
    const runtime = backend.runtime({
      reactors: [map, holder],
      background: { parkFallbackMs: 60_000, workerWaitMs: 0 },
    });
    runtime.startWorker({ concurrency: 6 });
    const held = runtime.engine.run(holder, {});
    await inside.promise;
    const { executionId } = await runtime.engine.start(map, { ns: [0, 1, 2] });
    const ids = [0, 1, 2].map((i) => `${executionId}/items[${i}]`);
    // However slow the machine, every element is parked before the test goes on.
    const deadline = Date.now() + 120_000;
    for (;;) {
      const results = await Promise.all(ids.map((id) => runtime.engine.result(id)));
      if (results.every((r) => r?.status === 'parked')) break;
      if (Date.now() > deadline)
        throw new Error(`the elements never all parked: ${JSON.stringify(results.map((r) => r?.status))}`);
      await sleep(10);
    }
    return { key, log, leave, runtime, held, executionId, ids };
  }

  describe('element contention parks (R-8, decision 038)', () => {
    test('elements park on the held key (not failed, not compensated) and the release wakes them long before the fallback', async () => {
      const { key, log, leave, runtime, held, executionId, ids } = await parkedMap('elem', true);
      try {
        expect(await runtime.engine.result(ids[1]!)).toMatchObject({
          status: 'parked',
          waitingFor: { primitive: 'lock', key, step: 'items[1]', attempt: 1 },
        });
        expect(await runtime.engine.result(executionId)).toMatchObject({
          status: 'parked',
          waitingFor: { primitive: 'map', key: 'items' },
        });
        expect(log).toEqual([]);
        leave.open();
        expect((await held).status).toBe('completed');
        const done = await runtime.engine.wait(executionId, { timeoutMs: 10_000, pollMs: 10 });
        expect(done?.status === 'completed' && done.value).toEqual({ successes: [0, 10, 20], failures: [] });
        expect([...log].sort()).toEqual(['run 0', 'run 1', 'run 2']);
      } finally {
        leave.open();
      }
    });
  });

  describe('cancel with parked elements (decision 051)', () => {
    test('the parked elements end cancelled at once, leave the wait list, and the release runs none of them', async () => {
      const { log, leave, runtime, held, executionId, ids } = await parkedMap('elem-cancel', false);
      try {
        expect((await runtime.engine.cancel(executionId, { reason: 'operator' })).status).toBe('cancelled');
        const statuses = async (): Promise<(string | undefined)[]> =>
          (await Promise.all(ids.map((id) => runtime.engine.result(id)))).map((r) => r?.status);
        expect(await statuses()).toEqual(['cancelled', 'cancelled', 'cancelled']);
        leave.open();
        expect((await held).status).toBe('completed');
        await sleep(200);
        expect(log).toEqual([]);
        expect(await statuses()).toEqual(['cancelled', 'cancelled', 'cancelled']);
      } finally {
        leave.open();
      }
    });
  });
});
