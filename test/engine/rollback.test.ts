import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { defineStep, failure, halt, reactor, RecordTooLargeError, MemoryStore } from '../../src/index.js';
import { createTestEngine } from '../../src/testing/index.js';

describe('the rollback rule', () => {
  test('the failing step is compensated (body started), completed steps undone newest first', async () => {
    const log: string[] = [];
    const r = reactor('r')
      .step('a', { run: () => 'A', undo: (v) => void log.push(`undo a(${v})`) })
      .step('b', { waitFor: ['a'], run: () => 'B', undo: (v) => void log.push(`undo b(${v})`) })
      .step('c', {
        waitFor: ['b'],
        run: () => {
          throw new Error('boom');
        },
        compensate: (e) => void log.push(`compensate c(${e.message})`),
      })
      .build();
    const result = await createTestEngine().run(r, {});
    expect(log).toEqual(['compensate c(boom)', 'undo b(B)', 'undo a(A)']);
    expect(result).toHaveCompensated(['c']);
    expect(result).toHaveUndone(['b', 'a']);
    expect(result.rollbackFailures).toEqual([]);
  });

  test('with concurrency, undo runs in reverse completion order', async () => {
    const log: string[] = [];
    let releaseSlow!: () => void;
    const slow = new Promise<void>((r) => (releaseSlow = r));
    const r = reactor('r')
      .step('slow', { run: async () => (await slow, 'slow'), undo: () => void log.push('slow') })
      .step('fast', { run: () => (setImmediate(releaseSlow), 'fast'), undo: () => void log.push('fast') })
      .step('fail', {
        waitFor: ['slow', 'fast'],
        run: () => {
          throw new Error('x');
        },
      })
      .build();
    await createTestEngine().run(r, {});
    expect(log).toEqual(['slow', 'fast']);
  });

  test('a compensate that throws and an undo that returns a failure are recorded; the other undos still run', async () => {
    const log: string[] = [];
    const r = reactor('r')
      .step('a', { run: () => 1, undo: () => void log.push('undo a') })
      .step('b', { waitFor: ['a'], run: () => 2, undo: () => failure('refund refused') })
      .step('c', { waitFor: ['b'], run: () => 3, undo: () => void log.push('undo c') })
      .step('d', {
        waitFor: ['c'],
        run: () => {
          throw new Error('boom');
        },
        compensate: () => {
          throw new Error('compensation broke');
        },
      })
      .build();
    const result = await createTestEngine().run(r, {});
    expect(log).toEqual(['undo c', 'undo a']);
    expect(result.rollbackFailures).toEqual([
      { step: 'd', kind: 'compensate', reason: 'raised', message: 'compensation broke' },
      { step: 'b', kind: 'undo', reason: 'returned_failure', message: 'refund refused' },
    ]);
    expect(result).toHaveRollbackFailure({ step: 'd', kind: 'compensate', reason: 'raised' });
    expect(result).toHaveFailedAt('d');
  });

  test('a step whose body never started is not compensated (invalid input of a step definition)', async () => {
    let compensated = false;
    const s = defineStep({ input: { n: z.number() }, run: () => 1, compensate: () => void (compensated = true) });
    const r = reactor('r')
      .step('a', { run: () => 'x' })
      .step('s', s, { args: ($) => ({ n: $.result('a') as never }) })
      .build();
    const result = await createTestEngine().run(r, {});
    expect(result).toHaveFailedAt('s');
    expect(compensated).toBe(false);
  });

  test('a record too large for the store fails the run clearly and undoes the step that produced it', async () => {
    const undone: string[] = [];
    const r = reactor('big')
      .step('blob', { run: () => 'x'.repeat(5_000), undo: () => void undone.push('blob') })
      .build();
    const result = await createTestEngine({ store: new MemoryStore({ maxRecordBytes: 2_000 }) }).run(r, {});
    expect(result).toHaveFailedAt('blob');
    expect(result.status === 'failed' && result.error).toBeInstanceOf(RecordTooLargeError);
    expect(undone).toEqual(['blob']);
  });
});

