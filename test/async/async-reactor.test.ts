/**
 * `asyncReactor` on the embedded default: an independent child execution linked by `parentId`,
 * its input validated in the parent before anything is queued, and readers that receive the
 * child's real outcome — its value, or a failure they can see.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createEmbeddedEngine, createEngine, reactor } from '../../src/index.js';
import { createWorker } from '../../src/queue/worker.js';
import { eventsOf, manualEngine, untilStatus } from '../background/helpers.js';

const childIdOf = (executionId: string, step: string): string => `${executionId}~${step}`;

const invoice = reactor('invoice')
  .input({ orderId: z.string(), amount: z.number().positive() })
  .step('issue', {
    args: ($) => ({ orderId: $.input('orderId'), amount: $.input('amount') }),
    run: ({ orderId, amount }) => ({ invoice: `INV-${orderId}`, amount }),
  })
  .returns('issue');

describe('asyncReactor', () => {
  test('the reader receives the child value; the child is its own execution (own root) linked by parentId, visible from the parent record', async () => {
    const engine = createEmbeddedEngine();
    const order = reactor('order-with-invoice')
      .input({ orderId: z.string() })
      .asyncReactor('invoice', invoice, { args: ($) => ({ orderId: $.input('orderId'), amount: $.value(42) }) })
      .step('mail', { args: ($) => ({ id: $.result('invoice', 'invoice') }), run: ({ id }) => `mailed ${id}` })
      .returns('mail');
    try {
      const result = await engine.run(order, { orderId: 'o-7' });
      expect(result).toMatchObject({ status: 'completed', value: 'mailed INV-o-7' });
      const childId = childIdOf(result.executionId, 'invoice');
      const parent = (await engine.store.get(result.executionId))!;
      expect(parent.steps['invoice']).toMatchObject({ status: 'completed', unitId: childId });
      const child = (await engine.store.get(childId))!;
      expect(child).toMatchObject({
        reactor: 'invoice',
        status: 'completed',
        parentId: result.executionId,
        rootId: childId,
        input: { orderId: 'o-7', amount: 42 },
      });
      expect(eventsOf(result.trace, 'async.dispatched')).toMatchObject([
        { step: 'invoice', kind: 'reactor', unitId: childId },
      ]);
    } finally {
      await engine.close();
    }
  });

  test('an invalid child input fails the dispatching step in the parent: nothing queued, no child record, earlier steps undone', async () => {
    const m = manualEngine();
    let undone = 0;
    const order = reactor('bad-child-input')
      .step('first', { run: () => 1, undo: () => void undone++ })
      .asyncReactor('invoice', invoice, {
        args: ($) => ({ orderId: $.value('o'), amount: $.value(-1) }),
        waitFor: ['first'],
      })
      .build();
    const result = await m.engine.run(order, {});
    expect(result).toMatchObject({ status: 'failed', failedStep: 'invoice', error: { code: 'arguments_invalid' } });
    expect(result.status === 'failed' && result.validationErrors.map((i) => i.path)).toEqual(['amount']);
    expect(undone).toBe(1);
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
    expect(await m.store.get(childIdOf(result.executionId, 'invoice'))).toBeUndefined();
  });

  test('a failing child: the reader sees its failure (code and message); the child rolled back on its own and is not undone again', async () => {
    const engine = createEmbeddedEngine();
    const calls: string[] = [];
    const flaky = reactor('flaky-child')
      .step('a', { run: () => 'a', undo: () => void calls.push('child undo a') })
      .step('b', {
        waitFor: ['a'],
        run: () => {
          throw Object.assign(new Error('no stock'), { code: 'out_of_stock' });
        },
      })
      .build();
    const parent = reactor('reads-flaky')
      .step('p', { run: () => 'p', undo: () => void calls.push('parent undo p') })
      .asyncReactor('child', flaky, { waitFor: ['p'] })
      .step('after', { args: ($) => ({ c: $.result('child') }), run: () => 'never' })
      .build();
    try {
      const result = await engine.run(parent, {});
      expect(result).toMatchObject({
        status: 'failed',
        failedStep: 'child',
        error: { message: 'no stock', code: 'out_of_stock' },
      });
      expect(calls).toEqual(['child undo a', 'parent undo p']);
      const child = (await engine.store.get(childIdOf(result.executionId, 'child')))!;
      expect(child).toMatchObject({ status: 'failed', failedStep: 'b' });
    } finally {
      await engine.close();
    }
  });

  test('unread: the parent completes at once; the child runs later in a worker that knows only the parent (children register with it)', async () => {
    const m = manualEngine();
    const parent = reactor('spawns-invoice')
      .asyncReactor('invoice', invoice, { args: ($) => ({ orderId: $.value('o-9'), amount: $.value(5) }) })
      .build();
    const result = await m.engine.run(parent, {});
    expect(result.status).toBe('completed');
    const childId = childIdOf(result.executionId, 'invoice');
    expect((await m.store.get(childId))?.status).toBe('pending');
    const worker = m.startWorker();
    try {
      expect(await untilStatus(m.engine, childId, 'completed')).toMatchObject({
        value: { invoice: 'INV-o-9', amount: 5 },
      });
    } finally {
      await worker.stop();
    }
  });

  test('a worker engine given only the parent in `reactors` runs the child it never dispatched (lost child jobs across processes)', async () => {
    const m = manualEngine();
    const parent = reactor('spawns-invoice-elsewhere')
      .asyncReactor('invoice', invoice, { args: ($) => ({ orderId: $.value('o-10'), amount: $.value(6) }) })
      .build();
    const result = await m.engine.run(parent, {});
    const childId = childIdOf(result.executionId, 'invoice');
    expect((await m.store.get(childId))?.status).toBe('pending');
    // Another process's engine: it knows the parent from its options, and has dispatched nothing.
    const other = createEngine({
      store: m.store,
      coordinator: m.coordinator,
      queue: m.memory.queue,
      waitList: m.memory.waitList,
      reactors: [parent],
    });
    const worker = createWorker({ engine: other, consumer: m.memory.consumer, concurrency: 2 });
    try {
      expect(await untilStatus(other, childId, 'completed')).toMatchObject({
        value: { invoice: 'INV-o-10', amount: 6 },
      });
    } finally {
      await worker.stop();
    }
  });
});
