/**
 * Step timeouts (docs/time.md, docs/decisions/075) on the memory backend with the manual clock:
 * the deadline fails the attempt whether the body settles or not, retries and compensation
 * follow the policy, a late result is ignored, the options are validated at definition, and a
 * redelivered worker job measures the timeout from the recorded start of the attempt.
 */
import { describe, expect, test } from 'vitest';
import {
  DefinitionError,
  MemoryCoordinator,
  StepTimeoutError,
  defineStep,
  errorFromJSON,
  errorToJSON,
  reactor,
  type ReactorEvent,
} from '../../src/index.js';
import { ManualClock, createTestEngine } from '../../src/testing/index.js';
import '../../src/testing/vitest.js';
import { manualEngine, untilStatus } from '../background/helpers.js';

/** Lets pending callbacks run until `probe` holds (no virtual time passes). */
async function settleUntil(probe: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (probe()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never reached: ${what}`);
}

const started = (events: readonly ReactorEvent[], step: string): number =>
  events.filter((e) => e.type === 'step.started' && e.step === step).length;
const timedOut = (events: readonly ReactorEvent[]) =>
  events.filter((e): e is Extract<ReactorEvent, { type: 'step.timed_out' }> => e.type === 'step.timed_out');
const never = (): Promise<never> => new Promise<never>(() => undefined);

describe('a step timeout, in process', () => {
  test('a body that never settles times out at the deadline, is retried per policy, then fails and is compensated', async () => {
    const t = createTestEngine();
    const compensated: Error[] = [];
    const r = reactor('never-settles')
      .step('prepare', { run: () => 'ready', undo: () => undefined })
      .step('slow', {
        waitFor: ['prepare'],
        timeout: '1s',
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 100 },
        run: never,
        compensate: (error) => void compensated.push(error),
      })
      .build();
    const running = t.run(r, {});
    await settleUntil(() => started(t.events, 'slow') === 1, 'attempt 1');
    t.clock.advance(999);
    await settleUntil(() => true, 'a turn');
    expect(timedOut(t.events)).toHaveLength(0);
    t.clock.advance(1);
    await settleUntil(() => started(t.events, 'slow') === 2, 'attempt 2');
    t.clock.advance(1_000);
    const result = await running;
    expect(result).toHaveFailedAt('slow');
    expect(result).toHaveRetried('slow', 1);
    expect(result).toHaveCompensated(['slow']);
    expect(result).toHaveUndone(['prepare']);
    const error = result.status === 'failed' ? result.error : undefined;
    expect(error).toBeInstanceOf(StepTimeoutError);
    expect((error as StepTimeoutError).details).toEqual({ step: 'slow', attempt: 2, timeoutMs: 1_000 });
    expect(compensated[0]).toBe(error);
    expect(timedOut(t.events).map((e) => [e.attempt, e.timeoutMs, e.ignoredSignal])).toEqual([
      [1, 1_000, true],
      [2, 1_000, true],
    ]);
    const types = result.trace
      .filter((e) => e.type.startsWith('step.') && 'step' in e && e.step === 'slow')
      .map((e) => e.type);
    expect(types).toEqual([
      'step.started',
      'step.timed_out',
      'step.retrying',
      'step.started',
      'step.timed_out',
      'step.failed',
      'step.compensated',
    ]);
  });

  test('a body that honours ctx.signal sees it aborted with the StepTimeoutError and is not reported as ignoring it', async () => {
    const t = createTestEngine();
    let reason: unknown;
    const r = reactor('honours')
      .step('slow', {
        timeout: 500,
        run: (_args, ctx) =>
          new Promise((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => reject((reason = ctx.signal.reason) as Error)),
          ),
      })
      .build();
    const running = t.run(r, {});
    await settleUntil(() => started(t.events, 'slow') === 1, 'attempt 1');
    t.clock.advance(500);
    const result = await running;
    expect(result).toHaveFailedAt('slow');
    expect(reason).toBeInstanceOf(StepTimeoutError);
    expect(result.status === 'failed' && result.error).toBe(reason);
    expect(timedOut(t.events).map((e) => e.ignoredSignal)).toEqual([false]);
  });

  test('the result of a body that settles after its deadline is ignored; the next attempt decides', async () => {
    const t = createTestEngine();
    let finishLate!: (value: string) => void;
    let calls = 0;
    const r = reactor('late')
      .step('slow', {
        timeout: '2s',
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 10 },
        run: () => (++calls === 1 ? new Promise<string>((resolve) => (finishLate = resolve)) : 'second'),
      })
      .returns('slow');
    const running = t.run(r, {});
    await settleUntil(() => started(t.events, 'slow') === 1, 'attempt 1');
    t.clock.advance(2_000);
    const result = await running;
    finishLate('late');
    await settleUntil(() => true, 'a turn');
    expect(result.status === 'completed' && result.value).toBe('second');
    expect(result.steps.slow).toMatchObject({ status: 'completed', attempts: 2, result: 'second' });
    expect(timedOut(t.events).map((e) => e.ignoredSignal)).toEqual([true]);
  });

  test('a body that finishes in time completes; its deadline is cleared', async () => {
    const t = createTestEngine();
    const r = reactor('in-time')
      .step('quick', { timeout: '1s', run: async () => 'done' })
      .returns('quick');
    const result = await t.run(r, {});
    expect(result.status === 'completed' && result.value).toBe('done');
    t.clock.advance(5_000);
    await settleUntil(() => true, 'a turn');
    expect(timedOut(t.events)).toHaveLength(0);
  });

  test('the attempt start is in the step record the next checkpoint carries', async () => {
    const t = createTestEngine();
    const r = reactor('carried')
      .step('slow', { timeout: '1s', run: never })
      .step('fast', { run: () => 1 })
      .build();
    const at = t.clock.now();
    const running = t.run(r, {});
    await settleUntil(() => t.events.some((e) => e.type === 'step.succeeded' && e.step === 'fast'), 'fast');
    t.clock.advance(100); // the checkpoint interval: the trailing write of fast's progress
    await settleUntil(() => true, 'a turn');
    const record = await t.engine.store.get(t.events[0]!.executionId);
    expect(record?.steps.slow).toEqual({ status: 'running', attempts: 1, attemptStartedAt: at });
    t.clock.advance(900);
    expect(await running).toHaveFailedAt('slow');
  });

  test('a defineStep timeout goes wherever the definition is placed, map elements included; extend may replace it', async () => {
    const slow = defineStep({ name: 'slow', input: {}, timeout: '30s', run: () => 1 });
    const slower = slow.extend({ timeout: '1m' });
    expect(slow.timeoutMs).toBe(30_000);
    expect(slower.timeoutMs).toBe(60_000);
    expect(slow.extend({}).timeoutMs).toBe(30_000);
    const r = reactor('placed')
      .step('one', slow)
      .map('many', { source: ($) => $.value([1, 2]), each: slower, args: () => ({}) })
      .build();
    const one = r.byName.get('one');
    const many = r.byName.get('many');
    expect(one?.kind === 'step' && one.timeoutMs).toBe(30_000);
    expect(many?.kind === 'map' && many.element.kind === 'step' && many.element.node.timeoutMs).toBe(60_000);
  });

  test('a map element step times out like any step', async () => {
    const t = createTestEngine();
    const element = defineStep({ input: {}, timeout: 100, run: never });
    const r = reactor('map-timeout')
      .map('items', { source: ($) => $.value([1]), each: element, args: () => ({}) })
      .build();
    const running = t.run(r, {});
    await settleUntil(() => started(t.events, 'items[0]') === 1, 'element 0');
    t.clock.advance(100);
    const result = await running;
    expect(result).toHaveFailedAt('items[0]');
    expect(timedOut(t.events).map((e) => e.step)).toEqual(['items[0]']);
  });
});

describe('timeout validation at definition', () => {
  test.each([0, -5, Number.POSITIVE_INFINITY, Number.NaN, 'soon', '30 s', '-1s', {}])(
    'refuses %s, naming the step and the option',
    (timeout) => {
      const bad = timeout as never;
      const inline = (): unknown => reactor('v').step('s', { timeout: bad, run: () => 1 });
      expect(inline).toThrow(DefinitionError);
      expect(inline).toThrow(/reactor "v", step "s": timeout must be a positive duration/);
      const definition = (): unknown => defineStep({ name: 'd', input: {}, timeout: bad, run: () => 1 });
      expect(definition).toThrow(/step definition "d": timeout must be a positive duration/);
      try {
        inline();
      } catch (error) {
        expect((error as DefinitionError).details).toEqual({ reactor: 'v', step: 's' });
      }
    },
  );

  test('accepts milliseconds and durations, and asyncStep takes it too', () => {
    const r = reactor('ok')
      .step('a', { timeout: 250, run: () => 1 })
      .step('b', { timeout: '1.5s', run: () => 1 })
      .asyncStep('c', { timeout: '2m', run: () => 1 })
      .build();
    const ms = ['a', 'b', 'c'].map((n) => {
      const node = r.byName.get(n);
      return node?.kind === 'step' || node?.kind === 'async-step' ? node.timeoutMs : undefined;
    });
    expect(ms).toEqual([250, 1_500, 120_000]);
  });
});

test('StepTimeoutError round-trips through JSON as its own class', () => {
  const error = new StepTimeoutError({ step: 'charge', attempt: 2, timeoutMs: 30_000 });
  const back = errorFromJSON(JSON.parse(JSON.stringify(errorToJSON(error))) as ReturnType<typeof errorToJSON>);
  expect(back).toBeInstanceOf(StepTimeoutError);
  expect(back.code).toBe('step_timed_out');
  expect(back.details).toEqual({ step: 'charge', attempt: 2, timeoutMs: 30_000 });
  expect(back.message).toBe(error.message);
});

describe('in a worker, a redelivered job resumes the attempt and its deadline', () => {
  async function redelivered(startedMsAgo: number) {
    const clock = new ManualClock();
    const m = manualEngine({ clock, coordinator: new MemoryCoordinator({ clock }) });
    let bodies = 0;
    const r = reactor('redelivered')
      .step('slow', {
        timeout: '1s',
        run: () => {
          bodies++;
          return never();
        },
      })
      .background('all')
      .build();
    const { executionId } = await m.engine.start(r, {});
    // As an earlier delivery left it: the attempt began `startedMsAgo` ago and was checkpointed.
    const record = (await m.store.get(executionId))!;
    await m.store.save({
      ...record,
      steps: { slow: { status: 'running', attempts: 1, attemptStartedAt: clock.now() - startedMsAgo } },
    });
    const worker = m.startWorker(1);
    return { clock, m, executionId, worker, bodies: () => bodies };
  }

  test('the remaining time is measured from the recorded attempt start, not from the redelivery', async () => {
    const { clock, m, executionId, worker, bodies } = await redelivered(800);
    try {
      await settleUntil(() => started(m.events, 'slow') === 1, 'the resumed attempt');
      expect(m.events.find((e) => e.type === 'step.started')).toMatchObject({ attempt: 1 });
      clock.advance(199);
      await settleUntil(() => true, 'a turn');
      expect(timedOut(m.events)).toHaveLength(0);
      clock.advance(1);
      const done = await untilStatus(m.engine, executionId, 'failed');
      expect(done.status === 'failed' && done.error).toBeInstanceOf(StepTimeoutError);
      expect(bodies()).toBe(1);
      expect(timedOut(m.events).map((e) => [e.attempt, e.ignoredSignal])).toEqual([[1, true]]);
    } finally {
      await worker.close();
    }
  });

  test('an attempt whose deadline passed while no job ran fails at once, without running the body again', async () => {
    const { m, executionId, worker, bodies } = await redelivered(5_000);
    try {
      const done = await untilStatus(m.engine, executionId, 'failed');
      expect(done.status === 'failed' && done.error).toBeInstanceOf(StepTimeoutError);
      expect(bodies()).toBe(0);
      expect(timedOut(m.events).map((e) => [e.attempt, e.ignoredSignal])).toEqual([[1, false]]);
    } finally {
      await worker.close();
    }
  });
});
