/**
 * Sleep steps (docs/time.md#sleeps, docs/decisions/077) on the memory backend with the manual
 * clock: a multi-day sleep between two steps completes once the clock is advanced (no real wait),
 * inline or parked in a worker; `until` from a step's result; cancel during a sleep rolls back the
 * steps before it; `engine.wake`; definition errors; no queue → `sleep_needs_worker`.
 */
import { describe, expect, test } from 'vitest';
import {
  DefinitionError,
  MemoryStore,
  SleepNeedsWorkerError,
  createEngine,
  errorFromJSON,
  errorToJSON,
  reactor,
  type ReactorEvent,
} from '../../src/index.js';
import { SLEEP_WAKE_LEAD_MS } from '../../src/engine/graph/sleep.js';
import { ManualClock, createTestEngine } from '../../src/testing/index.js';
import '../../src/testing/vitest.js';

const DAY = 86_400_000;

/** Lets pending callbacks run until `probe` holds (no virtual time passes). */
async function settleUntil(probe: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (await probe()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never reached: ${what}`);
}

/** Lets the pool's jobs run until the execution is parked on its sleep (the wake job is delayed: no drain). */
async function parked(t: ReturnType<typeof createTestEngine>, id: string): Promise<void> {
  await settleUntil(async () => (await t.engine.store.get(id))?.status === 'parked', 'parked on the sleep');
}

const has = (events: readonly ReactorEvent[], type: ReactorEvent['type'], step?: string): boolean =>
  events.some((e) => e.type === type && (step === undefined || ('step' in e && e.step === step)));

function twoSteps(name: string, undone: string[] = []) {
  return reactor(name)
    .step('before', { run: () => 'ready', undo: () => void undone.push('before') })
    .sleep('wait', { for: '3d', waitFor: ['before'] })
    .step('after', { waitFor: ['wait'], run: () => 'done' })
    .returns('after');
}

describe('a sleep step, inline on the manual clock', () => {
  test('a 3-day sleep between two steps completes after clock.advance("3d"), with no real wait', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock, maxInlineSleepMs: Infinity });
    const startedAt = clock.now();
    const real = Date.now();
    const running = t.run(twoSteps('inline-3d'), {});
    await settleUntil(() => has(t.events, 'step.sleeping', 'wait'), 'the sleep started');
    const sleeping = t.events.find((e) => e.type === 'step.sleeping');
    expect(sleeping).toMatchObject({ step: 'wait', wakeAt: startedAt + 3 * DAY });
    clock.advance('2d');
    await settleUntil(() => true, 'a turn');
    expect(has(t.events, 'step.started', 'after')).toBe(false);
    clock.advance('1d');
    const result = await running;
    expect(result).toHaveCompleted();
    expect(result.status === 'completed' && result.value).toBe('done');
    expect(result.steps['wait']?.result).toEqual({
      wakeAt: startedAt + 3 * DAY,
      wokeAt: startedAt + 3 * DAY,
      early: false,
    });
    expect(has(t.events, 'step.woke', 'wait')).toBe(true);
    expect(Date.now() - real).toBeLessThan(2_000);
  });

  test('until from a step result: 24 h after the order was created', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock, maxInlineSleepMs: Infinity });
    const createdAt = clock.now() - 3_600_000; // created an hour ago
    const r = reactor('until-result')
      .step('order', { run: () => ({ id: 'o-1', createdAt: new Date(createdAt) }) })
      .sleep('reminder', { until: ($) => $.result('order', 'createdAt').transform((at) => at.getTime() + DAY) })
      .step('remind', {
        args: ($) => ({ id: $.result('order', 'id') }),
        waitFor: ['reminder'],
        run: ({ id }) => `reminded ${id}`,
      })
      .returns('remind');
    const running = t.run(r, {});
    await settleUntil(() => has(t.events, 'step.sleeping', 'reminder'), 'the sleep started');
    expect(t.events.find((e) => e.type === 'step.sleeping')).toMatchObject({ wakeAt: createdAt + DAY });
    clock.advance('23h');
    const result = await running;
    expect(result.status === 'completed' && result.value).toBe('reminded o-1');
  });

  test('an instant already past completes at once; an invalid until never starts (sleep_until_invalid)', async () => {
    const t = createTestEngine();
    const past = reactor('past')
      .sleep('wait', { until: ($) => $.value(0) })
      .build();
    expect(await t.run(past, {})).toHaveCompleted();
    const bad = reactor('bad-until')
      .step('at', { run: () => Number.NaN })
      .sleep('wait', { until: ($) => $.result('at') })
      .build();
    const result = await t.run(bad, {});
    expect(result).toHaveFailedAt('wait');
    expect(result.status === 'failed' && result.error).toMatchObject({ code: 'sleep_until_invalid' });
  });

  test('cancel during an inline sleep rolls back the steps before it', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock, maxInlineSleepMs: Infinity });
    const undone: string[] = [];
    const running = t.run(twoSteps('inline-cancel', undone), {});
    await settleUntil(() => has(t.events, 'step.sleeping', 'wait'), 'the sleep started');
    const id = t.events[0]!.executionId;
    await t.engine.cancel(id, { reason: 'changed my mind' });
    const result = await running;
    expect(result.status).toBe('cancelled');
    expect(undone).toEqual(['before']);
    expect(has(t.events, 'step.started', 'after')).toBe(false);
  });

  test('a timer that fires a millisecond before the clock reaches the wake time does not wake the sleep early', async () => {
    // Like Node's timers against Date.now(): each sleep resolves 1 ms short of what it asked.
    let now = 1_000_000;
    const sleeps: number[] = [];
    const earlyClock = {
      now: () => now,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        now += Math.max(1, ms - 1);
      },
      every: () => () => undefined,
    };
    const engine = createEngine({ store: new MemoryStore(), clock: earlyClock });
    const napper = reactor('early-timer')
      .sleep('nap', { for: 2_000 })
      .step('after', { waitFor: ['nap'], run: () => 'done' })
      .returns('after');
    const result = await engine.run(napper, {});
    expect(result.status).toBe('completed');
    const nap = result.steps['nap']?.result as { wakeAt: number; wokeAt: number; early: boolean };
    expect(nap.wokeAt).toBeGreaterThanOrEqual(nap.wakeAt);
    expect(nap.early).toBe(false);
    expect(sleeps).toEqual([2_000, 1]);
  });

  test('without a queue, a sleep over maxInlineSleepMs fails with SleepNeedsWorkerError (revived from JSON)', async () => {
    const undone: string[] = [];
    const engine = createEngine({ store: new MemoryStore(), clock: new ManualClock() });
    const result = await engine.run(twoSteps('no-queue', undone), {});
    expect(result.status).toBe('failed');
    const error = result.status === 'failed' ? result.error : undefined;
    expect(error).toBeInstanceOf(SleepNeedsWorkerError);
    expect((error as SleepNeedsWorkerError).details).toEqual({
      step: 'wait',
      sleepMs: 3 * DAY,
      maxInlineSleepMs: 5_000,
    });
    expect(errorFromJSON(errorToJSON(error!))).toBeInstanceOf(SleepNeedsWorkerError);
    expect(undone).toEqual(['before']);
  });

  test('a short sleep waits in process (auto-advancing clock)', async () => {
    const t = createTestEngine();
    const r = reactor('short').sleep('wait', { for: '2s' }).build();
    const result = await t.run(r, {});
    expect(result).toHaveCompleted();
    expect(t.clock.sleeps).toContain(2_000);
  });

  test('maxInlineSleepMs is validated', () => {
    expect(() => createEngine({ store: new MemoryStore(), maxInlineSleepMs: -1 })).toThrow(RangeError);
  });
});

describe('a sleep step, in a worker (the test pool)', () => {
  test('a sleep over maxInlineSleepMs hands off: parked on a delayed job, completed after clock.advance("3d")', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock });
    const startedAt = clock.now();
    const queued = await t.run(twoSteps('handoff-3d'), {});
    expect(queued.status).toBe('queued');
    await parked(t, queued.executionId);
    const record = await t.engine.store.get(queued.executionId);
    expect(record?.status).toBe('parked');
    expect(record?.background?.waitingFor).toMatchObject({
      primitive: 'sleep',
      key: 'wait',
      dueAt: startedAt + 3 * DAY,
    });
    expect(record?.steps['wait']).toMatchObject({ status: 'running', wakeAt: startedAt + 3 * DAY });
    clock.advance('3d');
    await t.drain();
    const result = (await t.engine.result(queued.executionId))!;
    expect(result).toMatchObject({ status: 'completed', value: 'done' });
  });

  test('cancel while parked on a sleep rolls back the steps before it', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock });
    const undone: string[] = [];
    const queued = await t.run(twoSteps('parked-cancel', undone), {});
    await parked(t, queued.executionId);
    expect((await t.engine.store.get(queued.executionId))?.status).toBe('parked');
    const result = await t.engine.cancel(queued.executionId);
    expect(result.status).toBe('cancelled');
    expect(undone).toEqual(['before']);
    clock.advance('3d');
    await t.drain(); // the wake job finds a terminal record: nothing runs
    expect((await t.engine.result(queued.executionId))?.status).toBe('cancelled');
    expect(has(t.events, 'step.started', 'after')).toBe(false);
  });

  test('engine.wake wakes a sleeping execution now (early: true); false for one not sleeping', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock });
    const queued = await t.run(twoSteps('wake-now'), {});
    await parked(t, queued.executionId);
    expect(await t.engine.wake(queued.executionId)).toBe(true);
    await t.drain();
    const result = (await t.engine.result(queued.executionId))!;
    expect(result).toHaveCompleted();
    expect(result.steps['wait']?.result).toMatchObject({ early: true });
    expect(t.events.find((e) => e.type === 'step.woke')).toMatchObject({ early: true });
    expect(has(t.events, 'run.woken')).toBe(true);
    expect(await t.engine.wake(queued.executionId)).toBe(false);
    await expect(t.engine.wake('')).rejects.toThrow(TypeError);
  });
});

describe('a sleep step, delivered within its wake lead', () => {
  test('a wake job delivered up to SLEEP_WAKE_LEAD_MS early waits out the rest in process and wakes on time (early: false)', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock });
    const queued = await t.run(twoSteps('lead-wake'), {});
    await parked(t, queued.executionId);
    clock.advance(3 * DAY - 30); // 30 ms before the wake time: within the lead, so not an operator's early wake
    const queuedBefore = t.events.filter((e) => e.type === 'run.queued').length;
    expect(await t.engine.wake(queued.executionId)).toBe(true);
    for (let i = 0; i < 200; i++) await new Promise((resolve) => setImmediate(resolve)); // the job is taken and runs to the sleep
    expect(has(t.events, 'step.woke')).toBe(false); // waiting for the clock, not woken early
    clock.advance(30);
    await t.drain();
    const result = (await t.engine.result(queued.executionId))!;
    expect(result).toHaveCompleted();
    const sleep = result.steps['wait']?.result as { wakeAt: number; wokeAt: number; early: boolean };
    expect(sleep.early).toBe(false);
    expect(sleep.wokeAt).toBe(sleep.wakeAt);
    expect(t.events.filter((e) => e.type === 'run.queued')).toHaveLength(queuedBefore); // no second park
  });

  test("a wake job delivered earlier than the lead is an operator's early wake", async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock });
    const queued = await t.run(twoSteps('lead-early'), {});
    await parked(t, queued.executionId);
    clock.advance(3 * DAY - SLEEP_WAKE_LEAD_MS - 100);
    expect(await t.engine.wake(queued.executionId)).toBe(true);
    await t.drain();
    const result = (await t.engine.result(queued.executionId))!;
    expect(result.steps['wait']?.result).toMatchObject({ early: true });
  });
});

describe('a sleep step, composed and coordinated', () => {
  test('a sleep inside a composed reactor parks the parent in a worker and completes after the clock passes it', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock });
    const child = reactor('nap-child')
      .sleep('nap', { for: '1d' })
      .step('up', { waitFor: ['nap'], run: () => 'up' })
      .returns('up');
    const parent = reactor('nap-parent')
      .step('first', { run: () => 1 })
      .compose('child', child, { waitFor: ['first'] })
      .returns('child');
    const queued = await t.run(parent, {});
    await parked(t, queued.executionId);
    expect((await t.engine.store.get(queued.executionId))?.background?.waitingFor).toMatchObject({
      primitive: 'sleep',
      key: 'child.nap',
    });
    clock.advance('1d');
    await t.drain();
    expect(await t.engine.result(queued.executionId)).toMatchObject({ status: 'completed', value: 'up' });
  });

  test('a sleeping execution holds no reactor-level lock: another execution of the key runs meanwhile', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock });
    const locked = reactor('locked-nap')
      .withLock({ key: () => 'account-1' })
      .step('before', { run: () => 'ready' })
      .sleep('nap', { for: '1h', waitFor: ['before'] })
      .build();
    const first = await t.run(locked, {});
    await parked(t, first.executionId);
    const second = await t.run(locked, {});
    await parked(t, second.executionId);
    expect((await t.engine.store.get(second.executionId))?.background?.waitingFor?.primitive).toBe('sleep');
    clock.advance('1h');
    await t.drain();
    expect((await t.engine.result(first.executionId))?.status).toBe('completed');
    expect((await t.engine.result(second.executionId))?.status).toBe('completed');
  });
});

describe('sleep definitions', () => {
  test('a zero or negative duration, both or neither of for/until, and a sleep inside a map element are definition errors', () => {
    const base = reactor('defs');
    expect(() => base.sleep('a', { for: 0 })).toThrow(DefinitionError);
    expect(() => base.sleep('a', { for: -5 })).toThrow(DefinitionError);
    expect(() => base.sleep('a', { for: '0s' })).toThrow(/positive duration/);
    expect(() => base.sleep('a', {} as never)).toThrow(/exactly one of for/);
    expect(() => base.sleep('a', { for: '1s', until: () => undefined } as never)).toThrow(/exactly one of for/);
    expect(() => base.sleep('a', { until: (() => 5) as never })).toThrow(/must return an argument/);
    const child = reactor('child').sleep('nap', { for: '1s' }).build();
    expect(() =>
      reactor('mapper')
        .step('items', { run: () => [1, 2] })
        .map('each', { source: ($) => $.result('items'), each: child, args: () => ({}) }),
    ).toThrow(/map elements cannot sleep/);
  });
});
