import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  MemoryStore,
  ReactorError,
  ScheduleInvalidError,
  ScheduleNotFoundError,
  createEmbeddedEngine,
  errorFromJSON,
  errorToJSON,
  reactor,
  type EmbeddedEngine,
} from '../../src/index.js';
import { MemorySchedules, type RuntimeMiddleware, type ScheduleEvent } from '../../src/schedules/index.js';
import { prometheusMetrics } from '../../src/metrics/index.js';
import { ManualClock } from '../../src/testing/clock.js';

const report = reactor('report')
  .input({ kind: z.string().optional(), tick: z.string().optional() })
  .step('echo', { args: ($) => ({ kind: $.input('kind'), tick: $.input('tick') }), run: (args) => args })
  .returns('echo');

const engines: EmbeddedEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

function engineOn(clock: ManualClock, extra: Parameters<typeof createEmbeddedEngine>[0] = {}): EmbeddedEngine {
  const engine = createEmbeddedEngine({ clock, reactors: [report], ...extra });
  engines.push(engine);
  return engine;
}

function ticked(engine: EmbeddedEngine): Extract<ScheduleEvent, { type: 'schedule.ticked' }>[] {
  const out: Extract<ScheduleEvent, { type: 'schedule.ticked' }>[] = [];
  engine.schedules.subscribe((e) => {
    if (e.type === 'schedule.ticked') out.push(e);
  });
  return out;
}

/** Lets the timers' continuations and the started jobs run. */
async function flush(...running: EmbeddedEngine[]): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  for (const engine of running) {
    await engine.schedules.idle();
    await engine.drain();
  }
}

async function stepTo(clock: ManualClock, at: number, ...running: EmbeddedEngine[]): Promise<void> {
  clock.set(at);
  await flush(...running);
}

const iso = (ms: number): string => new Date(ms).toISOString();
const T0 = Date.UTC(2026, 0, 1);

