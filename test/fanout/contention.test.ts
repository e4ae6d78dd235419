/**
 * Fan-out elements whose step loses step-level contention in a worker park instead of failing
 * (issue #6 R-8, decision 038), on the embedded backend: parked with what they wait for, nothing
 * compensated, woken by the release, the map collected once they complete; over the contention
 * cap the element fails with a contention error naming the key.
 */
import { describe, expect, test } from 'vitest';
import { MemoryFanOutLedger } from '../../src/index.js';
import { changeHolderEvery, eventsOf, manualEngine } from '../background/helpers.js';
import { fresh, lockedMap, parkedMapInMemory } from './contention-scenario.js';

describe('fan-out: an element that loses step-level contention parks (R-8)', () => {
  test('the elements park (not failed, not compensated), the release wakes them and the run completes', async () => {
    const { key, log, m, worker, leave, held, executionId, records } = await parkedMapInMemory(
      'elem-account',
      true,
      [0, 1, 2],
    );
    try {
      for (const record of await records()) {
        expect(record?.background?.waitingFor).toMatchObject({
          primitive: 'lock',
          key,
          attempt: 1,
          step: `items[${record!.element!.index}]`,
        });
        expect(record?.background?.contention).toBe(1);
      }
      // The run is still waiting for its map: a parked element is not settled.
      expect(await m.engine.result(executionId)).toMatchObject({
        status: 'parked',
        waitingFor: { primitive: 'map', key: 'items' },
      });
      expect(log).toEqual([]);
      const t0 = Date.now();
      leave.open();
      expect((await held).status).toBe('completed');
      const done = await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(Date.now() - t0).toBeLessThan(3_000);
      expect(done?.status === 'completed' && done.value).toEqual({ successes: [0, 10, 20], failures: [] });
      expect([...log].sort()).toEqual(['run 0', 'run 1', 'run 2']);
      const finished = await records();
      for (const record of finished) {
        expect(record?.status).toBe('completed');
        expect(record?.background?.waitingFor).toBeUndefined();
        expect(eventsOf(record?.trace ?? [], 'map.element_parked').length).toBeGreaterThanOrEqual(1);
        expect(eventsOf(record?.trace ?? [], 'map.element_parked')[0]).toMatchObject({
          step: 'items',
          index: record!.element!.index,
          primitive: 'lock',
          key,
          attempt: 1,
        });
        expect(eventsOf(record?.trace ?? [], 'run.woken').length).toBeGreaterThanOrEqual(1);
        expect(eventsOf(record?.trace ?? [], 'map.element_failed')).toEqual([]);
      }
      expect(await m.coordinator.lockState(key)).toBeUndefined();
    } finally {
      leave.open();
      await worker.stop();
    }
  });

  test('over the contention cap (the key changing hands between its polls) the element fails with a contention error naming the key (its body never ran, nothing compensated)', async () => {
    const key = fresh('elem-capped');
    const log: string[] = [];
    const m = manualEngine({
      fanOut: new MemoryFanOutLedger(),
      background: { parkFallbackMs: 20, workerWaitMs: 0, contentionCap: 2 },
    });
    await m.coordinator.lockAcquire({ key, holder: { owner: 'someone-else', reactor: 'other' }, ttlMs: 30_000 });
    const stop = changeHolderEvery(m.coordinator, key, { owner: 'someone-else' }, 7);
    const worker = m.startWorker(8);
    try {
      const { executionId } = await m.engine.start(lockedMap(key, log, false), { ns: [0, 1] });
      const done = await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done?.status === 'completed' && done.value).toEqual({ successes: [], failures: [0, 1] });
      for (const index of [0, 1]) {
        const record = await m.store.get(`${executionId}/items[${index}]`);
        expect(record?.status).toBe('failed');
        expect(record?.error).toMatchObject({ code: 'contention', details: { primitive: 'lock', key } });
        expect(record?.error?.message).toContain(key);
        expect(eventsOf(record?.trace ?? [], 'map.element_parked').map((e) => e.attempt)).toEqual([1, 2]);
        expect(eventsOf(record?.trace ?? [], 'step.started')).toEqual([]);
      }
      expect(log).toEqual([]);
      expect((await m.coordinator.lockState(key))?.holder.owner).toBe('someone-else');
    } finally {
      stop();
      await worker.stop();
    }
  });
});