describe('compose', () => {
  const makeChild = (log: string[], failAt?: string) =>
    reactor('payment')
      .input({ amount: z.number() })
      .step('authorize', {
        args: ($) => ({ amount: $.input('amount') }),
        run: ({ amount }) => ({ auth: `auth-${amount}` }),
        undo: () => void log.push('undo payment.authorize'),
      })
      .step('capture', {
        args: ($) => ({ auth: $.result('authorize', 'auth') }),
        run: ({ auth }, ctx) => {
          if (failAt === 'capture') throw new Error('capture failed');
          if (failAt === 'halt') return halt('manual review');
          return { captured: auth, root: ctx.rootExecutionId };
        },
        undo: () => void log.push('undo payment.capture'),
      })
      .returns('capture');

  test('the child runs inline, shares the root execution id, and its result flows on', async () => {
    const log: string[] = [];
    const r = reactor('order')
      .input({ amount: z.number() })
      .compose('pay', makeChild(log))
      .step('ship', { args: ($) => ({ c: $.result('pay', 'captured') }), run: ({ c }) => c })
      .returns('ship');
    const result = await createTestEngine().run(r, { amount: 5 });
    expect(result.status === 'completed' && result.value).toBe('auth-5');
    expect(result.steps['pay.capture']?.result).toMatchObject({ root: result.executionId });
  });

  test('undoing a composed step replays the child undos, newest first, after later parent steps', async () => {
    const log: string[] = [];
    const r = reactor('order')
      .input({ amount: z.number() })
      .step('reserve', { run: () => 1, undo: () => void log.push('undo reserve') })
      .compose('pay', makeChild(log), { waitFor: ['reserve'] })
      .step('ship', {
        waitFor: ['pay'],
        run: () => {
          throw new Error('no truck');
        },
      })
      .build();
    const result = await createTestEngine().run(r, { amount: 5 });
    expect(result).toHaveFailedAt('ship');
    expect(log).toEqual(['undo payment.capture', 'undo payment.authorize', 'undo reserve']);
    expect(result).toHaveUndone(['pay.capture', 'pay.authorize', 'reserve']);
  });

  test('a child failure rolls the child back, then the parent', async () => {
    const log: string[] = [];
    const r = reactor('order')
      .input({ amount: z.number() })
      .step('reserve', { run: () => 1, undo: () => void log.push('undo reserve') })
      .compose('pay', makeChild(log, 'capture'), { waitFor: ['reserve'] })
      .build();
    const result = await createTestEngine().run(r, { amount: 5 });
    expect(result).toHaveFailedAt('pay.capture');
    expect(log).toEqual(['undo payment.authorize', 'undo reserve']);
  });

  test("a child's halt halts the parent (not a silent success)", async () => {
    const log: string[] = [];
    let shipped = false;
    const r = reactor('order')
      .input({ amount: z.number() })
      .compose('pay', makeChild(log, 'halt'))
      .step('ship', { waitFor: ['pay'], run: () => (shipped = true) })
      .build();
    const result = await createTestEngine().run(r, { amount: 5 });
    expect(result).toHaveHalted('manual review');
    expect(result.status === 'halted' && result.haltedStep).toBe('pay.capture');
    expect(shipped).toBe(false);
    expect(log).toEqual([]);
  });

  test('invalid child input fails the compose step before the child starts', async () => {
    const log: string[] = [];
    const r = reactor('order')
      .compose('pay', makeChild(log), { args: ($) => ({ amount: $.value('lots' as never) }) })
      .build();
    const result = await createTestEngine().run(r, {});
    expect(result).toHaveFailedAt('pay');
    expect(result.status === 'failed' && result.validationErrors[0]?.path).toBe('amount');
  });
});

