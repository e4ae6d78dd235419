/**
 * invoking a step definition directly is coordinated. Without a context it is its own
 * execution (contends, waits, fails, never parks); with the `ctx` of a running step it joins
 * that execution (re-entrant on its keys, contends on any other).
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import {
  ContentionError,
  ReactorError,
  ValidationError,
  defineStep,
  reactor,
  type StepInvocation,
} from '../../src/index.js';
import { memoryRig as memoryBackend, type EngineRig as Backend } from '../support/backend-matrix.js';

const OTHER = { owner: 'someone-else' };

let b: Backend;
beforeAll(async () => {
  b = await memoryBackend();
});
afterAll(async () => b.close());

function charge(key: string, onRun: () => void = () => undefined, wait = 100) {
  return defineStep({
    name: 'charge',
    input: { accountId: z.string(), amount: z.number().int().default(5) },
    lock: { key: ({ accountId }) => `${key}:${accountId}`, wait },
    run: ({ accountId, amount }) => {
      onRun();
      return { accountId, amount };
    },
  });
}

describe('without a context: an execution of its own', () => {
  test('validates, takes the lock around the body, releases it, returns the value typed', async () => {
    const key = b.key('inv');
    const step = charge(key);
    const { engine, events } = b.engine();
    const out = await step.invoke({ accountId: 'a' }, { engine });
    expectTypeOf(out).toEqualTypeOf<StepInvocation<{ accountId: string; amount: number }>>();
    expect(out).toEqual({ status: 'completed', value: { accountId: 'a', amount: 5 } });
    const kinds = events
      .filter((e) => e.type.startsWith('coordination.') && e.type !== 'coordination.extended')
      .map((e) => `${e.type}:${(e as { step?: string }).step}`);
    expect(kinds).toEqual(['coordination.acquired:charge', 'coordination.released:charge']);
    expect(await b.coordinator.lockState(`${key}:a`)).toBeUndefined();
  });

  test('a busy key: waits the declared wait, then fails with a ContentionError; the body never runs; nothing parks', async () => {
    const key = b.key('inv');
    await b.coordinator.lockAcquire({ key: `${key}:a`, holder: OTHER, ttlMs: 30_000 });
    let ran = 0;
    const { engine, events } = b.engine();
    const started = Date.now();
    const out = await charge(key, () => ran++).invoke({ accountId: 'a' }, { engine });
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(out.status).toBe('failed');
    if (out.status !== 'failed') return;
    expect(out.error).toBeInstanceOf(ContentionError);
    expect(out.error.message).toContain(`"${key}:a"`);
    expect(ran).toBe(0);
    expect(events.some((e) => e.type === 'run.parked')).toBe(false);
    await b.coordinator.lockRelease(`${key}:a`, OTHER.owner);
    expect((await charge(key, () => ran++).invoke({ accountId: 'a' }, { engine })).status).toBe('completed');
    expect(ran).toBe(1);
  });

  test('invalid arguments fail before anything is taken', async () => {
    const key = b.key('inv');
    const { engine, events } = b.engine();
    const out = await charge(key).invoke({ accountId: 3 as unknown as string }, { engine });
    expect(out.status === 'failed' && out.error instanceof ValidationError).toBe(true);
    expect(events.some((e) => e.type === 'coordination.acquired')).toBe(false);
  });

  test('called from inside a step body without ctx, it contends with the calling execution itself', async () => {
    const key = b.key('inv');
    const inner = charge(key, () => undefined, 50);
    const { engine } = b.engine();
    let seen: StepInvocation<unknown> | undefined;
    const r = reactor('outer')
      .input({ accountId: z.string() })
      .withLock({ key: ({ accountId }) => `${key}:${accountId}` })
      .step('call', { run: async ({ accountId }) => void (seen = await inner.invoke({ accountId }, { engine })) })
      .build();
    expect(await engine.run(r, { accountId: 'a' })).toMatchObject({ status: 'completed' });
    expect(seen?.status === 'failed' && seen.error instanceof ContentionError).toBe(true);
  });

  test('a ctx that no run of this process handed out is refused', async () => {
    const { engine } = b.engine();
    const fake = {
      executionId: 'x',
      rootExecutionId: 'x',
      reactor: 'r',
      step: 's',
      attempt: 1,
      signal: new AbortController().signal,
      logger: console,
      heldKeys: new Set<string>(),
      fencingToken: () => undefined,
      progress: () => undefined,
    };
    const out = await charge(b.key('inv')).invoke({ accountId: 'a' }, { engine, ctx: fake });
    expect(out.status === 'failed' && ReactorError.is(out.error) && out.error.code === 'invoke_context_unknown').toBe(
      true,
    );
  });
});

describe('with the ctx of a running step: joins that execution', () => {
  test('re-enters a key the execution holds (no wait), in its trace, and the key frees at the outermost release', async () => {
    const key = b.key('inv');
    const inner = charge(key, () => undefined, 0);
    const { engine } = b.engine();
    let held: string | undefined;
    const r = reactor('outer')
      .input({ accountId: z.string() })
      .withLock({ key: ({ accountId }) => `${key}:${accountId}` })
      .step('call', {
        run: async ({ accountId }, ctx) => {
          const out = await inner.invoke({ accountId }, { engine, ctx });
          held = (await b.coordinator.lockState(`${key}:${accountId}`))?.holder.owner;
          return out.status;
        },
      })
      .returns('call');
    const result = await engine.run(r, { accountId: 'a' });
    expect(result).toMatchObject({ status: 'completed', value: 'completed' });
    expect(held).toBe(result.executionId);
    const nested = result.trace.filter((e) => e.type === 'coordination.acquired' && e.step === 'call>charge');
    expect(nested).toHaveLength(1);
    expect((nested[0] as { nesting?: number }).nesting).toBe(2);
    expect(result.trace.some((e) => e.type === 'step.succeeded' && e.step === 'call>charge')).toBe(true);
    expect(await b.coordinator.lockState(`${key}:a`)).toBeUndefined();
  });

  test('contends on any other key: being inside a locked step exempts nothing', async () => {
    const key = b.key('inv');
    await b.coordinator.lockAcquire({ key: `${key}:b`, holder: OTHER, ttlMs: 30_000 });
    const inner = charge(key, () => undefined, 50);
    const { engine } = b.engine();
    const r = reactor('outer')
      .step('call', {
        lock: { key: () => `${key}:a` },
        run: async (_args, ctx) => {
          const out = await inner.invoke({ accountId: 'b' }, { engine, ctx });
          if (out.status === 'failed') throw out.error;
          return out.status;
        },
      })
      .build();
    const result = await engine.run(r, {});
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.failedStep).toBe('call');
    expect(result.error).toBeInstanceOf(ContentionError);
    await b.coordinator.lockRelease(`${key}:b`, OTHER.owner);
  });

  test('each joined invocation charges the rate limit once', async () => {
    const key = b.key('inv-rate');
    const ping = defineStep({
      name: 'ping',
      input: {},
      rateLimit: { key: () => key, limit: 10, per: '1h' },
      run: () => 'pong',
    });
    const { engine } = b.engine();
    const r = reactor('pinger')
      .step('call', {
        run: async (_args, ctx) => {
          await ping.invoke({}, { engine, ctx });
          await ping.invoke({}, { engine, ctx });
        },
      })
      .build();
    expect((await engine.run(r, {})).status).toBe('completed');
    expect((await b.coordinator.rateState(key, 3_600_000)).count).toBe(2);
  });
});
