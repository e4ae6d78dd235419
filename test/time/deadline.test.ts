/**
 * A reactor's deadline (docs/time.md "Deadlines", docs/decisions/081) on the memory backend with
 * the manual clock: an inline run past it rolls back like a cancel with a typed cause; in a
 * worker the deadline counts from the record's createdAt across redeliveries, and the deadline
 * job rolls back an execution that waits (a retry delay, a parked wait) when it passes; the
 * option is validated at definition; the error survives a JSON round trip.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  DeadlineExceededError,
  DefinitionError,
  MemoryCoordinator,
  errorFromJSON,
  errorToJSON,
  reactor,
  type ReactorEvent,
  type RunResult,
} from '../../src/index.js';
import { ManualClock, createTestEngine } from '../../src/testing/index.js';
import '../../src/testing/vitest.js';
import { manualEngine, until, untilStatus } from '../background/helpers.js';

/** Lets pending callbacks run until `probe` holds (no virtual time passes). */
async function settleUntil(probe: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (await probe()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never reached: ${what}`);
}

const started = (events: readonly ReactorEvent[], step: string): number =>
  events.filter((e) => e.type === 'step.started' && e.step === step).length;
/** A body that runs until its signal is aborted, then rejects with the signal's reason. */
const untilAborted = (_args: unknown, ctx: { readonly signal: AbortSignal }): Promise<never> =>
  new Promise<never>((_resolve, reject) =>
    ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)),
  );
const causeOf = (result: RunResult | undefined): Error | undefined =>
  result?.status === 'cancelled' ? result.cause : undefined;

describe('a reactor deadline, inline', () => {
  test('past the deadline the run rolls back like a cancel and ends cancelled with a DeadlineExceededError', async () => {
    const t = createTestEngine();
    const undone: string[] = [];
    let signal: AbortSignal | undefined;
    const r = reactor('inline-deadline', { deadline: '10s' })
      .step('reserve', { run: () => 'r1', undo: () => void undone.push('reserve') })
      .step('charge', {
        waitFor: ['reserve'],
        run: (args, ctx) => {
          signal = ctx.signal;
          return untilAborted(args, ctx);
        },
      })
      .build();
    const running = t.run(r, {});
    await settleUntil(() => started(t.events, 'charge') === 1, 'charge started');
    t.clock.advance(9_999);
    await settleUntil(() => true, 'a turn');
    expect(signal?.aborted).toBe(false);
    t.clock.advance(1);
    const result = await running;
    expect(result.status).toBe('cancelled');
    const cause = causeOf(result);
    expect(cause).toBeInstanceOf(DeadlineExceededError);
    const record = await t.store.get(result.executionId);
    expect((cause as DeadlineExceededError).details).toEqual({
      executionId: result.executionId,
      deadlineAt: record!.createdAt + 10_000,
      deadlineMs: 10_000,
    });
    expect(signal?.reason).toBeInstanceOf(DeadlineExceededError);
    expect(undone).toEqual(['reserve']);
    const types = t.events.map((e) => e.type);
    expect(types.indexOf('run.rolling_back')).toBeLessThan(types.indexOf('run.deadline_exceeded'));
    expect(types.indexOf('run.deadline_exceeded')).toBe(types.indexOf('run.cancelled') - 1);
    expect(record?.status).toBe('cancelled');
    expect(record?.cancelCause?.code).toBe('deadline_exceeded');
    expect(causeOf(await t.engine.result(result.executionId))).toBeInstanceOf(DeadlineExceededError);
  });

  test('a run that finishes before its deadline is not touched by it', async () => {
    const t = createTestEngine();
    const r = reactor('on-time', { deadline: 1_000 })
      .step('a', { run: () => 1 })
      .returns('a');
    const result = await t.run(r, {});
    expect(result).toMatchObject({ status: 'completed', value: 1 });
    t.clock.advance(5_000);
    expect((await t.store.get(result.executionId))?.status).toBe('completed');
  });

  test('an operator cancel carries no cause', async () => {
    const t = createTestEngine();
    const r = reactor('operator', { deadline: '1h' }).step('wait', { run: untilAborted }).build();
    const running = t.run(r, {});
    await settleUntil(() => started(t.events, 'wait') === 1, 'started');
    const id = t.events[0]!.executionId;
    await t.engine.cancel(id, { reason: 'changed my mind' });
    const result = await running;
    expect(result).toMatchObject({ status: 'cancelled', reason: 'changed my mind' });
    expect(causeOf(result)).toBeUndefined();
  });
});

describe('a reactor deadline, validated at definition', () => {
  test.each([0, -5, Number.POSITIVE_INFINITY, Number.NaN, '10 minutes', '-1s', {}])(
    'deadline %s is refused',
    (value) => {
      const build = () => reactor('bad-deadline', { deadline: value as never });
      expect(build).toThrow(DefinitionError);
      expect(build).toThrow(/reactor "bad-deadline": deadline must be a positive duration/);
      try {
        build();
      } catch (error) {
        expect((error as DefinitionError).reactor).toBe('bad-deadline');
      }
    },
  );

  test('a duration becomes deadlineMs; extend keeps it', () => {
    const r = reactor('ok-deadline', { deadline: '10m' })
      .step('a', { run: () => 1 })
      .build();
    expect(r.deadlineMs).toBe(600_000);
    expect(r.extend('derived').build().deadlineMs).toBe(600_000);
    expect(
      reactor('none')
        .step('a', { run: () => 1 })
        .build().deadlineMs,
    ).toBeUndefined();
  });
});

test('DeadlineExceededError survives a JSON round trip', () => {
  const error = new DeadlineExceededError({ executionId: 'e1', deadlineAt: 1_234, deadlineMs: 1_000 });
  expect(error.code).toBe('deadline_exceeded');
  const back = errorFromJSON(JSON.parse(JSON.stringify(errorToJSON(error))));
  expect(back).toBeInstanceOf(DeadlineExceededError);
  expect(back.code).toBe('deadline_exceeded');
  expect(back.details).toEqual({ executionId: 'e1', deadlineAt: 1_234, deadlineMs: 1_000 });
  expect(back.message).toBe(error.message);
});

describe('a reactor deadline, in a worker', () => {
  function worker() {
    const clock = new ManualClock({ autoAdvance: false }); // the queue's delays wait for advance()
    const m = manualEngine({
      clock,
      coordinator: new MemoryCoordinator({ clock }),
      queueOptions: { clock },
      background: { workerWaitMs: 0 }, // contention parks at once (no wait on the manual clock)
    });
    return { ...m, clock };
  }

  test('the deadline passes during a retry delay: the deadline job rolls the execution back', async () => {
    const m = worker();
    const { clock } = m;
    const undone: string[] = [];
    let attempts = 0;
    const r = reactor('retry-deadline', { deadline: '5s' })
      .step('reserve', { run: () => 'r1', undo: () => void undone.push('reserve') })
      .step('flaky', {
        waitFor: ['reserve'],
        retry: { maxAttempts: 5, backoff: 'fixed', baseDelay: '1m' },
        run: () => {
          attempts++;
          throw new Error('down');
        },
      })
      .background('all')
      .build();
    const w = m.startWorker(1);
    try {
      const { executionId } = await m.engine.start(r, {});
      await until(async () => (await m.store.get(executionId))?.background?.retryAt !== undefined, 3_000, 'the retry');
      expect(attempts).toBe(1);
      clock.advance(5_000);
      const done = await untilStatus(m.engine, executionId, 'cancelled');
      expect(causeOf(done)).toBeInstanceOf(DeadlineExceededError);
      expect(undone).toEqual(['reserve']);
      clock.advance(60_000); // the retry's job finds it finished
      await settleUntil(() => true, 'a turn');
      expect(attempts).toBe(1);
      const record = await m.store.get(executionId);
      expect(record?.cancelCause?.details).toMatchObject({ executionId, deadlineMs: 5_000 });
      expect(record?.trace?.some((e) => e.type === 'run.deadline_exceeded')).toBe(true);
    } finally {
      await w.close();
    }
  });

  test('a parked execution whose deadline passes while parked is rolled back by its deadline job', async () => {
    const m = worker();
    const { clock } = m;
    await m.coordinator.lockAcquire({
      key: 'busy',
      holder: { owner: 'someone-else', executionId: 'x' },
      ttlMs: 3_600_000,
    });
    const undone: string[] = [];
    const r = reactor('parked-deadline', { deadline: '30s' })
      .step('first', { run: () => 1, undo: () => void undone.push('first') })
      .step('locked', { waitFor: ['first'], lock: { key: () => 'busy' }, run: () => 2 })
      .background('all')
      .build();
    const w = m.startWorker(1);
    try {
      const { executionId } = await m.engine.start(r, {});
      await untilStatus(m.engine, executionId, 'parked');
      clock.advance(30_000);
      const done = await untilStatus(m.engine, executionId, 'cancelled');
      expect(causeOf(done)).toBeInstanceOf(DeadlineExceededError);
      expect(undone).toEqual(['first']);
    } finally {
      await w.close();
    }
  });

  test('a redelivered job measures the deadline from the record createdAt, not from its own start', async () => {
    const m = worker();
    const { clock } = m;
    let bodies = 0;
    const r = reactor('redelivered-deadline', { deadline: '10s' })
      .step('slow', {
        run: (args, ctx) => {
          bodies++;
          return untilAborted(args, ctx);
        },
      })
      .background('all')
      .build();
    const { executionId } = await m.engine.start(r, {});
    // As an earlier delivery left it, 8 s ago: created then, running, its worker gone.
    const record = (await m.store.get(executionId))!;
    await m.store.save({ ...record, status: 'running', createdAt: clock.now() - 8_000 });
    const deadlineAt = clock.now() + 2_000;
    const w = m.startWorker(1);
    try {
      await until(() => started(m.events, 'slow') === 1, 3_000, 'the redelivered job to run the step');
      clock.advance(1_999);
      await settleUntil(() => true, 'a turn');
      expect((await m.store.get(executionId))?.status).toBe('running');
      clock.advance(1);
      const done = await untilStatus(m.engine, executionId, 'cancelled');
      expect((causeOf(done) as DeadlineExceededError).details.deadlineAt).toBe(deadlineAt);
      expect(bodies).toBe(1);
    } finally {
      await w.close();
    }
  });

  test('a job entered past the deadline rolls back at once, without running a step', async () => {
    const m = worker();
    const { clock } = m;
    let bodies = 0;
    const r = reactor('late-deadline', { deadline: '1s' })
      .step('a', { run: () => void bodies++ })
      .background('all')
      .build();
    const { executionId } = await m.engine.start(r, {});
    clock.advance(5_000);
    const w = m.startWorker(1);
    try {
      const done = await untilStatus(m.engine, executionId, 'cancelled');
      expect(causeOf(done)).toBeInstanceOf(DeadlineExceededError);
      expect(bodies).toBe(0);
    } finally {
      await w.close();
    }
  });

  test('an inline run paused at an interrupt is rolled back by its deadline job when the deadline passes', async () => {
    const m = worker();
    const { clock } = m;
    const undone: string[] = [];
    const r = reactor('paused-deadline', { deadline: '1h' })
      .step('hold', { run: () => 'h1', undo: () => void undone.push('hold') })
      .interrupt('approval', { waitFor: ['hold'], payload: { approved: z.boolean() } })
      .step('after', { waitFor: ['approval'], run: () => 'done' })
      .build();
    const paused = await m.engine.run(r, {});
    expect(paused.status).toBe('paused');
    const w = m.startWorker(1);
    try {
      clock.advance(3_600_000);
      const done = await untilStatus(m.engine, paused.executionId, 'cancelled');
      expect(causeOf(done)).toBeInstanceOf(DeadlineExceededError);
      expect(undone).toEqual(['hold']);
    } finally {
      await w.close();
    }
  });

  test('a delayed start counts its deadline from its start time, not from its creation', async () => {
    const m = worker();
    const { clock } = m;
    let ran = 0;
    const r = reactor('delayed-deadline', { deadline: '10m' })
      .step('a', { run: (args, ctx) => (ran++, untilAborted(args, ctx)) })
      .background('all')
      .build();
    const w = m.startWorker(1);
    try {
      const { executionId } = await m.engine.start(r, {}, { delay: '1h' });
      clock.advance(3_600_000); // due now: the deadline is 10 minutes from here
      await until(() => ran === 1, 3_000, 'the delayed start to run');
      clock.advance(599_999);
      await settleUntil(() => true, 'a turn');
      expect(m.events.some((e) => e.type === 'run.rolling_back')).toBe(false);
      clock.advance(1);
      const done = await untilStatus(m.engine, executionId, 'cancelled');
      const cause = causeOf(done) as DeadlineExceededError;
      expect(cause).toBeInstanceOf(DeadlineExceededError);
      const record = await m.store.get(executionId);
      expect(cause.details.deadlineAt).toBe(record!.createdAt + 3_600_000 + 600_000);
    } finally {
      await w.close();
    }
  });
});
