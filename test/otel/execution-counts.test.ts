/**
 * `executionCounts`: the unfinished executions of a store by state, a sleep apart from other
 * parks, bounded by `cap` and reused for `maxAgeMs` (on the memory store and a manual clock).
 */
import { describe, expect, test } from 'vitest';
import { MemoryStore } from '../../src/index.js';
import { RECORD_VERSION, type ExecutionRecord, type WaitingFor } from '../../src/ports/store.js';
import { executionCounts } from '../../src/otel/execution-counts.js';
import { ManualClock } from '../../src/testing/index.js';

function record(id: string, status: ExecutionRecord['status'], waiting?: WaitingFor['primitive']): ExecutionRecord {
  return {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor: 'r',
    status,
    input: {},
    steps: {},
    rollbackFailures: [],
    createdAt: 0,
    updatedAt: 0,
    ...(waiting === undefined
      ? {}
      : {
          background: {
            jobs: 1,
            contention: 0,
            waitingFor: { primitive: waiting, key: 'k', attempt: 1, jobId: `${id}:2` },
          },
        }),
  };
}

describe('executionCounts', () => {
  test('counts unfinished executions by state; parked on a sleep counts as sleeping, paused on a failure as paused_on_failure; finished ones are left out', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const store = new MemoryStore({ clock });
    const saves = [
      record('a', 'parked', 'lock'),
      record('b', 'parked', 'rate_limit'),
      record('c', 'parked', 'sleep'),
      record('d', 'paused'),
      {
        ...record('h', 'paused'),
        pausedOn: { kind: 'failure' as const, step: 'charge', error: { name: 'Error', message: 'declined' }, at: 0 },
      },
      record('e', 'running'),
      record('f', 'completed'),
      record('g', 'failed'),
    ];
    for (const r of saves) await store.save(r);
    const counts = executionCounts(store, { now: () => clock.now() });
    expect(await counts()).toEqual({
      queued: 0,
      running: 1,
      parked: 2,
      sleeping: 1,
      paused: 1,
      paused_on_failure: 1,
      rolling_back: 0,
    });
  });

  test('a count is reused until maxAgeMs has passed, then read again', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const store = new MemoryStore({ clock });
    const counts = executionCounts(store, { maxAgeMs: 5_000, now: () => clock.now() });
    expect((await counts())['paused']).toBe(0);
    await store.save(record('p', 'paused'));
    clock.advance(4_999);
    expect((await counts())['paused']).toBe(0);
    clock.advance(1);
    expect((await counts())['paused']).toBe(1);
  });

  test('at most cap records are read per status; a failed read is not reused', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const store = new MemoryStore({ clock });
    for (let i = 0; i < 5; i++) await store.save(record(`s${i}`, 'parked', 'sleep'));
    expect((await executionCounts(store, { cap: 3, now: () => clock.now() })())['sleeping']).toBe(3);
    let fail = true;
    const flaky = {
      list: (filter?: Parameters<MemoryStore['list']>[0]) =>
        fail ? Promise.reject(new Error('down')) : store.list(filter),
    };
    const counts = executionCounts(flaky, { now: () => clock.now() });
    await expect(counts()).rejects.toThrow('down');
    fail = false;
    expect((await counts())['sleeping']).toBe(5);
  });

  test('a cap or maxAgeMs out of range is a RangeError', () => {
    const store = new MemoryStore();
    expect(() => executionCounts(store, { cap: 0 })).toThrow(RangeError);
    expect(() => executionCounts(store, { maxAgeMs: -1 })).toThrow(RangeError);
  });
});
