/**
 * A worker reader parked on an async unit counts its parks (issue 5 gap): each fallback job that
 * finds the unit still running re-parks the reader with the next `waitingFor.attempt`, and the
 * count survives the record round trip between jobs.
 */
import { describe, expect, test } from 'vitest';
import { createEmbeddedEngine, reactor } from '../../src/index.js';
import { eventsOf, gate, until } from '../background/helpers.js';

describe('a parked reader counts its parks', () => {
  test('waitingFor.attempt goes 1, 2, 3 … across re-parks on the same unit; the reader completes once the unit does', async () => {
    const engine = createEmbeddedEngine({ background: { parkFallbackMs: 15, workerWaitMs: 0 } });
    const open = gate();
    const r = reactor('park-count')
      .background('all')
      .asyncStep('slow', { run: async () => (await open.promise, 'late') })
      .step('read', { args: ($) => ({ v: $.result('slow') }), run: ({ v }) => `got ${v}` })
      .returns('read');
    const seen: number[] = [];
    try {
      const started = await engine.start(r, {});
      const unitId = `${started.executionId}~slow`;
      await until(
        async () => {
          const record = await engine.store.get(started.executionId);
          const attempt = record?.status === 'parked' ? record.background?.waitingFor?.attempt : undefined;
          if (attempt !== undefined && seen.at(-1) !== attempt) seen.push(attempt);
          return attempt !== undefined && attempt >= 3;
        },
        5_000,
        'the reader to park a third time',
      );
      expect(seen[0]).toBe(1);
      expect(seen).toEqual([...seen].sort((a, b) => a - b)); // never goes back
      expect(seen.at(-1)).toBeGreaterThanOrEqual(3);
      const record = (await engine.store.get(started.executionId))!;
      expect(record.background?.waitingFor).toMatchObject({ primitive: 'async', key: unitId });
      open.open();
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toMatchObject({ status: 'completed', value: 'got late' });
      expect(
        eventsOf(done?.trace ?? [], 'async.waiting').filter((e) => e.mode === 'park').length,
      ).toBeGreaterThanOrEqual(3);
    } finally {
      open.open();
      await engine.close();
    }
  });
});
