/**
 * Cancelling an execution whose fan-out elements are parked on step-level contention
 * (decision 051): the parked elements end `cancelled` at once (not left `parked`), leave the
 * key's wait list, and never run when the key is released later.
 */
import { describe, expect, test } from 'vitest';
import { eventsOf, sleep } from '../background/helpers.js';
import { parkedMapInMemory } from './contention-scenario.js';

describe('fan-out: cancel with parked elements', () => {
  test.each([false, true])(
    'atomic %s: parked elements end cancelled, leave the wait list, and never run after the release',
    async (atomic) => {
      // Batch 4: elements 4 and 5 are never dispatched.
      const { key, log, m, worker, leave, held, executionId, records } = await parkedMapInMemory(
        'elem-cancel',
        atomic,
        [0, 1, 2, 3, 4, 5],
        4,
      );
      try {
        const cancelled = await m.engine.cancel(executionId, { reason: 'operator' });
        expect(cancelled.status).toBe('cancelled');
        for (const record of await records()) {
          expect(record?.status).toBe('cancelled');
          expect(record?.cancelReason).toBe('not started: the map rolled back');
          expect(record?.background?.waitingFor).toBeUndefined();
        }
        for (const record of (await records()).slice(0, 4))
          expect(eventsOf(record?.trace ?? [], 'map.element_skipped')).toMatchObject([
            { step: 'items', index: record!.element!.index, reason: 'not_started' },
          ]);
        // The holder's release goes through the engine and wakes the key's waiters: none of ours is left.
        leave.open();
        expect((await held).status).toBe('completed');
        await sleep(100);
        expect(log).toEqual([]);
        expect((await records()).map((r) => r?.status)).toEqual(Array(6).fill('cancelled'));
        expect((await m.engine.result(executionId))?.status).toBe('cancelled');
        expect(await m.coordinator.lockState(key)).toBeUndefined();
      } finally {
        leave.open();
        await worker.stop();
      }
    },
  );
});