describe('schedules on the embedded pool (manual clock)', () => {
  test('every second: one execution per tick, keyed by the tick, with its fixed input', async () => {
    const clock = new ManualClock({ start: T0, autoAdvance: false });
    const engine = engineOn(clock);
    const events = ticked(engine);
    const info = await engine.schedules.upsert({ id: 'sec', reactor: report, every: '1s', input: { kind: 'fixed' } });
    expect(info.nextRuns.map((d) => d.getTime())).toEqual([1, 2, 3, 4, 5].map((s) => T0 + s * 1000));
    for (let s = 1; s <= 5; s++) await stepTo(clock, T0 + s * 1000, engine);
    expect(events.map((e) => e.tickAt)).toEqual([1, 2, 3, 4, 5].map((s) => T0 + s * 1000));
    expect(new Set(events.map((e) => e.executionId)).size).toBe(5);
    for (const event of events) {
      const record = await engine.store.get(event.executionId);
      expect(record?.idempotencyKey).toBe(`schedule:sec:${iso(event.tickAt)}`);
      const result = await engine.result(event.executionId);
      expect(result?.status === 'completed' && result.value).toEqual({ kind: 'fixed', tick: undefined });
    }
  });

  test('a computed input gets the tick time', async () => {
    const clock = new ManualClock({ start: T0, autoAdvance: false });
    const engine = engineOn(clock, {
      scheduleInputs: { withTick: (tick) => ({ kind: 'computed', tick: tick.toISOString() }) },
    });
    const events = ticked(engine);
    await engine.schedules.upsert({ id: 'c', reactor: 'report', every: '1m', inputFrom: 'withTick' });
    await stepTo(clock, T0 + 60_000, engine);
    const result = await engine.result(events[0]!.executionId);
    expect(result?.status === 'completed' && result.value).toEqual({ kind: 'computed', tick: iso(T0 + 60_000) });
  });

  test("a cron in Europe/Berlin across the March DST change fires at 02:00 local, and at 03:00 on the day 02:00 doesn't exist", async () => {
    const start = Date.parse('2026-03-27T12:00:00Z');
    const clock = new ManualClock({ start, autoAdvance: false });
    const engine = engineOn(clock);
    const events = ticked(engine);
    const info = await engine.schedules.upsert({
      id: 'nightly',
      reactor: report,
      cron: { pattern: '0 2 * * *', tz: 'Europe/Berlin' },
    });
    const expected = [
      '2026-03-28T01:00:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:00:00.000Z',
      '2026-03-31T00:00:00.000Z',
    ];
    expect(info.nextRuns.slice(0, 4).map((d) => d.toISOString())).toEqual(expected);
    // just before each instant nothing fires; at it, one execution
    for (const at of expected) {
      await stepTo(clock, Date.parse(at) - 1, engine);
      const before = events.length;
      await stepTo(clock, Date.parse(at), engine);
      expect(events.length).toBe(before + 1);
    }
    expect(events.map((e) => iso(e.tickAt))).toEqual(expected);
  });

  test('an hourly cron in Europe/Berlin across the October change fires every hour, the repeated hour twice', async () => {
    const clock = new ManualClock({ start: Date.parse('2026-10-24T22:00:00Z'), autoAdvance: false });
    const engine = engineOn(clock);
    const events = ticked(engine);
    await engine.schedules.upsert({
      id: 'hourly',
      reactor: report,
      cron: { pattern: '30 * * * *', tz: 'Europe/Berlin' },
    });
    const expected = ['22:30', '23:30']
      .map((h) => `2026-10-24T${h}:00.000Z`)
      .concat(['00:30', '01:30', '02:30'].map((h) => `2026-10-25T${h}:00.000Z`));
    for (const at of expected) await stepTo(clock, Date.parse(at), engine);
    expect(events.map((e) => iso(e.tickAt))).toEqual(expected);
    // a daily 02:30 on the same night fires once, at the first 02:30 (CEST)
    const daily = await engine.schedules.upsert({
      id: 'daily',
      reactor: report,
      cron: { pattern: '30 2 * * *', tz: 'Europe/Berlin' },
    });
    expect(daily.nextRuns[0]!.toISOString()).toBe('2026-10-26T01:30:00.000Z');
  });

  test('two engines with their own schedules on one store start each tick once (idempotency key)', async () => {
    const clock = new ManualClock({ start: T0, autoAdvance: false });
    const store = new MemoryStore({ clock });
    const a = engineOn(clock, { store });
    const b = engineOn(clock, { store });
    const events = [...[a, b].map(ticked)];
    for (const engine of [a, b]) await engine.schedules.upsert({ id: 'dup', reactor: report, every: '1s' });
    for (let s = 1; s <= 3; s++) await stepTo(clock, T0 + s * 1000, a, b);
    const all = events.flat();
    expect(all).toHaveLength(6);
    expect(all.filter((e) => !e.replay)).toHaveLength(3);
    expect(new Set(all.map((e) => e.executionId)).size).toBe(3);
  });

  test('two engines sharing one MemorySchedules deliver each tick once', async () => {
    const clock = new ManualClock({ start: T0, autoAdvance: false });
    const store = new MemoryStore({ clock });
    const schedules = new MemorySchedules();
    const a = engineOn(clock, { store, schedules });
    const b = engineOn(clock, { store, schedules });
    const events = [a, b].map(ticked);
    await a.schedules.upsert({ id: 'shared', reactor: report, every: '1s' });
    expect((await b.schedules.list()).map((s) => s.id)).toEqual(['shared']);
    for (let s = 1; s <= 4; s++) await stepTo(clock, T0 + s * 1000, a, b);
    expect(
      events
        .flat()
        .map((e) => e.tickAt)
        .sort(),
    ).toEqual([1, 2, 3, 4].map((s) => T0 + s * 1000));
  });

  describe('ticks missed while nothing ran', () => {
    async function downtime(
      missed: 'skip' | 'catch_up_one',
      spec: { every: '1s' } | { cron: { pattern: string; tz: string } },
      start: number,
      downUntil: number,
    ) {
      const clock = new ManualClock({ start, autoAdvance: false });
      const store = new MemoryStore({ clock });
      const schedules = new MemorySchedules();
      const first = engineOn(clock, { store, schedules });
      await first.schedules.upsert({ id: 'm', reactor: report, missed, ...spec });
      await first.close();
      engines.splice(engines.indexOf(first), 1);
      clock.set(downUntil);
      const second = createEmbeddedEngine({ clock, store, schedules, reactors: [report] });
      const all: ScheduleEvent[] = [];
      second.schedules.subscribe((e) => all.push(e));
      engines.push(second);
      await flush(second);
      return all;
    }

    test('skip: an interval resumes with the current tick; the ones before are reported missed', async () => {
      const events = await downtime('skip', { every: '1s' }, T0, T0 + 10_000);
      expect(events.map((e) => e.type)).toEqual(['schedule.missed', 'schedule.ticked']);
      expect(events[0]).toMatchObject({ count: 9, from: T0 + 1000, to: T0 + 9000, policy: 'skip' });
      expect(events[1]).toMatchObject({ tickAt: T0 + 10_000, caughtUp: false });
    });

    test('catch_up_one: the latest missed tick runs once, then the current one', async () => {
      const events = await downtime('catch_up_one', { every: '1s' }, T0, T0 + 10_000);
      const ticks = events.filter((e) => e.type === 'schedule.ticked');
      expect(ticks.map((e) => [e.tickAt, e.caughtUp])).toEqual([
        [T0 + 9000, true],
        [T0 + 10_000, false],
      ]);
      expect(events[0]).toMatchObject({ type: 'schedule.missed', count: 8 });
    });

    test('a daily cron down for three days: skip starts nothing, catch_up_one the last missed day', async () => {
      const spec = { cron: { pattern: '0 2 * * *', tz: 'Europe/Berlin' } };
      const start = Date.parse('2026-06-01T12:00:00Z');
      const until = Date.parse('2026-06-04T08:00:00Z'); // 10:00 in Berlin, 8 h after the day's 02:00
      const skipped = await downtime('skip', spec, start, until);
      expect(skipped.map((e) => e.type)).toEqual(['schedule.missed']);
      expect(skipped[0]).toMatchObject({ count: 3 });
      const caught = await downtime('catch_up_one', spec, start, until);
      expect(
        caught.filter((e) => e.type === 'schedule.ticked').map((e) => iso((e as { tickAt: number }).tickAt)),
      ).toEqual(['2026-06-04T00:00:00.000Z']);
    });
  });

  test('list, get with next runs, update, remove', async () => {
    const clock = new ManualClock({ start: T0, autoAdvance: false });
    const engine = engineOn(clock);
    const events = ticked(engine);
    await engine.schedules.upsert({ id: 'b', reactor: report, every: '1h' });
    await engine.schedules.upsert({ id: 'a', reactor: report, cron: { pattern: '0 9 * * 1-5' } });
    expect((await engine.schedules.list()).map((s) => [s.id, s.reactor])).toEqual([
      ['a', 'report'],
      ['b', 'report'],
    ]);
    expect((await engine.schedules.nextRuns('b', 2)).map((d) => d.getTime())).toEqual([T0 + 3_600_000, T0 + 7_200_000]);
    await engine.schedules.upsert({ id: 'b', reactor: report, every: '2h' });
    expect((await engine.schedules.get('b'))?.everyMs).toBe(7_200_000);
    expect(await engine.schedules.remove('b')).toBe(true);
    expect(await engine.schedules.remove('b')).toBe(false);
    await expect(engine.schedules.nextRuns('b')).rejects.toBeInstanceOf(ScheduleNotFoundError);
    await stepTo(clock, T0 + 7_200_000, engine);
    expect(events).toEqual([]);
  });

  test('invalid schedules are refused with typed errors', async () => {
    const engine = engineOn(new ManualClock({ start: T0, autoAdvance: false }));
    const refused = async (options: Parameters<EmbeddedEngine['schedules']['upsert']>[0]) =>
      engine.schedules.upsert(options).then(
        () => undefined,
        (error: unknown) => error,
      );
    const field = async (options: Parameters<EmbeddedEngine['schedules']['upsert']>[0]) => {
      const error = await refused(options);
      expect(error).toBeInstanceOf(ScheduleInvalidError);
      return (error as ScheduleInvalidError).details.field;
    };
    expect(await field({ id: 'x', reactor: report, cron: { pattern: '61 * * * *' } })).toBe('cron.pattern');
    expect(await field({ id: 'x', reactor: report, cron: { pattern: '* * *' } })).toBe('cron.pattern');
    expect(await field({ id: 'x', reactor: report, cron: { pattern: '0 2 * * *', tz: 'Mars/Olympus' } })).toBe(
      'cron.tz',
    );
    expect(await field({ id: 'x', reactor: report, every: '500ms' })).toBe('every');
    expect(await field({ id: 'x', reactor: report, every: 'soon' as never })).toBe('every');
    expect(await field({ id: 'x', reactor: report })).toBe('cron');
    expect(await field({ id: 'x', reactor: report, every: '1s', cron: { pattern: '* * * * *' } })).toBe('cron');
    expect(await field({ id: 'a:b', reactor: report, every: '1s' })).toBe('id');
    expect(await field({ id: 'x', reactor: report, every: '1s', input: (() => ({})) as never })).toBe('input');
    expect(await field({ id: 'x', reactor: report, every: '1s', inputFrom: 'nope' })).toBe('inputFrom');
    expect(await field({ id: 'x', reactor: report, every: '1s', missed: 'all' as never })).toBe('missed');
    expect(await field({ id: 'x', reactor: report, every: '1s', startAt: 10, endAt: 5 })).toBe('endAt');
    const unknown = await refused({ id: 'x', reactor: 'nobody', every: '1s' });
    expect(ReactorError.is(unknown, 'reactor_unknown')).toBe(true);
    expect(await engine.schedules.list()).toEqual([]);
  });

  describe("an input checked against the reactor's contract", () => {
    const order = reactor('sched-order')
      .input({ orderId: z.string().min(1) })
      .step('take', { args: ($) => ({ id: $.input('orderId') }), run: ({ id }) => id })
      .returns('take');

    test('upsert refuses a fixed input that does not satisfy it: a typed error, nothing stored', async () => {
      const engine = engineOn(new ManualClock({ start: T0, autoAdvance: false }), { reactors: [report, order] });
      for (const reactorRef of [order, 'sched-order'] as const) {
        const error = await engine.schedules
          .upsert({ id: 'bad', reactor: reactorRef, every: '1s', input: { orderId: 42 } })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ScheduleInvalidError);
        expect(error).toMatchObject({
          code: 'schedule_invalid',
          details: { schedule: 'bad', field: 'input', issues: [{ path: 'orderId' }] },
        });
        const back = errorFromJSON(JSON.parse(JSON.stringify(errorToJSON(error))));
        expect(back).toBeInstanceOf(ScheduleInvalidError);
        expect(back.details).toMatchObject({ field: 'input', issues: [{ path: 'orderId' }] });
      }
      // No input at all is refused the same way (the contract needs orderId).
      await expect(engine.schedules.upsert({ id: 'bad', reactor: order, every: '1s' })).rejects.toMatchObject({
        details: { field: 'input' },
      });
      expect(await engine.schedules.list()).toEqual([]);
      // A valid one is saved.
      await engine.schedules.upsert({ id: 'good', reactor: order, every: '1s', input: { orderId: 'o-1' } });
      expect((await engine.schedules.list()).map((i) => i.id)).toEqual(['good']);
    });

    test('a tick whose input fails emits schedule.failed, not schedule.ticked, starts nothing, and is counted', async () => {
      const clock = new ManualClock({ start: T0, autoAdvance: false });
      let orderId: unknown = '';
      const metrics = prometheusMetrics();
      const engine = engineOn(clock, {
        reactors: [report, order],
        scheduleInputs: { computed: () => ({ orderId }) },
        middleware: [metrics.middleware],
      });
      const events: ScheduleEvent[] = [];
      engine.schedules.subscribe((e) => events.push(e));
      await engine.schedules.upsert({ id: 'computed', reactor: order, every: '1s', inputFrom: 'computed' });
      await stepTo(clock, T0 + 1_000, engine);
      expect(events.map((e) => e.type)).toEqual(['schedule.failed']);
      const failed = events[0] as Extract<ScheduleEvent, { type: 'schedule.failed' }>;
      expect(failed).toMatchObject({ scheduleId: 'computed', reactor: 'sched-order', tickAt: T0 + 1_000 });
      expect(failed.error).toMatchObject({ code: 'input_invalid', details: { issues: [{ path: 'orderId' }] } });
      expect((await engine.store.list()).records).toEqual([]); // nothing started, nothing written
      // The next tick with a valid input starts its execution as usual.
      orderId = 'o-2';
      await stepTo(clock, T0 + 2_000, engine);
      const ticks = events.filter((e) => e.type === 'schedule.ticked');
      expect(ticks).toHaveLength(1);
      expect(await engine.result(ticks[0]!.executionId, order)).toMatchObject({ status: 'completed', value: 'o-2' });
      const text = await metrics.text();
      expect(text).toContain(
        'ts_reactor_schedule_ticks_total{schedule="computed",reactor="sched-order",outcome="failed"} 1',
      );
      expect(text).toContain(
        'ts_reactor_schedule_ticks_total{schedule="computed",reactor="sched-order",outcome="ticked"} 1',
      );
    });

    test('schedule.failed reaches an inline middleware through onScheduleEvent, like ticked; never onEvent or engine.subscribe', async () => {
      const clock = new ManualClock({ start: T0, autoAdvance: false });
      let orderId: unknown = '';
      const seen: ScheduleEvent[] = [];
      const engineEvents: string[] = [];
      const observer: RuntimeMiddleware = {
        name: 'schedule-watch',
        onEvent: (e) => void engineEvents.push(e.type),
        onScheduleEvent: (e) => void seen.push(e),
      };
      const engine = engineOn(clock, {
        reactors: [report, order],
        scheduleInputs: { computed: () => ({ orderId }) },
        middleware: [observer],
      });
      const subscribed: string[] = [];
      engine.subscribe((e) => void subscribed.push(e.type));
      await engine.schedules.upsert({ id: 'watched', reactor: order, every: '1s', inputFrom: 'computed' });
      await stepTo(clock, T0 + 1_000, engine);
      orderId = 'o-3';
      await stepTo(clock, T0 + 2_000, engine);
      expect(seen.map((e) => e.type)).toEqual(['schedule.failed', 'schedule.ticked']);
      expect(seen[0]).toMatchObject({ scheduleId: 'watched', tickAt: T0 + 1_000, error: { code: 'input_invalid' } });
      for (const types of [engineEvents, subscribed]) {
        expect(types).toContain('run.completed'); // the ticked execution's own events are the engine's
        expect(types.filter((t) => t.startsWith('schedule.'))).toEqual([]);
      }
    });

    test('a fixed input saved before its reactor changed its contract fails at each tick', async () => {
      const clock = new ManualClock({ start: T0, autoAdvance: false });
      const board = new MemorySchedules();
      // Saved by a process whose definition still accepted an empty order id.
      const before = reactor('sched-order')
        .input({ orderId: z.string() })
        .step('take', { run: () => 'x' })
        .returns('take');
      const writer = engineOn(clock, { reactors: [before], schedules: board });
      await writer.schedules.upsert({ id: 'stale', reactor: 'sched-order', every: '1s', input: { orderId: '' } });
      await writer.close();
      const engine = engineOn(clock, { reactors: [order], schedules: board });
      const events: ScheduleEvent[] = [];
      engine.schedules.subscribe((e) => events.push(e));
      await stepTo(clock, T0 + 1_000, engine);
      expect(events).toMatchObject([{ type: 'schedule.failed', error: { code: 'input_invalid' } }]);
      expect((await engine.store.list()).records).toEqual([]);
    });
  });

  test('startAt and endAt bound the ticks', async () => {
    const clock = new ManualClock({ start: T0, autoAdvance: false });
    const engine = engineOn(clock);
    const events = ticked(engine);
    await engine.schedules.upsert({ id: 'w', reactor: report, every: '1s', startAt: T0 + 2500, endAt: T0 + 5500 });
    expect((await engine.schedules.nextRuns('w', 10)).map((d) => d.getTime())).toEqual([
      T0 + 2500,
      T0 + 3500,
      T0 + 4500,
    ]);
    for (let ms = 500; ms <= 8000; ms += 500) await stepTo(clock, T0 + ms, engine);
    expect(events.map((e) => e.tickAt)).toEqual([T0 + 2500, T0 + 3500, T0 + 4500]);
  });
});
