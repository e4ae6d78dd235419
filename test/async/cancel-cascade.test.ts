/**
 * Cancel cascades on the memory backend with a manual clock (docs/decisions/087): cancelling a
 * parent with 3 running `asyncReactor` children ends all four `cancelled`, the children's
 * rollback before the parent's undos (proven by a shared sequence); a queued parent's cancel
 * (replayed from its record) cascades too, and so does its `deadline`; recursion to a
 * grandchild; `cancelChildren: false` leaves a child running; a failure's rollback cascades
 * nothing. No test sleeps: steps wait on their abort signal, the clock is moved by hand.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  MemoryCoordinator,
  MemoryStore,
  reactor,
  type AnyReactorDefinition,
  type EngineOptions,
  type ReactorEvent,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/clock.js';
import { manualEngine, type Manual } from '../background/helpers.js';

const T0 = Date.UTC(2026, 0, 1);

/** What happened, in order: one shared sequence across parent and children. */
type Log = string[];

/** An engine over the memory queue, store and coordinator on one manual clock; its worker started. */
function clocked(options: Partial<EngineOptions> = {}): Manual & { clock: ManualClock } {
  const clock = new ManualClock({ start: T0, autoAdvance: false });
  const m = manualEngine({
    clock,
    queueOptions: { clock },
    store: new MemoryStore({ clock }),
    coordinator: new MemoryCoordinator({ clock }),
    checkpointIntervalMs: 0,
    ...options,
  });
  m.startWorker(8);
  return { ...m, clock };
}

