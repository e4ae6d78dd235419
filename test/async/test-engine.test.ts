/**
 * The shipped test surface runs async units (issue 5, gap 1): `createTestEngine()` and
 * `testReactor()` have an in-process queue and worker pool on the test's `ManualClock`. An
 * in-process reader lets the pool run before it lets virtual time pass, so nothing here sleeps
 * and no poll spends virtual time; `drain()` waits for every background job.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { failure, reactor } from '../../src/index.js';
import { createTestEngine, ManualClock, testReactor } from '../../src/testing/index.js';
import { eventsOf } from '../background/helpers.js';

const unitOf = (executionId: string, step: string): string => `${executionId}~${step}`;

const invoice = reactor('te-invoice')
  .input({ orderId: z.string() })
  .step('issue', {
    args: ($) => ({ orderId: $.input('orderId') }),
    run: ({ orderId }) => ({ number: `INV-${orderId}` }),
  })
  .returns('issue');

const order = reactor('te-order')
  .input({ orderId: z.string() })
  .asyncStep('ship', {
    args: ($) => ({ orderId: $.input('orderId') }),
    run: ({ orderId }) => ({ label: `L-${orderId}` }),
  })
  .asyncReactor('invoice', invoice, { args: ($) => ({ orderId: $.input('orderId') }) })
  .step('mail', {
    args: ($) => ({ label: $.result('ship', 'label'), invoice: $.result('invoice', 'number') }),
    run: ({ label, invoice }) => `${label} ${invoice}`,
  })
  .returns('mail');

describe('createTestEngine runs async units in its own pool', () => {
  test('an asyncStep and an asyncReactor read by a later step complete; no virtual time is spent waiting for them', async () => {
    const t = createTestEngine();
    const result = await t.run(order, { orderId: 'o-1' });
    expect(result).toHaveCompleted();
    expect(result).toHaveStepResult('mail', 'L-o-1 INV-o-1');
    expect(t.clock.sleeps).toEqual([]); // the readers let the pool run instead of polling the clock
    expect(await t.store.get(unitOf(result.executionId, 'ship'))).toMatchObject({
      status: 'completed',
      value: { label: 'L-o-1' },
    });
    expect(await t.engine.result(unitOf(result.executionId, 'invoice'))).toMatchObject({
      status: 'completed',
      value: { number: 'INV-o-1' },
    });
    expect(t.events.filter((e) => e.type === 'async.completed')).toHaveLength(1);
  });

  test('a unit retried with backoff: the delays run on the manual clock, the reader gets the value', async () => {
    const t = createTestEngine();
    const r = reactor('te-retry')
      .asyncStep('charge', {
        retry: { maxAttempts: 3, backoff: 'exponential', baseDelay: '100ms' },
        run: (_a, ctx) => (ctx.attempt < 3 ? failure('psp timeout') : 'charged'),
      })
      .step('receipt', { args: ($) => ({ c: $.result('charge') }), run: ({ c }) => `receipt for ${c}` })
      .returns('receipt');
    const result = await t.run(r, {});
    expect(result).toMatchObject({ status: 'completed', value: 'receipt for charged' });
    expect(t.clock.sleeps).toEqual(expect.arrayContaining([100, 200]));
    const unit = (await t.store.get(unitOf(result.executionId, 'charge')))!;
    expect(eventsOf(unit.trace ?? [], 'async.retrying').map((e) => e.attempt)).toEqual([2, 3]);
  });

  test('mocks reach the unit (it runs the mocked definition)', async () => {
    const t = createTestEngine();
    const result = await t.run(
      order,
      { orderId: 'o-2' },
      { mocks: { ship: { value: { label: 'MOCK' } }, 'invoice.issue': { value: { number: 'N' } } } },
    );
    expect(result).toMatchObject({ status: 'completed', value: 'MOCK N' });
  });

  test('a unit nobody reads: the run completes at once, drain() runs the unit to its end', async () => {
    const t = createTestEngine();
    const r = reactor('te-fire')
      .asyncStep('audit', { run: () => 'audited' })
      .step('b', { run: () => 2 })
      .returns('b');
    const result = await t.run(r, {});
    expect(result).toHaveCompleted();
    await t.drain();
    expect(await t.engine.result(unitOf(result.executionId, 'audit'))).toMatchObject({
      status: 'completed',
      value: 'audited',
    });
  });

  test('testReactor drains: its units have finished, and a background run comes back with its final result', async () => {
    const audited: string[] = [];
    const fire = reactor('te-fire2')
      .asyncStep('audit', { run: (_a, ctx) => void audited.push(ctx.executionId) })
      .step('b', { run: () => 2 })
      .returns('b');
    const result = await testReactor(fire, {});
    expect(audited).toEqual([unitOf(result.executionId, 'audit')]);
    const bg = reactor('te-bg')
      .background('all')
      .step('a', { run: () => 'done in the pool' })
      .returns('a');
    expect(await testReactor(bg, {})).toMatchObject({ status: 'completed', value: 'done in the pool' });
  });

  test('with autoAdvance: false, a unit retry waits for clock.advance; drain() resolves after it', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock });
    let attempts = 0;
    const r = reactor('te-manual')
      .asyncStep('u', {
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: '1s' },
        run: () => (++attempts === 1 ? failure('once') : 'ok'),
      })
      .returns('u');
    const running = t.run(r, {});
    await expect.poll(() => attempts).toBe(1);
    await expect.poll(() => clock.pending).toBeGreaterThanOrEqual(1);
    let drained = false;
    const draining = t.drain().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false); // the retry is delayed on the clock
    clock.advance(1_000);
    await draining;
    expect(attempts).toBe(2);
    expect(await running).toMatchObject({ status: 'completed', value: 'ok' });
    await t.close();
  });
});
