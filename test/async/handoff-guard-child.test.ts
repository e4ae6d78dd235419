/**
 * The hand-off guard looks into an `asyncReactor` child (issue 5 gap 2, decision 033): a step of
 * the child whose lock / limit-1 semaphore key is computable from the child's validated input
 * (also inside a reactor the child composes, with its contract defaults) and that the dispatcher
 * holds is refused before enqueue, naming the key, the holder and the declaring step. A key that
 * depends on another step's result cannot be computed at dispatch: it is left to the child,
 * where the contention parks (worker) or ends in the reader's bounded wait (in-process) — never a
 * deadlock.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  AsyncWaitTimeoutError,
  createEmbeddedEngine,
  defineStep,
  HandOffRefusedError,
  reactor,
} from '../../src/index.js';
import { createTestEngine } from '../../src/testing/index.js';
import { eventsOf, manualEngine, until } from '../background/helpers.js';

let seq = 0;
const fresh = (name: string): string => `${name}-${++seq}-${Date.now()}`;
const childOf = (executionId: string, step: string): string => `${executionId}~${step}`;

describe('the guard checks the child’s step-level declarations computable at dispatch', () => {
  test('a child step locking K (keyed on the child input) while the dispatcher holds K: refused before enqueue, naming K, the holder and the child step; nothing queued', async () => {
    const m = manualEngine();
    let undone = 0;
    const child = reactor('cg-child')
      .input({ account: z.string() })
      .step('audit', { run: () => 'audited' })
      .step('charge', {
        args: ($) => ({ account: $.input('account') }),
        lock: { key: ({ account }) => `acct:${account}` },
        run: () => 'charged',
      })
      .build();
    const parent = reactor('cg-parent')
      .input({ account: z.string() })
      .withLock({ key: ({ account }) => `acct:${account}` })
      .step('first', { run: () => 1, undo: () => void undone++ })
      .asyncReactor('child', child, { args: ($) => ({ account: $.input('account') }), waitFor: ['first'] })
      .build();
    const account = fresh('a');
    const result = await m.engine.run(parent, { account });
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.failedStep).toBe('child');
    expect(result.error).toBeInstanceOf(HandOffRefusedError);
    expect(result.error).toMatchObject({
      code: 'handoff_refused',
      details: {
        kind: 'reactor',
        primitive: 'lock',
        key: `acct:${account}`,
        declaredBy: 'step "charge" of reactor "cg-child"',
      },
    });
    expect(result.error.message).toContain('on its step "charge" of reactor "cg-child"');
    expect(result.error.message).toMatch(/held reactor-level, reactor "cg-parent"/);
    expect(undone).toBe(1);
    expect(eventsOf(result.trace, 'async.refused')).toMatchObject([
      { step: 'child', primitive: 'lock', key: `acct:${account}` },
    ]);
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
    expect(await m.store.get(childOf(result.executionId, 'child'))).toBeUndefined();
  });

  test('inside a reactor the child composes, a step definition whose limit-1 semaphore key uses a contract default: refused', async () => {
    const m = manualEngine();
    const charge = defineStep({
      input: { account: z.string(), scope: z.string().default('acct') },
      semaphore: { key: ({ account, scope }) => `${scope}:${account}`, limit: 1 },
      run: () => 'charged',
    });
    const inner = reactor('cg-inner')
      .input({ account: z.string() })
      .step('charge', charge, { args: ($) => ({ account: $.input('account') }) })
      .build();
    const child = reactor('cg-composer')
      .input({ account: z.string() })
      .compose('pay', inner, { args: ($) => ({ account: $.input('account') }) })
      .build();
    const parent = reactor('cg-sem-parent')
      .input({ account: z.string() })
      .withSemaphore({ key: ({ account }) => `acct:${account}`, limit: 1 })
      .asyncReactor('child', child, { args: ($) => ({ account: $.input('account') }) })
      .build();
    const account = fresh('s');
    const result = await m.engine.run(parent, { account });
    expect(result).toMatchObject({
      status: 'failed',
      failedStep: 'child',
      error: {
        code: 'handoff_refused',
        details: {
          primitive: 'semaphore',
          key: `acct:${account}`,
          declaredBy: 'step "pay.charge" of reactor "cg-inner"',
        },
      },
    });
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
  });

  test('a child step keyed on a different key is dispatched', async () => {
    const m = manualEngine();
    const child = reactor('cg-other')
      .input({ account: z.string() })
      .step('charge', {
        args: ($) => ({ account: $.input('account') }),
        lock: { key: ({ account }) => `charge:${account}` },
        run: () => 1,
      })
      .build();
    const parent = reactor('cg-other-parent')
      .input({ account: z.string() })
      .withLock({ key: ({ account }) => `acct:${account}` })
      .asyncReactor('child', child, { args: ($) => ({ account: $.input('account') }) })
      .build();
    expect((await m.engine.run(parent, { account: fresh('o') })).status).toBe('completed');
    expect(m.memory.queue.counts().ready).toBe(1);
  });
});

/** A child whose `charge` step locks a key that only its `lookup` step's result names: not computable at dispatch. */
function lateKeyed(name: string) {
  return reactor(`${name}-child`)
    .input({ account: z.string() })
    .step('lookup', {
      args: ($) => ({ account: $.input('account') }),
      run: ({ account }) => ({ key: `acct:${account}` }),
    })
    .step('charge', {
      args: ($) => ({ key: $.result('lookup', 'key') }),
      lock: { key: ({ key }) => key },
      run: () => 'charged',
    })
    .returns('charge');
}

