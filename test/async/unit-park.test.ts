/**
 * Reference scenario 18 on the embedded default: an asyncStep's own step-level coordination is
 * taken in the worker that runs its body. Its lock held elsewhere: the dispatcher completes, the
 * unit parks with its park state on its own record (the ordered position it keeps, what it
 * waits for); the release wakes it, it completes, the record drops the park state and the key
 * drains. The dispatcher's newer record is never overwritten.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createEmbeddedEngine, MemoryCoordinator, reactor } from '../../src/index.js';
import { eventsOf, gate, until, untilStatus } from '../background/helpers.js';

let seq = 0;
const fresh = (name: string): string => `${name}-${++seq}-${Date.now()}`;

describe('scenario 18: async_step park state', () => {
  test('the unit parks on its lock keeping ordered position 1; after the release it completes and the key drains', async () => {
    const key = fresh('acct');
    const coordinator = new MemoryCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 10_000, workerWaitMs: 0 } });
    const holding = gate();
    const holderIn = gate();
    let shipped = 0;
    // The other owner: an in-process run of another reactor holding the key.
    const holder = reactor('holder')
      .withLock({ key: () => key })
      .step('hold', { run: async () => (holderIn.open(), await holding.promise) })
      .build();
    const order = reactor('order-18')
      .input({ account: z.string() })
      .step('reserve', { run: () => 'r' })
      .asyncStep('ordered', {
        args: ($) => ({ account: $.input('account') }),
        orderedLock: { key: ({ account }) => `ord:${account}` },
        lock: { key: ({ account }) => account },
        run: () => ++shipped,
      })
      .step('confirm', { waitFor: ['reserve'], run: () => 'confirmed' })
      .returns('confirm');
    try {
      const held = engine.run(holder, {});
      await holderIn.promise;
      const parent = await engine.run(order, { account: key });
      expect(parent.status).toBe('completed'); // nothing reads the unit: the dispatcher does not wait
      // the dispatching process takes none of the unit's declarations.
      expect(parent.trace.filter((e) => e.type.startsWith('coordination.'))).toEqual([]);
      const unitId = `${parent.executionId}~ordered`;
      const parked = await untilStatus(engine, unitId, 'parked');
      expect(parked.status === 'parked' && parked.waitingFor).toMatchObject({ primitive: 'lock', key, attempt: 1 });
      const record = (await engine.store.get(unitId))!;
      expect(record.background).toMatchObject({
        ordered: { key: `ord:${key}`, nonce: 1 },
        waitingFor: { primitive: 'lock', key },
        contention: 1,
      });
      expect(record.unit).toMatchObject({ step: 'ordered', dispatcherId: parent.executionId });
      expect(eventsOf(parked.trace, 'async.parked')).toMatchObject([
        { step: 'ordered', unitId, primitive: 'lock', key, attempt: 1 },
      ]);
      expect(eventsOf(parked.trace, 'run.parked')).toMatchObject([{ primitive: 'lock', key }]);
      expect(await coordinator.orderedState(`ord:${key}`)).toMatchObject({ issued: 1, lastCompleted: 0 }); // next stays 1
      expect(shipped).toBe(0);
      const parentRecord = await engine.store.get(parent.executionId);
      expect(parentRecord?.status).toBe('completed');

      const t0 = Date.now();
      holding.open();
      expect((await held).status).toBe('completed');
      const done = await untilStatus(engine, unitId, 'completed', 5_000);
      expect(Date.now() - t0).toBeLessThan(5_000); // the fallback is 10 s: the release woke it
      expect(shipped).toBe(1);
      const after = (await engine.store.get(unitId))!;
      expect(after.background?.ordered).toBeUndefined();
      expect(after.background?.waitingFor).toBeUndefined();
      expect(eventsOf(done.trace, 'run.woken')).toMatchObject([{ primitive: 'lock', key }]);
      expect(await coordinator.orderedState(`ord:${key}`)).toMatchObject({ drained: true, inFlight: undefined }); // drained: the counters reset
      await until(async () => (await coordinator.lockState(key)) === undefined, 2_000, 'the lock to be free');
      // The dispatcher's record is exactly what it wrote: the unit never touched it.
      expect(await engine.store.get(parent.executionId)).toEqual(parentRecord);
    } finally {
      holding.open();
      await engine.close();
    }
  });
});
