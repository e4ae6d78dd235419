/**
 * The hand-off guard (issue 6 R-12 / SC-007, reference scenario 19) on the embedded default:
 * dispatching an asyncStep or asyncReactor that declares a lock (or a limit-1 semaphore) on a
 * key the dispatching execution holds — at reactor level or in a step running beside it — is
 * refused before anything is persisted or queued. The queue's consumer is never started here,
 * so whatever was enqueued stays visible in its counts.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { errorFromJSON, HandOffRefusedError, reactor } from '../../src/index.js';
import { eventsOf, gate, manualEngine } from '../background/helpers.js';

let seq = 0;
const fresh = (name: string): string => `${name}-${++seq}-${Date.now()}`;
const unitOf = (executionId: string, step: string): string => `${executionId}~${step}`;

describe('scenario 19: a reactor holding K dispatches a unit that declares K', () => {
  test('asyncStep with a lock on K: refused before enqueue naming K, the holder and the remedies; not compensated; earlier steps roll back; nothing queued', async () => {
    const m = manualEngine();
    const calls = { debitUndo: 0, ship: 0, shipCompensate: 0 };
    const r = reactor('guarded-step')
      .input({ account: z.string() })
      .withLock({ key: ({ account }) => `acct:${account}` })
      .step('debit', { run: () => 'd', undo: () => void calls.debitUndo++ })
      .asyncStep('ship', {
        waitFor: ['debit'],
        args: ($) => ({ account: $.input('account') }),
        lock: { key: ({ account }) => `acct:${account}` },
        run: () => ++calls.ship,
        compensate: () => void calls.shipCompensate++,
      })
      .build();
    const account = fresh('a');
    const result = await m.engine.run(r, { account });
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.failedStep).toBe('ship');
    expect(result.error).toBeInstanceOf(HandOffRefusedError);
    expect(result.error).toMatchObject({
      code: 'handoff_refused',
      details: {
        primitive: 'lock',
        key: `acct:${account}`,
        kind: 'step',
        step: 'ship',
        executionId: result.executionId,
      },
    });
    expect(result.error.message).toContain(`lock "acct:${account}"`);
    expect(result.error.message).toMatch(/held reactor-level, reactor "guarded-step"/);
    expect(result.error.message).toMatch(/Run it inline \(\.step\), compose it \(\.compose\), or narrow its key/);
    expect(errorFromJSON(JSON.parse(JSON.stringify(result.error)) as never)).toMatchObject({
      code: 'handoff_refused',
      details: { key: `acct:${account}` },
    });
    expect(calls).toEqual({ debitUndo: 1, ship: 0, shipCompensate: 0 });
    expect(eventsOf(result.trace, 'async.refused')).toMatchObject([
      { step: 'ship', primitive: 'lock', key: `acct:${account}` },
    ]);
    expect(eventsOf(result.trace, 'step.failed')).toMatchObject([{ step: 'ship', started: false, attempt: 0 }]);
    expect(eventsOf(result.trace, 'async.dispatched')).toEqual([]);
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
    expect(await m.store.get(unitOf(result.executionId, 'ship'))).toBeUndefined();
    expect(await m.coordinator.lockState(`acct:${account}`)).toBeUndefined();
  });

  test('asyncReactor whose child locks K: refused the same way (the child input validated first); nothing queued, no child record', async () => {
    const m = manualEngine();
    let undone = 0;
    const child = reactor('guarded-child')
      .input({ account: z.string() })
      .withLock({ key: ({ account }) => `acct:${account}` })
      .step('c', { run: () => 'c' })
      .build();
    const r = reactor('guarded-parent')
      .input({ account: z.string() })
      .withLock({ key: ({ account }) => `acct:${account}` })
      .step('first', { run: () => 1, undo: () => void undone++ })
      .asyncReactor('child', child, { args: ($) => ({ account: $.input('account') }), waitFor: ['first'] })
      .build();
    const account = fresh('a');
    const result = await m.engine.run(r, { account });
    expect(result).toMatchObject({
      status: 'failed',
      failedStep: 'child',
      error: { code: 'handoff_refused', details: { kind: 'reactor', key: `acct:${account}` } },
    });
    expect(result.status === 'failed' && result.error.message).toContain('asyncReactor');
    expect(undone).toBe(1);
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
    expect(await m.store.get(unitOf(result.executionId, 'child'))).toBeUndefined();
  });

  test('a limit-1 semaphore on a held key is refused; a limit-2 semaphore is not (it cannot deadlock on one holder)', async () => {
    const m = manualEngine();
    const build = (limit: number) =>
      reactor(`sem-${limit}`)
        .input({ k: z.string() })
        .withSemaphore({ key: ({ k }) => k, limit })
        .asyncStep('u', { args: ($) => ({ k: $.input('k') }), semaphore: { key: ({ k }) => k, limit }, run: () => 1 })
        .build();
    const one = await m.engine.run(build(1), { k: fresh('s') });
    expect(one).toMatchObject({
      status: 'failed',
      error: { code: 'handoff_refused', details: { primitive: 'semaphore' } },
    });
    expect(m.memory.queue.counts().ready).toBe(0);
    const two = await m.engine.run(build(2), { k: fresh('s') });
    expect(two.status).toBe('completed');
    expect(m.memory.queue.counts().ready).toBe(1);
  });
});

describe('R-12: the held-key registry includes step-level holds', () => {
  test('a step holding K in its body while a sibling dispatches an asyncStep on K: refused naming the holding step', async () => {
    const m = manualEngine();
    const inHold = gate();
    const release = gate();
    m.engine.subscribe((e) => {
      if (e.type === 'async.refused' || e.type === 'async.dispatched') release.open();
    });
    const r = reactor('step-held')
      .input({ account: z.string() })
      .step('hold', {
        args: ($) => ({ account: $.input('account') }),
        lock: { key: ({ account }) => `acct:${account}` },
        run: async () => (inHold.open(), await release.promise, 'held'),
      })
      .step('pre', { run: async () => (await inHold.promise, 'ready') })
      .asyncStep('ship', {
        waitFor: ['pre'],
        args: ($) => ({ account: $.input('account') }),
        lock: { key: ({ account }) => `acct:${account}` },
        run: () => 'shipped',
      })
      .build();
    const account = fresh('a');
    const result = await m.engine.run(r, { account });
    expect(result).toMatchObject({
      status: 'failed',
      failedStep: 'ship',
      error: { code: 'handoff_refused', details: { key: `acct:${account}` } },
    });
    expect(result.status === 'failed' && result.error.message).toContain('by step "hold" of reactor "step-held"');
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
  });

  test('a different key is dispatched (the guard refuses only the deadlocking hand-off)', async () => {
    const m = manualEngine();
    const r = reactor('other-key')
      .input({ account: z.string() })
      .withLock({ key: ({ account }) => `acct:${account}` })
      .asyncStep('ship', {
        args: ($) => ({ account: $.input('account') }),
        lock: { key: ({ account }) => `ship:${account}` },
        run: () => 'shipped',
      })
      .build();
    const result = await m.engine.run(r, { account: fresh('a') });
    expect(result.status).toBe('completed');
    expect(eventsOf(result.trace, 'async.dispatched')).toHaveLength(1);
    expect(m.memory.queue.counts().ready).toBe(1);
  });
});
