/**
 * Debounced starts on the memory backend with a manual clock (docs/decisions/086): 20 starts on
 * one key within the window run one execution with the last input; every other ends `cancelled`
 * with a `SupersededError` cause naming the start that replaced it; keys and reactors apart; a
 * start after the window (or after the winner began) supersedes nothing; idempotency, priority,
 * `startMany`; bad options refused before anything is written. No test sleeps.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  MemoryCoordinator,
  MemoryStore,
  reactor,
  type EngineOptions,
  type ReactorEvent,
  type RunResult,
  StartOptionsError,
  SupersededError,
} from '../../src/index.js';
import { debounceKey } from '../../src/engine/model/keys.js';
import { ManualClock } from '../../src/testing/clock.js';
import { manualEngine, type Manual } from './helpers.js';

const T0 = Date.UTC(2026, 0, 1);

/** An engine over the memory queue, store and coordinator, all on one manual clock; its worker started. */
function clocked(
  options: Partial<EngineOptions> = {},
): Manual & { clock: ManualClock; store: MemoryStore; coordinator: MemoryCoordinator } {
  const clock = new ManualClock({ start: T0, autoAdvance: false });
  const store = new MemoryStore({ clock });
  const coordinator = new MemoryCoordinator({ clock });
  const m = manualEngine({ clock, queueOptions: { clock }, store, coordinator, checkpointIntervalMs: 0, ...options });
  m.startWorker(4);
  return { ...m, clock, store, coordinator };
}

/** Lets the event loop turn (no timer: virtual time stands still), then waits for the pool to settle. */
async function settle(m: Pick<Manual, 'memory' | 'engine'>): Promise<void> {
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    await m.memory.queue.settled();
    await m.engine.idle();
  }
}

/** A reactor recording the input of each run. */
function recorder(runs: number[], name = 'debounced') {
  return reactor(name)
    .input({ n: z.number() })
    .step('work', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => (runs.push(n), n) })
    .returns('work');
}

/**
 * A reactor whose step records its input and waits until `release()`; its first debounced start
 * (key `k`, window 1 s) is running, its window over, when this resolves.
 */
async function firstRunning(m: ReturnType<typeof clocked>, name: string) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const runs: number[] = [];
  const slow = reactor(name)
    .input({ n: z.number() })
    .step('work', { args: ($) => ({ n: $.input('n') }), run: async ({ n }) => (runs.push(n), await held, n) })
    .returns('work');
  const first = await m.engine.start(slow, { n: 1 }, { debounce: { key: 'k', window: 1_000 } });
  m.clock.advance(1_000);
  for (let i = 0; i < 200 && runs.length === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  expect(runs).toEqual([1]);
  return { slow, runs, release, first };
}

