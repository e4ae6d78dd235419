import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEngine,
  defineStep,
  failure,
  halt,
  MemoryStore,
  reactor,
  skip,
  type ReactorEvent,
} from '../../src/index.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';

/** A gate the test opens by hand: lets us observe overlap without timing. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const types = (trace: readonly ReactorEvent[]): string[] =>
  trace.map((e) => ('step' in e && e.step ? `${e.type}:${e.step}` : e.type));

describe('scheduling', () => {
  test('a step runs only after its dependencies succeeded, and gets their results', async () => {
    const seen: string[] = [];
    const r = reactor('r')
      .input({ n: z.number() })
      .step('a', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => (seen.push('a'), { v: n + 1 }) })
      .step('b', { args: ($) => ({ v: $.result('a', 'v') }), run: ({ v }) => (seen.push('b'), v * 10) })
      .returns('b');
    const result = await createTestEngine().run(r, { n: 1 });
    expect(result).toHaveCompleted();
    if (result.status === 'completed') expect(result.value).toBe(20);
    expect(seen).toEqual(['a', 'b']);
  });

  test('independent steps overlap (observed with gates, not timed)', async () => {
    const a = gate();
    const b = gate();
    let running = 0;
    let maxRunning = 0;
    const body = (g: { promise: Promise<void> }, other: { open: () => void }) => async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      other.open(); // the sibling can only finish if this one has started
      await g.promise;
      running--;
      return 1;
    };
    const r = reactor('r')
      .step('a', { run: body(a, b) })
      .step('b', { run: body(b, a) })
      .step('join', { waitFor: ['a', 'b'], run: () => 'joined' })
      .returns('join');
    const result = await createTestEngine().run(r, {});
    expect(result).toHaveCompleted();
    expect(maxRunning).toBe(2);
  });

  test('maxConcurrency bounds the steps running at once', async () => {
    let running = 0;
    let maxRunning = 0;
    const work = async (): Promise<number> => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      return 1;
    };
    let builder = reactor('wide', { maxConcurrency: 2 }) as ReturnType<typeof reactor>;
    for (let i = 0; i < 6; i++) builder = builder.step(`s${i}` as never, { run: work });
    const result = await createTestEngine().run(builder.build(), {});
    expect(result).toHaveCompleted();
    expect(maxRunning).toBe(2);

    maxRunning = 0;
    let engineBound = reactor('wide2') as ReturnType<typeof reactor>;
    for (let i = 0; i < 6; i++) engineBound = engineBound.step(`s${i}` as never, { run: work });
    await createTestEngine({ maxConcurrency: 3 }).run(engineBound.build(), {});
    expect(maxRunning).toBe(3);
  });

  test('the trace order is deterministic for equal inputs', async () => {
    const r = reactor('r')
      .step('a', { run: async () => 1 })
      .step('b', { run: async () => 2 })
      .step('c', { run: async () => 3 })
      .step('d', { waitFor: ['a', 'b', 'c'], run: () => 4 })
      .build();
    const first = types((await createTestEngine().run(r, {})).trace);
    for (let i = 0; i < 5; i++) expect(types((await createTestEngine().run(r, {})).trace)).toEqual(first);
    expect(first.slice(0, 4)).toEqual(['run.started', 'step.started:a', 'step.started:b', 'step.started:c']);
  });

  test('the execution context carries ids, attempt, signal and logger', async () => {
    const logs: unknown[] = [];
    const logger = { debug: () => {}, info: (f: object | string) => logs.push(f), warn: () => {}, error: () => {} };
    const r = reactor('ctx')
      .step('s', {
        run: (_args, ctx) => {
          ctx.logger.info({ hello: 1 }, 'hi');
          return {
            id: ctx.executionId,
            root: ctx.rootExecutionId,
            attempt: ctx.attempt,
            step: ctx.step,
            reactor: ctx.reactor,
            aborted: ctx.signal.aborted,
          };
        },
      })
      .returns('s');
    const result = await createTestEngine({ logger, logEvents: false }).run(r, {});
    expect(result.status).toBe('completed');
    if (result.status !== 'completed') return;
    expect(result.value).toEqual({
      id: result.executionId,
      root: result.executionId,
      attempt: 1,
      step: 's',
      reactor: 'ctx',
      aborted: false,
    });
    expect(logs).toEqual([{ executionId: result.executionId, reactor: 'ctx', step: 's', hello: 1 }]);
  });
});

describe('arguments', () => {
  test('inputs, result paths, constants and transforms; defaults and optionals applied', async () => {
    const r = reactor('args')
      .input({ user: z.object({ name: z.string() }), tier: z.string().default('gold'), note: z.string().optional() })
      .step('a', { run: () => ({ items: [{ sku: 'x1' }] }) })
      .step('b', {
        args: ($) => ({
          name: $.input('user', 'name'),
          tier: $.input('tier'),
          note: $.input('note'),
          sku: $.result('a', 'items', 0, 'sku'),
          k: $.value(7),
          upper: $.input('user', 'name')
            .transform((s) => s.toUpperCase())
            .transform((s) => `${s}!`),
        }),
        run: (args) => args,
      })
      .returns('b');
    const result = await createTestEngine().run(r, { user: { name: 'ada' } });
    expect(result.status === 'completed' && result.value).toEqual({
      name: 'ada',
      tier: 'gold',
      note: undefined,
      sku: 'x1',
      k: 7,
      upper: 'ADA!',
    });
  });

  test('a throwing transform fails the step before it starts: not retried, not compensated, earlier steps undone', async () => {
    const undone: string[] = [];
    let compensated = false;
    let runs = 0;
    const r = reactor('r')
      .step('a', { run: () => 1, undo: () => void undone.push('a') })
      .step('b', {
        args: ($) => ({
          v: $.result('a').transform(() => {
            throw new Error('bad transform');
          }),
        }),
        retry: { maxAttempts: 3 },
        run: () => ++runs,
        compensate: () => void (compensated = true),
      })
      .build();
    const result = await createTestEngine().run(r, {});
    expect(result).toHaveFailedAt('b');
    expect(result.status === 'failed' && result.error.message).toContain(
      'argument "v" could not be resolved: bad transform',
    );
    expect(runs).toBe(0);
    expect(compensated).toBe(false);
    expect(undone).toEqual(['a']);
    expect(result).toHaveRetried('b', 0);
  });

  test('invalid step arguments fail before the body, without retry, reported as validation errors', async () => {
    let runs = 0;
    const charge = defineStep({
      input: { amount: z.number().positive() },
      retry: { maxAttempts: 5 },
      run: () => ++runs,
    });
    const r = reactor('r')
      .step('charge', charge, { args: ($) => ({ amount: $.value(-3) }) })
      .build();
    const result = await createTestEngine().run(r, {});
    expect(result).toHaveFailedAt('charge');
    expect(runs).toBe(0);
    if (result.status !== 'failed') return;
    expect(result.error).toMatchObject({ code: 'arguments_invalid' });
    expect(result.validationErrors).toHaveLength(1);
    expect(result.validationErrors[0]?.path).toBe('amount');
    expect(result).toHaveRetried('charge', 0);
  });

  test('step definitions get validated args with defaults; unwired inputs come from same-named reactor inputs', async () => {
    const charge = defineStep({
      input: { account: z.string(), amount: z.number(), currency: z.string().default('EUR') },
      run: (a) => a,
    });
    const r = reactor('r')
      .input({ account: z.string() })
      .step('charge', charge, { args: ($) => ({ amount: $.value(5) }) })
      .returns('charge');
    const result = await createTestEngine().run(r, { account: 'acc-1' });
    expect(result.status === 'completed' && result.value).toEqual({ account: 'acc-1', amount: 5, currency: 'EUR' });
  });

  test('invalid reactor input fails before any step, with field errors', async () => {
    let ran = false;
    const r = reactor('r')
      .input({ n: z.number() })
      .step('s', { run: () => (ran = true) })
      .build();
    const result = await createTestEngine().run(r, { n: 'nope' as never });
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.failedStep).toBeUndefined();
    expect(result.error).toMatchObject({ code: 'input_invalid' });
    expect(result.validationErrors.map((i) => i.path)).toEqual(['n']);
    expect(ran).toBe(false);
  });

  test('redacted inputs are hidden in events but the step sees them', async () => {
    const r = reactor('r')
      .input({ card: z.string(), name: z.string() }, { redact: ['card'] })
      .step('s', { args: ($) => ({ card: $.input('card') }), run: ({ card }) => card.length })
      .returns('s');
    const t = createTestEngine();
    const result = await t.run(r, { card: '4242424242424242', name: 'ada' });
    expect(result.status === 'completed' && result.value).toBe(16);
    const started = t.events.find((e) => e.type === 'run.started');
    expect(started && 'input' in started && started.input).toEqual({ card: '[redacted]', name: 'ada' });
    expect(JSON.stringify(t.events)).not.toContain('4242');
  });
});

describe('signals', () => {
  test('thrown errors and returned failures are both failures; non-Error throws are wrapped', async () => {
    const thrown = await createTestEngine().run(
      reactor('t')
        .step('s', {
          run: () => {
            throw 'plain string';
          },
        })
        .build(),
      {},
    );
    expect(thrown).toHaveFailedAt('s');
    expect(thrown.status === 'failed' && thrown.error).toMatchObject({
      code: 'wrapped_throw',
      name: 'WrappedThrowError',
    });
    const returned = await createTestEngine().run(
      reactor('f')
        .step('s', { run: () => failure('declined') })
        .build(),
      {},
    );
    expect(returned.status === 'failed' && returned.error.message).toBe('declined');
  });

  test('halt stops the run without rollback; completed steps stay intact', async () => {
    const undone: string[] = [];
    let after = false;
    const r = reactor('r')
      .step('a', { run: () => 1, undo: () => void undone.push('a') })
      .step('b', { waitFor: ['a'], run: () => halt('out of stock') })
      .step('c', { waitFor: ['b'], run: () => (after = true) })
      .build();
    const result = await createTestEngine().run(r, {});
    expect(result).toHaveHalted('out of stock');
    expect(result.status === 'halted' && result.haltedStep).toBe('b');
    expect(undone).toEqual([]);
    expect(after).toBe(false);
    expect(result.steps.a?.status).toBe('completed');
  });

  test('skipped lets the run continue with its value, and is never undone', async () => {
    const undone: string[] = [];
    const r = reactor('r')
      .step('a', { run: () => skip('nothing to do', 0), undo: () => void undone.push('a') })
      .step('b', { args: ($) => ({ v: $.result('a') }), run: ({ v }) => v + 1, undo: () => void undone.push('b') })
      .step('c', {
        waitFor: ['b'],
        run: () => {
          throw new Error('boom');
        },
      })
      .build();
    const result = await createTestEngine().run(r, {});
    expect(result).toHaveSkipped('a');
    expect(result).toHaveFailedAt('c');
    expect(result.steps.b?.result).toBe(1);
    expect(undone).toEqual(['b']);
  });
});

describe('retries', () => {
  test('a step is attempted exactly N times with exponential delays (injected clock)', async () => {
    let attempts = 0;
    const clock = new ManualClock();
    const r = reactor('r')
      .step('s', {
        retry: { maxAttempts: 4, backoff: 'exponential', baseDelay: 100 },
        run: () => {
          attempts++;
          throw new Error('flaky');
        },
      })
      .build();
    const result = await createTestEngine({ clock }).run(r, {});
    expect(attempts).toBe(4);
    expect(clock.sleeps).toEqual([100, 200, 400]);
    expect(result).toHaveRetried('s', 3);
    expect(result.steps.s).toMatchObject({ status: 'failed', attempts: 4 });
  });

  test('linear and fixed backoff, maxDelay cap, and jitter within [d/2, d]', async () => {
    const run = async (retry: object): Promise<number[]> => {
      const clock = new ManualClock();
      await createTestEngine({ clock }).run(
        reactor('r')
          .step('s', {
            retry: retry as never,
            run: () => {
              throw new Error('x');
            },
          })
          .build(),
        {},
      );
      return clock.sleeps;
    };
    expect(await run({ maxAttempts: 4, backoff: 'linear', baseDelay: '1s' })).toEqual([1000, 2000, 3000]);
    expect(await run({ maxAttempts: 3, backoff: 'fixed', baseDelay: 50 })).toEqual([50, 50]);
    expect(await run({ maxAttempts: 5, backoff: 'exponential', baseDelay: 100, maxDelay: 300 })).toEqual([
      100, 200, 300, 300,
    ]);
    const jittered = await run({ maxAttempts: 6, backoff: 'fixed', baseDelay: 1000, jitter: true });
    expect(jittered).toHaveLength(5);
    for (const d of jittered) expect(d >= 500 && d <= 1000).toBe(true);
  });

  test('a retry that succeeds completes; events record each retry', async () => {
    let attempts = 0;
    const r = reactor('r')
      .step('s', {
        retry: { maxAttempts: 3, baseDelay: 10 },
        run: (_a, ctx) => (++attempts < 3 ? failure('again') : ctx.attempt),
      })
      .returns('s');
    const result = await createTestEngine().run(r, {});
    expect(result.status === 'completed' && result.value).toBe(3);
    expect(result).toHaveRetried('s', 2);
  });

  test('non-retryable errors and failure({ retryable: false }) stop at once', async () => {
    const { NonRetryableError } = await import('../../src/index.js');
    let a = 0;
    let b = 0;
    await createTestEngine().run(
      reactor('r')
        .step('s', {
          retry: { maxAttempts: 5 },
          run: () => {
            a++;
            throw new NonRetryableError('card expired');
          },
        })
        .build(),
      {},
    );
    await createTestEngine().run(
      reactor('r')
        .step('s', { retry: { maxAttempts: 5 }, run: () => (b++, failure('nope', { retryable: false })) })
        .build(),
      {},
    );
    expect([a, b]).toEqual([1, 1]);
  });
});

describe('events and middleware', () => {
  test('a middleware hook that throws or rejects is logged and never breaks the run', async () => {
    const errors: unknown[] = [];
    const logger = { debug: () => {}, info: () => {}, warn: () => {}, error: (f: object | string) => errors.push(f) };
    const seen: string[] = [];
    const engine = createEngine({
      store: new MemoryStore(),
      logger,
      middleware: [
        {
          name: 'bad',
          onEvent: () => {
            throw new Error('hook broke');
          },
        },
        {
          name: 'async-bad',
          onEvent: async () => {
            throw new Error('async hook broke');
          },
        },
        { name: 'good', onEvent: (e) => void seen.push(e.type) },
      ],
    });
    const result = await engine.run(
      reactor('r')
        .step('s', { run: () => 1 })
        .build(),
      {},
    );
    expect(result.status).toBe('completed');
    expect(seen).toEqual(['run.started', 'step.started', 'step.succeeded', 'run.completed']);
    await new Promise((r) => setImmediate(r));
    expect(errors.length).toBe(8);
  });

  test('every event carries the execution, root, reactor and time', async () => {
    const clock = new ManualClock({ start: 1_000 });
    const result = await createTestEngine({ clock }).run(
      reactor('r')
        .step('s', { run: () => 1 })
        .build(),
      {},
    );
    for (const e of result.trace)
      expect(e).toMatchObject({
        executionId: result.executionId,
        rootExecutionId: result.executionId,
        reactor: 'r',
        at: 1_000,
      });
  });
});