/** Turns the event loop (no timer: virtual time stands still) until `done` holds. */
async function until(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (await done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never: ${what}`);
}

/** Resolves when `signal` aborts. */
const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

/** A child: `reserve` (undo logged), then `hold` until aborted; with `inner`, it dispatches `inner` as its own child too. */
function childReactor(log: Log, name = 'child', inner?: AnyReactorDefinition): AnyReactorDefinition {
  const hold = {
    waitFor: ['reserve'] as const,
    run: async (_args: unknown, ctx: { readonly signal: AbortSignal }) => {
      log.push(`${name}.holding`);
      await aborted(ctx.signal);
      throw ctx.signal.reason;
    },
  };
  const base = reactor(name)
    .input({ n: z.number() })
    .step('reserve', {
      args: ($) => ({ n: $.input('n') }),
      run: ({ n }) => (log.push(`${name}${n}.reserve`), n),
      undo: (n) => void log.push(`${name}${String(n)}.undo`),
    });
  if (!inner) return base.step('hold', hold).build();
  return base
    .asyncReactor('grandchild', inner, { args: ($) => ({ n: $.input('n') }), waitFor: ['reserve'] })
    .step('hold', hold)
    .build();
}

/** A parent: `prepare` (undo logged), 3 children dispatched, then `hold` until aborted. */
function parentReactor(log: Log, child: AnyReactorDefinition, options: { deadline?: number; keep?: boolean } = {}) {
  const keep = options.keep ? { cancelChildren: false } : {};
  return reactor('parent', options.deadline === undefined ? {} : { deadline: options.deadline })
    .step('prepare', { run: () => (log.push('parent.prepare'), 'p'), undo: () => void log.push('parent.undo') })
    .asyncReactor('c1', child, { args: ($) => ({ n: $.value(1) }), waitFor: ['prepare'] })
    .asyncReactor('c2', child, { args: ($) => ({ n: $.value(2) }), waitFor: ['prepare'] })
    .asyncReactor('c3', child, { args: ($) => ({ n: $.value(3) }), waitFor: ['prepare'], ...keep })
    .step('hold', {
      waitFor: ['prepare'],
      run: async (_args, ctx) => {
        log.push('parent.holding');
        await aborted(ctx.signal);
        throw ctx.signal.reason;
      },
    })
    .build();
}

const childIds = (parentId: string): string[] => ['c1', 'c2', 'c3'].map((s) => `${parentId}~${s}`);

/** Every child's undo comes before the parent's undo. */
function expectChildrenFirst(log: Log, children: readonly string[]): void {
  const parentUndo = log.indexOf('parent.undo');
  expect(parentUndo).toBeGreaterThan(-1);
  for (const c of children) {
    const undo = log.indexOf(`${c}.undo`);
    expect(undo, `${c} undone`).toBeGreaterThan(-1);
    expect(undo, `${c} undone before the parent`).toBeLessThan(parentUndo);
  }
}

describe('cancel cascades (memory, manual clock)', () => {
  test('cancel of a running parent with 3 running children: all cancelled, the children rolled back first', async () => {
    const m = clocked();
    const events: ReactorEvent[] = [];
    m.engine.subscribe((e) => void events.push(e));
    const log: Log = [];
    const parent = parentReactor(log, childReactor(log));
    const started = await m.engine.start(parent, {});
    await until(() => log.filter((l) => l.endsWith('.holding')).length === 4, 'parent and 3 children holding');
    await m.engine.cancel(started.executionId);
    await until(async () => (await m.engine.result(started.executionId))?.status === 'cancelled', 'parent cancelled');
    for (const id of childIds(started.executionId))
      expect(await m.engine.result(id)).toMatchObject({ status: 'cancelled' });
    expectChildrenFirst(log, ['child1', 'child2', 'child3']);
    const cascaded = events.filter((e) => e.type === 'async.child_cancelled');
    expect(cascaded.map((e) => (e.type === 'async.child_cancelled' ? [e.step, e.status] : []))).toEqual(
      expect.arrayContaining([
        ['c1', 'cancelled'],
        ['c2', 'cancelled'],
        ['c3', 'cancelled'],
      ]),
    );
    expect(cascaded.every((e) => e.executionId === started.executionId)).toBe(true);
  });

  test('the reactor deadline cascades the same way', async () => {
    const m = clocked();
    const log: Log = [];
    const parent = parentReactor(log, childReactor(log), { deadline: 60_000 });
    const started = await m.engine.start(parent, {});
    await until(() => log.filter((l) => l.endsWith('.holding')).length === 4, 'parent and 3 children holding');
    m.clock.advance(60_000);
    await until(async () => (await m.engine.result(started.executionId))?.status === 'cancelled', 'parent cancelled');
    const result = await m.engine.result(started.executionId);
    expect(result).toMatchObject({ status: 'cancelled', cause: { code: 'deadline_exceeded' } });
    for (const id of childIds(started.executionId))
      expect(await m.engine.result(id)).toMatchObject({ status: 'cancelled' });
    expectChildrenFirst(log, ['child1', 'child2', 'child3']);
  });

  test('recursively: a child cancelled by the cascade cancels its own child first', async () => {
    const m = clocked();
    const log: Log = [];
    const grandchild = childReactor(log, 'grand');
    const parent = parentReactor(log, childReactor(log, 'child', grandchild));
    const started = await m.engine.start(parent, {});
    await until(() => log.filter((l) => l.endsWith('.holding')).length === 7, 'parent, 3 children, 3 grandchildren');
    await m.engine.cancel(started.executionId);
    await until(async () => (await m.engine.result(started.executionId))?.status === 'cancelled', 'parent cancelled');
    for (const id of childIds(started.executionId)) {
      expect(await m.engine.result(id)).toMatchObject({ status: 'cancelled' });
      expect(await m.engine.result(`${id}~grandchild`)).toMatchObject({ status: 'cancelled' });
    }
    for (const n of [1, 2, 3]) expect(log.indexOf(`grand${n}.undo`)).toBeLessThan(log.indexOf(`child${n}.undo`));
    expectChildrenFirst(log, ['child1', 'child2', 'child3', 'grand1', 'grand2', 'grand3']);
  });

  test('cancelChildren: false leaves that child running', async () => {
    const m = clocked();
    const log: Log = [];
    const parent = parentReactor(log, childReactor(log), { keep: true });
    const started = await m.engine.start(parent, {});
    await until(() => log.filter((l) => l.endsWith('.holding')).length === 4, 'parent and 3 children holding');
    await m.engine.cancel(started.executionId);
    await until(async () => (await m.engine.result(started.executionId))?.status === 'cancelled', 'parent cancelled');
    const [c1, c2, c3] = childIds(started.executionId);
    expect(await m.engine.result(c1!)).toMatchObject({ status: 'cancelled' });
    expect(await m.engine.result(c2!)).toMatchObject({ status: 'cancelled' });
    expect((await m.engine.result(c3!))?.status).toBe('running');
    expect(log).not.toContain('child3.undo');
    await m.engine.cancel(c3!);
    await until(async () => (await m.engine.result(c3!))?.status === 'cancelled', 'c3 cancelled by hand');
  });

  test('a parent parked between jobs is cancelled from its record: its running children first', async () => {
    const m = clocked();
    const log: Log = [];
    const child = childReactor(log);
    // The parent dispatches, then retries a failing step after a delay: between its jobs it is not running.
    const parent = reactor('parent-retrying')
      .step('prepare', { run: () => (log.push('parent.prepare'), 'p'), undo: () => void log.push('parent.undo') })
      .asyncReactor('c1', child, { args: ($) => ({ n: $.value(1) }), waitFor: ['prepare'] })
      .asyncReactor('c2', child, { args: ($) => ({ n: $.value(2) }), waitFor: ['prepare'] })
      .asyncReactor('c3', child, { args: ($) => ({ n: $.value(3) }), waitFor: ['prepare'] })
      .step('flaky', {
        waitFor: ['prepare'],
        retry: { maxAttempts: 3, backoff: 'fixed', baseDelay: 3_600_000 },
        run: () => {
          log.push('parent.flaky');
          throw new Error('not yet');
        },
      })
      .build();
    const started = await m.engine.start(parent, {});
    await until(
      () => log.filter((l) => l.endsWith('.holding')).length === 3 && log.includes('parent.flaky'),
      '3 children holding, the parent waiting for its retry',
    );
    await until(async () => (await m.engine.result(started.executionId))?.status === 'queued', 'parent queued');
    const cancelled = await m.engine.cancel(started.executionId);
    expect(cancelled.status).toBe('cancelled');
    for (const id of childIds(started.executionId))
      expect(await m.engine.result(id)).toMatchObject({ status: 'cancelled' });
    expectChildrenFirst(log, ['child1', 'child2', 'child3']);
  });

  test("a failure's rollback cancels no child", async () => {
    const m = clocked();
    const log: Log = [];
    const child = childReactor(log);
    const parent = reactor('parent-failing')
      .step('prepare', { run: () => 'p', undo: () => void log.push('parent.undo') })
      .asyncReactor('c1', child, { args: ($) => ({ n: $.value(1) }), waitFor: ['prepare'] })
      .step('boom', {
        waitFor: ['prepare'],
        run: () => {
          throw new Error('boom');
        },
      })
      .build();
    const started = await m.engine.start(parent, {});
    await until(async () => (await m.engine.result(started.executionId))?.status === 'failed', 'parent failed');
    await until(() => log.includes('child.holding'), 'child holding');
    expect((await m.engine.result(`${started.executionId}~c1`))?.status).toBe('running');
    await m.engine.cancel(`${started.executionId}~c1`);
    await until(
      async () => (await m.engine.result(`${started.executionId}~c1`))?.status === 'cancelled',
      'c1 cancelled',
    );
  });
});