describe('map (in-process)', () => {
  const chargeOne = (log: string[], failOn?: number) =>
    defineStep({
      input: { n: z.number() },
      run: async ({ n }) => {
        await new Promise((r) => setImmediate(r));
        if (n === failOn) throw new Error(`element ${n} failed`);
        return n * 10;
      },
      compensate: (_e, { n }) => void log.push(`compensate ${n}`),
      undo: (_v, { n }) => void log.push(`undo ${n}`),
    });

  test('results keep element order and expose successes', async () => {
    const r = reactor('m')
      .input({ items: z.array(z.number()) })
      .map('all', { source: ($) => $.input('items'), each: chargeOne([]), args: (n) => ({ n }), maxConcurrency: 3 })
      .returns('all');
    const result = await createTestEngine().run(r, { items: [1, 2, 3, 4, 5] });
    expect(result.status === 'completed' && result.value).toEqual({
      values: [10, 20, 30, 40, 50],
      successes: [10, 20, 30, 40, 50],
      succeeded: [10, 20, 30, 40, 50].map((value, index) => ({ index, value })),
      failures: [],
      notStarted: [],
    });
  });

  test('atomic: the first failure stops unstarted elements; completed elements are undone highest index first, then earlier steps', async () => {
    const log: string[] = [];
    const r = reactor('m')
      .input({ items: z.array(z.number()) })
      .step('before', { run: () => 0, undo: () => void log.push('undo before') })
      .map('all', {
        source: ($) => $.input('items'),
        each: chargeOne(log, 3),
        args: (n) => ({ n }),
        maxConcurrency: 1,
        waitFor: ['before'],
      })
      .build();
    const result = await createTestEngine().run(r, { items: [0, 1, 2, 3, 4, 5] });
    expect(result).toHaveFailedAt('all[3]');
    expect(log).toEqual(['compensate 3', 'undo 2', 'undo 1', 'undo 0', 'undo before']);
    expect(result.steps['all[4]']).toBeUndefined();
  });

  test('non-atomic: every element runs; failures are reported and compensated, the map succeeds; a later failure undoes elements highest first', async () => {
    const log: string[] = [];
    const r = reactor('m')
      .input({ items: z.array(z.number()) })
      .map('all', {
        source: ($) => $.input('items'),
        each: chargeOne(log, 1),
        args: (n) => ({ n }),
        atomic: false,
        maxConcurrency: 2,
      })
      .step('after', {
        waitFor: ['all'],
        run: () => {
          throw new Error('later failure');
        },
      })
      .build();
    const result = await createTestEngine().run(r, { items: [0, 1, 2] });
    const map = result.steps.all?.result as { successes: number[]; failures: { index: number }[] };
    expect(map.successes).toEqual([0, 20]);
    expect(map.failures.map((f) => f.index)).toEqual([1]);
    expect(log).toEqual(['compensate 1', 'undo 2', 'undo 0']);
  });

  test('a map over a reactor runs one child per element and undoes their steps', async () => {
    const log: string[] = [];
    const element = reactor('el')
      .input({ n: z.number() })
      .step('double', {
        args: ($) => ({ n: $.input('n') }),
        run: ({ n }) => n * 2,
        undo: (v) => void log.push(`undo ${v}`),
      })
      .returns('double');
    const r = reactor('m')
      .input({ items: z.array(z.number()) })
      .map('all', { source: ($) => $.input('items'), each: element, args: (n) => ({ n }) })
      .step('fail', {
        waitFor: ['all'],
        run: () => {
          throw new Error('x');
        },
      })
      .build();
    const result = await createTestEngine().run(r, { items: [1, 2, 3] });
    expect(result.steps.all?.result).toMatchObject({ values: [2, 4, 6] });
    expect(log).toEqual(['undo 6', 'undo 4', 'undo 2']);
  });

  test('a source that is not an array fails the map before it starts', async () => {
    const r = reactor('m')
      .input({ items: z.any() })
      .map('all', { source: ($) => $.input('items') as never, each: chargeOne([]), args: (n: number) => ({ n }) })
      .build();
    const result = await createTestEngine().run(r, { items: 'nope' });
    expect(result).toHaveFailedAt('all');
    expect(result.status === 'failed' && result.error.message).toContain('not an array');
  });
});

