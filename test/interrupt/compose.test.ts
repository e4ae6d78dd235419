/**
 * Compose in workers (issue 5 item 6) and inline: a composed child that pauses pauses the root
 * (resumed by the step path `review.approve`); one that parks parks the root; a child's Halt
 * halts the parent with the child's reason (not a silent success: reference finding F-07).
 * Memory backend, manual clock.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { halt, reactor } from '../../src/index.js';
import { createTestEngine } from '../../src/testing/index.js';
import { memoryRig } from './helpers.js';

const review = (log: string[]) =>
  reactor('review')
    .input({ orderId: z.string() })
    .step('check', {
      run: ({ orderId }) => (log.push(`check ${orderId}`), 'checked'),
      undo: () => void log.push('undo check'),
    })
    .interrupt('approve', { waitFor: ['check'], payload: z.object({ approved: z.boolean() }) })
    .step('record', {
      args: ($) => ({ approved: $.result('approve', 'approved') }),
      run: ({ approved }) => (log.push(`record ${String(approved)}`), approved),
    })
    .returns('record');

const order = (log: string[], background?: 'all') => {
  const base = reactor('order')
    .input({ orderId: z.string() })
    .step('reserve', { run: () => (log.push('reserve'), 'R'), undo: () => void log.push('undo reserve') })
    .compose('review', review(log), { waitFor: ['reserve'] })
    .step('ship', {
      args: ($) => ({ ok: $.result('review') }),
      run: ({ ok }) => (log.push(`ship ${String(ok)}`), ok ? 'shipped' : 'kept'),
    });
  return (background ? base.background(background) : base).returns('ship');
};

describe('a composed child pauses the root', () => {
  test('inline: paused at review.approve; resumed by that path; the child and the parent complete; undo replays the child', async () => {
    const log: string[] = [];
    const t = createTestEngine();
    const paused = await t.run(order(log), { orderId: 'p1' });
    expect(paused).toBePaused('review.approve');
    const done = await t.resume(paused, { approved: true }, { step: 'review.approve' });
    expect(done).toHaveCompleted();
    expect(done).toHaveStepResult('review.approve', { approved: true });
    expect(done.status === 'completed' && done.value).toBe('shipped');
    expect(log).toEqual(['reserve', 'check p1', 'record true', 'ship true']);
    await t.engine.undo(paused.executionId);
    expect(log.slice(4)).toEqual(['undo check', 'undo reserve']);
  });

  test('in a worker: the root record is paused at review.approve; the resume goes back to a worker and completes', async () => {
    const log: string[] = [];
    const rig = memoryRig();
    const worker = rig.startWorker();
    const queued = await rig.engine.start(order(log, 'all'), { orderId: 'p2' });
    await rig.memory.drain();
    expect(await rig.engine.result(queued.executionId)).toBePaused('review.approve');
    expect(await rig.engine.resume(queued.executionId, { approved: false }, { step: 'review.approve' })).toMatchObject({
      status: 'queued',
    });
    await rig.memory.drain();
    const done = await rig.engine.result(queued.executionId);
    expect(done?.status === 'completed' && done.value).toBe('kept');
    expect(log).toEqual(['reserve', 'check p2', 'record false', 'ship false']);
    await worker.stop();
  });
});

describe('a composed child parks the root', () => {
  test('in a worker: a child step losing contention parks the root execution (nothing compensated); it completes once the key is free', async () => {
    const log: string[] = [];
    const rig = memoryRig({ autoAdvance: false, background: { workerWaitMs: 0, parkFallbackMs: 60_000 } });
    await rig.coordinator.lockAcquire({ key: 'acct', holder: { owner: 'someone-else' }, ttlMs: 600_000 });
    const child = reactor('charge-child')
      .step('charge', { lock: { key: () => 'acct' }, run: () => (log.push('charge'), 'C') })
      .returns('charge');
    const parent = reactor('parent')
      .step('prep', {
        run: () => (log.push('prep'), 'P'),
        compensate: () => void log.push('compensate prep'),
        undo: () => void log.push('undo prep'),
      })
      .compose('pay', child, { waitFor: ['prep'] })
      .background('all')
      .returns('pay');
    const worker = rig.startWorker();
    const queued = await rig.engine.start(parent, {});
    await expect.poll(async () => (await rig.engine.result(queued.executionId))?.status).toBe('parked');
    expect(await rig.engine.result(queued.executionId)).toMatchObject({
      status: 'parked',
      waitingFor: { primitive: 'lock', key: 'acct' },
    });
    expect(log).toEqual(['prep']);
    await rig.coordinator.lockRelease('acct', 'someone-else');
    rig.clock.advance(60_000);
    await rig.memory.drain();
    const done = await rig.engine.result(queued.executionId);
    expect(done?.status === 'completed' && done.value).toBe('C');
    expect(log).toEqual(['prep', 'charge']);
    await worker.stop();
  });
});

describe("a composed child's halt stops the parent the same way (not a silent success)", () => {
  const halting = (log: string[]) =>
    reactor('gate')
      .step('look', { run: () => (log.push('look'), 1) })
      .step('stop', { waitFor: ['look'], run: () => halt('out_of_stock', { sku: 'a' }) })
      .step('after', { waitFor: ['stop'], run: () => void log.push('child after') })
      .build();
  const parent = (log: string[], background?: 'all') => {
    const base = reactor('halting-parent')
      .step('reserve', { run: () => (log.push('reserve'), 'R'), undo: () => void log.push('undo reserve') })
      .compose('gate', halting(log), { waitFor: ['reserve'] })
      .step('ship', { waitFor: ['gate'], run: () => void log.push('ship') });
    return (background ? base.background(background) : base).build();
  };

  test('inline: the run ends halted at the child step with its reason and data; later parent steps do not run; nothing is undone', async () => {
    const log: string[] = [];
    const result = await createTestEngine().run(parent(log), {});
    expect(result).toHaveHalted('out_of_stock');
    expect(result).toMatchObject({ status: 'halted', haltedStep: 'gate.stop', data: { sku: 'a' } });
    expect(result.steps.gate?.status).toBe('halted');
    expect(log).toEqual(['reserve', 'look']);
  });

  test('in a worker: the same halted record', async () => {
    const log: string[] = [];
    const rig = memoryRig();
    const worker = rig.startWorker();
    const queued = await rig.engine.start(parent(log, 'all'), {});
    await rig.memory.drain();
    expect(await rig.engine.result(queued.executionId)).toMatchObject({
      status: 'halted',
      haltedStep: 'gate.stop',
      reason: 'out_of_stock',
    });
    expect(log).toEqual(['reserve', 'look']);
    await worker.stop();
  });
});

describe('a paused run keeps its reactor-level ordered-lock position (decision 015)', () => {
  test('a later execution on the key waits behind the paused one and passes once it was resumed and finished', async () => {
    const log: string[] = [];
    const rig = memoryRig({ autoAdvance: false, background: { workerWaitMs: 0, parkFallbackMs: 60_000 } });
    const ordered = reactor('ordered-approval')
      .input({ id: z.string() })
      .withOrderedLock({ key: () => 'line' })
      .step('first', { args: ($) => ({ id: $.input('id') }), run: ({ id }) => void log.push(`first ${id}`) })
      .interrupt('approve', { waitFor: ['first'], args: ($) => ({ id: $.input('id') }), payload: { ok: z.boolean() } })
      .step('last', {
        waitFor: ['approve'],
        args: ($) => ({ id: $.input('id') }),
        run: ({ id }) => void log.push(`last ${id}`),
      })
      .background('all')
      .build();
    const worker = rig.startWorker();
    const a = await rig.engine.start(ordered, { id: 'a' });
    await expect.poll(async () => (await rig.engine.result(a.executionId))?.status).toBe('paused');
    const b = await rig.engine.start(ordered, { id: 'b' });
    await expect.poll(async () => (await rig.engine.result(b.executionId))?.status).toBe('parked');
    expect(await rig.engine.result(b.executionId)).toMatchObject({
      waitingFor: { primitive: 'ordered_lock', key: 'line' },
    });
    expect(log).toEqual(['first a']);
    expect((await rig.engine.resume(a.executionId, { ok: true })).status).toBe('queued');
    await expect.poll(async () => (await rig.engine.result(a.executionId))?.status).toBe('completed');
    await expect.poll(async () => (await rig.engine.result(b.executionId))?.status).toBe('paused'); // woken by A's completion
    expect(log).toEqual(['first a', 'last a', 'first b']);
    await worker.stop();
  });
});
