/**
 * Schedules in this process on every backend of the matrix: ticks missed while no worker ran are
 * caught up once under `catch_up_one`, a six-field cron in a non-UTC zone ticks on whole seconds,
 * the next runs shown are the instants BullMQ's scheduler fires (on Redis, also at a
 * daylight-saving edge where cron-parser 4 and 5 disagree), a bad definition (or an input that
 * does not satisfy its reactor's contract) is refused before anything reaches the backend, and a
 * tick whose input fails emits `schedule.failed` and starts nothing.
 */
import { Queue } from 'bullmq';
import { expect, test } from 'vitest';
import { z } from 'zod';
import { ScheduleInvalidError, reactor } from '../../src/index.js';
import { prometheusMetrics } from '../../src/metrics/index.js';
import { scheduleQueueName } from '../../src/queue/bullmq-schedules.js';
import type { ScheduleEvent } from '../../src/schedules/index.js';
import { describeOnBackends, testWhere, type MatrixRuntime } from '../support/backend-matrix.js';

const ping = reactor('sched-ping')
  .step('pong', { run: () => 'pong' })
  .returns('pong');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describeOnBackends('schedules in this process', (backend) => {
  const runtimeOn = (): MatrixRuntime => backend.runtime({ reactors: [ping] });

  test('catch_up_one: a worker that starts late runs the last missed tick once, then the current one', async () => {
    const runtime = runtimeOn();
    const events: ScheduleEvent[] = [];
    runtime.schedules.subscribe((e) => events.push(e));
    const first = Math.ceil(Date.now() / 1000) * 1000 + 1000;
    await runtime.schedules.upsert({ id: 'late', reactor: ping, every: '1s', startAt: first, missed: 'catch_up_one' });
    await sleep(first + 3_500 - Date.now()); // ticks first … first + 3 s pass with no worker
    runtime.startWorker();
    // However long a loaded machine takes to start the worker: the catch-up and a current tick.
    await expect
      .poll(() => events.some((e) => e.type === 'schedule.ticked' && !e.replay && !e.caughtUp), { timeout: 20_000 })
      .toBe(true);
    await runtime.schedules.remove('late');
    const missed = events.find((e) => e.type === 'schedule.missed');
    const ticked = events.filter((e) => e.type === 'schedule.ticked' && !e.replay) as Extract<
      ScheduleEvent,
      { type: 'schedule.ticked' }
    >[];
    expect(missed).toMatchObject({ policy: 'catch_up_one', from: first });
    const current = ticked.find((e) => !e.caughtUp)!;
    const caught = ticked.filter((e) => e.caughtUp);
    expect(caught.map((e) => e.tickAt)).toEqual([current.tickAt - 1000]);
    expect(current.tickAt).toBeGreaterThanOrEqual(first + 3_000);
    expect(events.filter((e) => e.type === 'schedule.failed')).toEqual([]);
  }, 40_000);

  test('a six-field cron in Asia/Kolkata ticks every second on whole seconds', async () => {
    const runtime = runtimeOn();
    const ticks: number[] = [];
    runtime.schedules.subscribe((e) => void (e.type === 'schedule.ticked' && !e.replay && ticks.push(e.tickAt)));
    runtime.startWorker();
    const info = await runtime.schedules.upsert({
      id: 'each-second',
      reactor: ping,
      cron: { pattern: '* * * * * *', tz: 'Asia/Kolkata' },
    });
    expect(info.nextRuns.map((d) => d.getTime() % 1000)).toEqual([0, 0, 0, 0, 0]);
    await expect.poll(() => ticks.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    await runtime.schedules.remove('each-second');
    expect(ticks.every((t) => t % 1000 === 0)).toBe(true);
    expect(new Set(ticks).size).toBe(ticks.length);
  }, 40_000);

  // Compares with BullMQ's job scheduler read straight from Redis: a Redis-only reader.
  testWhere(backend.name === 'redis')(
    "the next run shown is the instant BullMQ's scheduler fires, at an edge where cron-parser 4 and 5 disagree",
    async () => {
      const runtime = runtimeOn();
      // Pacific/Chatham's clocks go back from 03:45 to 02:45 on 4 April 2027: after this instant
      // cron-parser 4 finds 03:00 on the 4th (14:15 UTC on the 3rd), cron-parser 5 the 5th.
      const startAt = Date.UTC(2027, 3, 3, 13, 30);
      const info = await runtime.schedules.upsert({
        id: 'chatham',
        reactor: ping,
        cron: { pattern: '0 3 * * *', tz: 'Pacific/Chatham' },
        startAt,
      });
      const queue = new Queue(scheduleQueueName(`${runtime.namespace}-q`), {
        connection: { url: backend.address().url! },
        prefix: runtime.namespace,
      });
      try {
        const scheduler = await queue.getJobScheduler('chatham');
        expect(scheduler?.next).toBeGreaterThan(startAt);
        expect(info.nextRuns[0]?.getTime()).toBe(scheduler?.next);
      } finally {
        await queue.close();
        await runtime.schedules.remove('chatham');
      }
    },
  );

  test('a bad cron or zone is refused before the backend', async () => {
    const runtime = runtimeOn();
    await expect(
      runtime.schedules.upsert({ id: 'bad', reactor: ping, cron: { pattern: '0 25 * * *' } }),
    ).rejects.toBeInstanceOf(ScheduleInvalidError);
    await expect(
      runtime.schedules.upsert({ id: 'bad', reactor: ping, cron: { pattern: '0 2 * * *', tz: 'Europe/Nowhere' } }),
    ).rejects.toMatchObject({ code: 'schedule_invalid', details: { field: 'cron.tz' } });
    expect(await runtime.schedules.list()).toEqual([]);
  });

  test("an input that does not satisfy the reactor's contract: refused at upsert; a failing tick emits schedule.failed", async () => {
    const order = reactor('sched-order')
      .input({ orderId: z.string().min(1) })
      .step('take', { args: ($) => ({ id: $.input('orderId') }), run: ({ id }) => id })
      .returns('take');
    let orderId: unknown = '';
    const metrics = prometheusMetrics();
    const runtime = backend.runtime({
      reactors: [order],
      middleware: [metrics.middleware],
      scheduleInputs: { computed: () => ({ orderId }) },
    });
    await expect(
      runtime.schedules.upsert({ id: 'fixed', reactor: order, every: '1s', input: { orderId: 7 } }),
    ).rejects.toMatchObject({ code: 'schedule_invalid', details: { field: 'input', issues: [{ path: 'orderId' }] } });
    expect(await runtime.schedules.list()).toEqual([]); // nothing reached the backend

    const events: ScheduleEvent[] = [];
    runtime.schedules.subscribe((e) => events.push(e));
    runtime.startWorker();
    await runtime.schedules.upsert({ id: 'computed', reactor: order, every: '1s', inputFrom: 'computed' });
    await expect.poll(() => events.some((e) => e.type === 'schedule.failed'), { timeout: 20_000 }).toBe(true);
    const failed = events.find((e) => e.type === 'schedule.failed')!;
    expect(failed).toMatchObject({ scheduleId: 'computed', error: { code: 'input_invalid' } });
    // Until the input is valid, no tick reports an execution, and none was written.
    expect(events.filter((e) => e.type === 'schedule.ticked')).toEqual([]);
    expect((await runtime.engine.store.list()).records).toEqual([]);
    expect(await metrics.text()).toMatch(
      /ts_reactor_schedule_ticks_total\{schedule="computed",reactor="sched-order",outcome="failed"\} [1-9]/,
    );
    // The list (and so the dashboard's Schedules page) shows the latest tick's failure, read from the backend.
    await expect
      .poll(async () => (await runtime.schedules.get('computed'))?.lastFailure?.code, { timeout: 20_000 })
      .toBe('input_invalid');
    orderId = 'o-1';
    await expect.poll(() => events.some((e) => e.type === 'schedule.ticked'), { timeout: 20_000 }).toBe(true);
    await expect
      .poll(async () => (await runtime.schedules.get('computed'))?.lastFailure, { timeout: 20_000 })
      .toBeUndefined();
    await runtime.schedules.remove('computed');
    const ticked = events.find((e) => e.type === 'schedule.ticked')!;
    expect(ticked.type === 'schedule.ticked' && ticked.executionId).toBeTruthy();
    const done = await runtime.engine.wait(ticked.type === 'schedule.ticked' ? ticked.executionId : '', order, {
      timeoutMs: 20_000,
    });
    expect(done).toMatchObject({ status: 'completed', value: 'o-1' });
  }, 60_000);
});
