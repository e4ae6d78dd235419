/**
 * R-15 for async units (issue 5 gap): a unit's step-level ordered position is taken on its first
 * arrival and kept across its retries, like across parks and redeliveries — a later unit on the
 * key waits for the retry instead of overtaking it. A unit that ends without completing or
 * failing its turn (a skip) hands the position back at once.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createEmbeddedEngine, failure, MemoryCoordinator, reactor, skip } from '../../src/index.js';
import { until, untilStatus } from '../background/helpers.js';

let seq = 0;
const fresh = (name: string): string => `${name}-${++seq}-${Date.now()}`;

describe('an async unit keeps its ordered position across retries', () => {
  test('A fails its first attempt and retries later; B, arriving meanwhile, waits for A (order A, B); A keeps nonce 1 on its record during the retry delay', async () => {
    const key = fresh('ledger');
    const coordinator = new MemoryCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { workerWaitMs: 0, parkFallbackMs: 10_000 } });
    const passed: string[] = [];
    const post = reactor('ord-retry')
      .input({ who: z.string(), key: z.string() })
      .asyncStep('post', {
        args: ($) => ({ who: $.input('who'), key: $.input('key') }),
        orderedLock: { key: ({ key }) => key },
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 300 },
        run: ({ who }, ctx) => (who === 'A' && ctx.attempt === 1 ? failure('flaky') : void passed.push(who)),
      })
      .build();
    try {
      const a = await engine.run(post, { who: 'A', key });
      const unitA = `${a.executionId}~post`;
      const retrying = await until(
        async () => {
          const r = await engine.store.get(unitA);
          return r?.background?.retryAt !== undefined ? r : undefined;
        },
        3_000,
        'A to wait for its retry',
      );
      expect(retrying.background?.ordered).toMatchObject({ key, nonce: 1 });
      expect(await coordinator.orderedState(key)).toMatchObject({ lastCompleted: 0 }); // A's turn was not handed back

      const b = await engine.run(post, { who: 'B', key });
      const unitB = `${b.executionId}~post`;
      const parked = await untilStatus(engine, unitB, 'parked');
      expect(parked.status === 'parked' && parked.waitingFor).toMatchObject({ primitive: 'ordered_lock', key });
      expect(passed).toEqual([]);

      await untilStatus(engine, unitA, 'completed', 5_000);
      await untilStatus(engine, unitB, 'completed', 5_000); // woken by A's release, long before its 10 s fallback
      expect(passed).toEqual(['A', 'B']);
      expect(await coordinator.orderedState(key)).toMatchObject({ drained: true });
    } finally {
      await engine.close();
    }
  });

  test('a unit that skips hands its kept position back: the next unit passes at once', async () => {
    const key = fresh('skip');
    const coordinator = new MemoryCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { workerWaitMs: 0, parkFallbackMs: 10_000 } });
    const r = reactor('ord-skip')
      .input({ who: z.string(), key: z.string() })
      .asyncStep('post', {
        args: ($) => ({ who: $.input('who'), key: $.input('key') }),
        orderedLock: { key: ({ key }) => key, poisonTimeout: '60s' },
        run: ({ who }) => (who === 'A' ? skip('nothing to post') : who),
      })
      .build();
    try {
      const a = await engine.run(r, { who: 'A', key });
      await untilStatus(engine, `${a.executionId}~post`, 'completed');
      const b = await engine.run(r, { who: 'B', key });
      expect(await untilStatus(engine, `${b.executionId}~post`, 'completed', 2_000)).toMatchObject({ value: 'B' });
      expect(await coordinator.orderedState(key)).toMatchObject({ drained: true });
    } finally {
      await engine.close();
    }
  });
});