describe('idempotency keys', () => {
  test('a key run twice executes once; the repeat returns the original result marked as a replay', async () => {
    let runs = 0;
    const r = reactor('pay')
      .input({ n: z.number() })
      .step('s', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => (++runs, n) })
      .returns('s');
    const t = createTestEngine();
    const first = await t.run(r, { n: 1 }, { idempotencyKey: 'k1' });
    const second = await t.run(r, { n: 2 }, { idempotencyKey: 'k1' });
    expect(runs).toBe(1);
    expect(second.executionId).toBe(first.executionId);
    expect(second.replay).toBe(true);
    expect(second.status === 'completed' && second.value).toBe(1);
    const other = await t.run(r, { n: 3 }, { idempotencyKey: 'k2' });
    expect(other.status === 'completed' && other.value).toBe(3);
    expect(runs).toBe(2);
  });

  test('concurrent runs with one key execute once', async () => {
    let runs = 0;
    const r = reactor('pay')
      .step('s', { run: async () => (await new Promise((res) => setImmediate(res)), ++runs) })
      .returns('s');
    const t = createTestEngine();
    const results = await Promise.all(Array.from({ length: 10 }, () => t.run(r, {}, { idempotencyKey: 'same' })));
    expect(runs).toBe(1);
    expect(new Set(results.map((x) => x.executionId)).size).toBe(1);
    expect(results.filter((x) => !x.replay)).toHaveLength(1);
  });

  test('an invalid input claims no key', async () => {
    let runs = 0;
    const r = reactor('pay')
      .input({ n: z.number() })
      .step('s', { run: () => ++runs })
      .build();
    const t = createTestEngine();
    await t.run(r, { n: 'x' as never }, { idempotencyKey: 'k' });
    const ok = await t.run(r, { n: 1 }, { idempotencyKey: 'k' });
    expect(ok.replay).toBe(false);
    expect(runs).toBe(1);
  });

  test('a replay from another engine over the same store is rebuilt from the record', async () => {
    const store = new MemoryStore();
    const r = reactor('pay')
      .step('s', { run: () => ({ ok: true }) })
      .returns('s');
    const first = await createTestEngine({ store }).run(r, {}, { idempotencyKey: 'k' });
    const again = await createTestEngine({ store }).run(r, {}, { idempotencyKey: 'k' });
    expect(again).toMatchObject({
      status: 'completed',
      value: { ok: true },
      replay: true,
      executionId: first.executionId,
    });
  });
});

describe('persistence', () => {
  test('the record is plain versioned JSON with each step state', async () => {
    const t = createTestEngine();
    const result = await t.run(
      reactor('r')
        .step('a', { run: () => ({ x: 1 }) })
        .returns('a'),
      {},
    );
    const record = await t.engine.store.get(result.executionId);
    expect(record).toMatchObject({
      v: 1,
      id: result.executionId,
      rootId: result.executionId,
      reactor: 'r',
      status: 'completed',
      value: { x: 1 },
      steps: { a: { status: 'completed', attempts: 1, result: { x: 1 } } },
    });
  });

  test('a record of another schema version is a clear error', async () => {
    const { parseRecord } = await import('../../src/storage/memory/store.js');
    expect(() => parseRecord(JSON.stringify({ v: 99, id: 'x' }))).toThrow(/schema version 99/);
  });
});

describe('memory store retention', () => {
  test('records and idempotency claims expire after the configured TTL', async () => {
    const { ManualClock } = await import('../../src/testing/index.js');
    const clock = new ManualClock();
    const store = new MemoryStore({ clock, recordTtlMs: 1_000 });
    const t = createTestEngine({ clock, store });
    const r = reactor('keep')
      .step('s', { run: () => 1 })
      .returns('s');
    const first = await t.run(r, {}, { idempotencyKey: 'k' });
    expect(await store.get(first.executionId)).toBeDefined();
    clock.advance(1_001);
    expect(await store.get(first.executionId)).toBeUndefined();
    expect((await store.list()).records).toEqual([]);
    const second = await t.run(r, {}, { idempotencyKey: 'k' });
    expect(second.replay).toBe(false);
  });
});