describe('debounce (memory, manual clock)', () => {
  test('20 starts on one key within the window: exactly one execution runs, with the last input', async () => {
    const m = clocked();
    const events: ReactorEvent[] = [];
    m.engine.subscribe((e) => void events.push(e));
    const runs: number[] = [];
    const r = recorder(runs);
    const started: RunResult[] = [];
    for (let n = 1; n <= 20; n++) {
      started.push(await m.engine.start(r, { n }, { debounce: { key: 'user-1', window: '10s' } }));
      m.clock.advance(100); // each within the window of the one before
    }
    for (const s of started) expect(s.status).toBe('queued');
    expect(started[19]).toMatchObject({ startAt: T0 + 1_900 + 10_000 });
    expect(m.memory.queue.counts()).toMatchObject({ delayed: 1 }); // the superseded starts' jobs are discarded
    await settle(m);
    expect(runs).toEqual([]);
    m.clock.advance(10_000 - 100);
    await settle(m);
    expect(runs).toEqual([20]);
    const last = started[19]!.executionId;
    expect(await m.engine.result(last)).toMatchObject({ status: 'completed', value: 20 });
    for (let i = 0; i < 19; i++) {
      const result = await m.engine.result(started[i]!.executionId);
      expect(result).toMatchObject({ status: 'cancelled', supersededBy: started[i + 1]!.executionId });
      if (result?.status !== 'cancelled') throw new Error('not cancelled');
      expect(result.cause).toBeInstanceOf(SupersededError);
      expect(result.cause).toMatchObject({ code: 'superseded', details: { debounceKey: 'user-1' } });
      expect(result.steps).toEqual({});
    }
    const superseded = events.filter((e) => e.type === 'run.superseded');
    expect(superseded).toHaveLength(19);
    expect(superseded[0]).toMatchObject({
      executionId: started[0]!.executionId,
      supersededBy: started[1]!.executionId,
    });
  });

  test('following supersededBy from any superseded start reaches the execution that ran', async () => {
    const m = clocked();
    const runs: number[] = [];
    const r = recorder(runs);
    const ids: string[] = [];
    for (let n = 1; n <= 5; n++)
      ids.push((await m.engine.start(r, { n }, { debounce: { key: 'k', window: 1_000 } })).executionId);
    m.clock.advance(1_000);
    await settle(m);
    let result = await m.engine.wait(ids[0]!);
    while (result.status === 'cancelled' && result.supersededBy !== undefined)
      result = await m.engine.wait(result.supersededBy);
    expect(result).toMatchObject({ status: 'completed', value: 5, executionId: ids[4] });
    expect(runs).toEqual([5]);
  });

  test('keys and reactors debounce apart; a start after the window supersedes nothing', async () => {
    const m = clocked();
    const runs: number[] = [];
    const a = recorder(runs, 'a');
    const b = recorder(runs, 'b');
    await m.engine.start(a, { n: 1 }, { debounce: { key: 'x', window: 1_000 } });
    await m.engine.start(a, { n: 2 }, { debounce: { key: 'y', window: 1_000 } });
    await m.engine.start(b, { n: 3 }, { debounce: { key: 'x', window: 1_000 } });
    m.clock.advance(1_000);
    await settle(m);
    expect([...runs].sort()).toEqual([1, 2, 3]);
    const late = await m.engine.start(a, { n: 4 }, { debounce: { key: 'x', window: 1_000 } });
    m.clock.advance(1_000);
    await settle(m);
    expect(runs).toContain(4);
    expect(await m.engine.result(late.executionId)).toMatchObject({ status: 'completed' });
  });

  test('a start that comes once the earlier one began supersedes nothing: both run', async () => {
    const m = clocked();
    const { slow, runs, release, first } = await firstRunning(m, 'slow-debounced');
    const second = await m.engine.start(slow, { n: 2 }, { debounce: { key: 'k', window: 1_000 } });
    release();
    m.clock.advance(1_000);
    await settle(m);
    expect(runs).toEqual([1, 2]);
    expect(await m.engine.result(first.executionId)).toMatchObject({ status: 'completed', value: 1 });
    expect(await m.engine.result(second.executionId)).toMatchObject({ status: 'completed', value: 2 });
  });

  test('a start that finds the slot still held by an earlier start that already began supersedes nothing: both run', async () => {
    // On Redis the slot is taken just after the start's job is enqueued, so it can outlive the
    // job's due time by a few ms: a start in that gap finds the slot held by a running start.
    const m = clocked();
    const coordinator = m.coordinator;
    const { slow, runs, release, first } = await firstRunning(m, 'slot-outlives-window');
    // Its slot expired with its window; hold it again, as if it had been taken a moment after
    // its job became due.
    const slot = debounceKey(slow.name, 'k');
    const holder = { owner: `debounce:${first.executionId}`, executionId: first.executionId };
    expect(await coordinator.lockState(slot)).toBeUndefined();
    expect((await coordinator.lockAcquire({ key: slot, holder, ttlMs: 60_000, unfenced: true })).acquired).toBe(true);
    const second = await m.engine.start(slow, { n: 2 }, { debounce: { key: 'k', window: 1_000 } });
    expect((await coordinator.lockState(slot))?.holder.executionId).toBe(second.executionId); // taken from the running one
    release();
    m.clock.advance(1_000);
    await settle(m);
    expect(runs).toEqual([1, 2]);
    expect(await m.engine.result(first.executionId)).toMatchObject({ status: 'completed', value: 1 });
    expect(await m.engine.result(second.executionId)).toMatchObject({ status: 'completed', value: 2 });
  });

  test('idempotency: a repeat is a replay of its execution and supersedes nothing', async () => {
    const m = clocked();
    const runs: number[] = [];
    const r = recorder(runs);
    const debounce = { key: 'k', window: 1_000 };
    const first = await m.engine.start(r, { n: 1 }, { debounce, idempotencyKey: 'order-1' });
    const second = await m.engine.start(r, { n: 2 }, { debounce });
    const repeat = await m.engine.start(r, { n: 3 }, { debounce, idempotencyKey: 'order-1' });
    expect(repeat).toMatchObject({ executionId: first.executionId, replay: true, status: 'cancelled' });
    m.clock.advance(1_000);
    await settle(m);
    expect(runs).toEqual([2]);
    expect(await m.engine.result(second.executionId)).toMatchObject({ status: 'completed' });
  });

  test('each start keeps its own priority: the one that runs has the last start’s', async () => {
    const m = clocked();
    const runs: number[] = [];
    const r = recorder(runs);
    await m.engine.start(r, { n: 1 }, { debounce: { key: 'k', window: 1_000 }, priority: 5 });
    const last = await m.engine.start(r, { n: 2 }, { debounce: { key: 'k', window: 1_000 }, priority: 1 });
    expect((await m.store.get(last.executionId))?.background).toMatchObject({ priority: 1, startAt: T0 + 1_000 });
    m.clock.advance(1_000);
    await settle(m);
    expect(runs).toEqual([2]);
  });

  test('startMany: debounced entries are started one by one, in order; the last of a key runs', async () => {
    const m = clocked();
    const runs: number[] = [];
    const r = recorder(runs);
    const debounce = { key: 'k', window: 1_000 };
    const results = await m.engine.startMany([
      { reactor: r, input: { n: 1 }, options: { debounce } },
      { reactor: r, input: { n: 2 }, options: { debounce } },
      { reactor: r, input: { n: 3 } },
    ]);
    expect(results.map((x) => x.status)).toEqual(['queued', 'queued', 'queued']);
    await settle(m);
    expect(runs).toEqual([3]);
    m.clock.advance(1_000);
    await settle(m);
    expect(runs).toEqual([3, 2]);
    expect(await m.engine.result(results[0].executionId)).toMatchObject({
      status: 'cancelled',
      supersededBy: results[1].executionId,
    });
  });

  test('startMany: five debounced entries of one key, in entry order; each superseded by the next, the last runs', async () => {
    const m = clocked();
    const runs: number[] = [];
    const r = recorder(runs);
    const debounce = { key: 'k', window: 1_000 };
    const results = await m.engine.startMany(
      [1, 2, 3, 4, 5].map((n) => ({ reactor: r, input: { n }, options: { debounce } })),
    );
    m.clock.advance(1_000);
    await settle(m);
    expect(runs).toEqual([5]);
    for (let i = 0; i < 4; i++)
      expect(await m.engine.result(results[i]!.executionId)).toMatchObject({
        status: 'cancelled',
        supersededBy: results[i + 1]!.executionId,
      });
  });

  test.each([
    ['an empty key', { debounce: { key: '', window: 1_000 } }, 'debounce.key'],
    ['a key that is not a string', { debounce: { key: 7, window: 1_000 } }, 'debounce.key'],
    ['a window of 0', { debounce: { key: 'k', window: 0 } }, 'debounce.window'],
    ['a negative window', { debounce: { key: 'k', window: -5 } }, 'debounce.window'],
    ['a window not understood', { debounce: { key: 'k', window: 'soon' } }, 'debounce.window'],
    ['debounce and delay', { debounce: { key: 'k', window: 1_000 }, delay: 5 }, 'delay'],
    ['debounce and at', { debounce: { key: 'k', window: 1_000 }, at: T0 }, 'at'],
    ['debounce not an object', { debounce: 'k' }, 'debounce'],
  ])('%s: StartOptionsError (start_options_invalid), nothing written or enqueued', async (_, options, option) => {
    const m = clocked();
    const runs: number[] = [];
    const error: unknown = await m.engine.start(recorder(runs), { n: 1 }, options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartOptionsError);
    expect(error).toMatchObject({ code: 'start_options_invalid', details: { option } });
    expect((await m.store.list()).records).toHaveLength(0);
    expect(m.memory.queue.counts()).toMatchObject({ ready: 0, delayed: 0, running: 0 });
  });
});