describe('a child key not computable at dispatch is left to the child: it parks, it does not deadlock', () => {
  test('dispatcher in a worker holding K, reading the child: the child parks on K, the parked reader releases K, both complete', async () => {
    const engine = createEmbeddedEngine({ background: { workerWaitMs: 0, parkFallbackMs: 10_000 } });
    const child = lateKeyed('late-w');
    // `hold` keeps the dispatcher on K until the child has parked on K; only then does `read` park the dispatcher.
    const parent = reactor('late-w')
      .input({ account: z.string() })
      .background('all')
      .withLock({ key: ({ account }) => `acct:${account}` })
      .asyncReactor('child', child, { args: ($) => ({ account: $.input('account') }) })
      .step('hold', {
        run: (_a, ctx) =>
          until(
            async () => (await engine.store.get(childOf(ctx.executionId, 'child')))?.status === 'parked',
            3_000,
            'the child to park on K',
          ),
      })
      .step('read', { args: ($) => ({ c: $.result('child') }), waitFor: ['hold'], run: ({ c }) => `read ${c}` })
      .returns('read');
    const account = fresh('w');
    try {
      const started = await engine.start(parent, { account });
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toMatchObject({ status: 'completed', value: 'read charged' });
      const childRecord = (await engine.store.get(childOf(started.executionId, 'child')))!;
      expect(childRecord.status).toBe('completed');
      expect(
        eventsOf(childRecord.trace ?? [], 'run.parked').some(
          (e) => e.primitive === 'lock' && e.key === `acct:${account}`,
        ),
      ).toBe(true); // it contended and parked
      expect(eventsOf(done?.trace ?? [], 'async.refused')).toEqual([]);
      expect(eventsOf(done?.trace ?? [], 'async.waiting').some((e) => e.mode === 'park')).toBe(true);
    } finally {
      await engine.close();
    }
  });

  test('in-process dispatcher holding K (test engine, manual clock): the reader gives up after asyncWaitMs, the rollback releases K, the child then completes', async () => {
    const t = createTestEngine({ background: { asyncWaitMs: 20_000 } });
    const child = lateKeyed('late-i');
    let undone = 0;
    const parent = reactor('late-i')
      .input({ account: z.string() })
      .withLock({ key: ({ account }) => `acct:${account}` })
      .step('first', { run: () => 1, undo: () => void undone++ })
      .asyncReactor('child', child, { args: ($) => ({ account: $.input('account') }), waitFor: ['first'] })
      .step('read', { args: ($) => ({ c: $.result('child') }), run: ({ c }) => c })
      .returns('read');
    const account = fresh('i');
    const started = t.clock.now();
    const result = await t.run(parent, { account });
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error).toBeInstanceOf(AsyncWaitTimeoutError);
    expect(t.clock.now() - started).toBeGreaterThanOrEqual(20_000);
    expect(undone).toBe(1);
    await t.drain();
    const childResult = await t.engine.result(childOf(result.executionId, 'child'));
    expect(childResult).toMatchObject({ status: 'completed', value: 'charged' });
    expect(
      eventsOf(childResult?.trace ?? [], 'run.parked').some(
        (e) => e.primitive === 'lock' && e.key === `acct:${account}`,
      ),
    ).toBe(true); // it contended and parked
    await expect(t.coordinator).not.toBeLockedBy(`acct:${account}`);
  });
});
