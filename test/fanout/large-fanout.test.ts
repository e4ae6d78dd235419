/**
 * A large fan-out map on the embedded engine (memory store, ledger and queue; the in-process pool
 * of 16): 10,000 elements in a sliding window of 100, started in the background. Every element
 * runs once and settles, the last settlement wakes the parked run once (the fallback is far
 * away), and the run collects every value. What bounds a map is the run's record, not the
 * number of elements (docs/maps.md, "How large a map can be"): the values here are small.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createEmbeddedEngine, defineStep, reactor, type ReactorEvent } from '../../src/index.js';

const ELEMENTS = 10_000;

describe('fan-out: a large map on the embedded engine', () => {
  test('10,000 elements, batch 100, pool 16: every element runs once, one wake, every value collected', async () => {
    const runs = new Array<number>(ELEMENTS).fill(0);
    const double = defineStep({
      input: { x: z.number().int() },
      run: async ({ x }) => {
        runs[x]! += 1;
        return x * 2;
      },
    });
    const big = reactor('large-fanout')
      .input({ xs: z.array(z.number().int()) })
      .map('m', { source: ($) => $.input('xs'), each: double, args: (x) => ({ x }), fanOut: { batchSize: 100 } })
      .step('sum', {
        args: ($) => ({ m: $.result('m') }),
        run: ({ m }) => ({ count: m.successes.length, sum: m.successes.reduce((a, b) => a + b, 0) }),
      })
      .returns('sum');
    // The fallback job is out of reach: the run can only be woken by the settlement that finishes the map.
    const engine = createEmbeddedEngine({ workerConcurrency: 16, background: { parkFallbackMs: 120_000 } });
    const events: ReactorEvent[] = [];
    engine.subscribe((e) => {
      if (!e.executionId.includes('[')) events.push(e);
    });
    try {
      const xs = Array.from({ length: ELEMENTS }, (_, i) => i);
      const { executionId } = await engine.start(big, { xs });
      const result = await engine.wait(executionId, { timeoutMs: 60_000, pollMs: 20 });

      expect(result.status).toBe('completed');
      expect(result.status === 'completed' && result.value).toEqual({
        count: ELEMENTS,
        sum: ELEMENTS * (ELEMENTS - 1),
      });
      expect(runs.every((n) => n === 1)).toBe(true);
      const collected = result.steps['m']?.result as {
        values: number[];
        successes: number[];
        succeeded: { index: number; value: number }[];
        failures: unknown[];
        notStarted: number[];
      };
      const doubled = xs.map((x) => x * 2);
      expect(collected.values).toEqual(doubled);
      expect(collected.successes).toEqual(doubled);
      expect(collected.succeeded).toHaveLength(ELEMENTS);
      expect(collected.succeeded[ELEMENTS - 1]).toEqual({ index: ELEMENTS - 1, value: 2 * (ELEMENTS - 1) });
      expect(collected.failures).toEqual([]);
      expect(collected.notStarted).toEqual([]);
      // The run's own jobs: the first (dispatch, park) and the one wake; one park, one collect.
      const types = events.map((e) => e.type);
      expect(types.filter((t) => t === 'run.resumed')).toHaveLength(2);
      expect(types.filter((t) => t === 'map.parked')).toHaveLength(1);
      expect(events.filter((e) => e.type === 'map.collected')).toEqual([
        expect.objectContaining({ completed: ELEMENTS, failed: 0, skipped: 0, notStarted: 0 }),
      ]);
      const element = await engine.result(`${executionId}/m[9999]`);
      expect(element).toMatchObject({ status: 'completed', value: 19_998 });
    } finally {
      await engine.close();
    }
  }, 90_000);
});
