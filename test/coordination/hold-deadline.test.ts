/**
 * A hold's local deadline (docs/decisions/063) in virtual time: a lock or semaphore whose
 * renewals go unanswered is given up at `sent + ttl − margin` on the engine's clock — the step's
 * `ctx.signal` is aborted then, not when the backend answers — and reported once. The backend
 * here is the memory coordinator behind a switch that holds its answers back (a frozen Redis).
 */
import { describe, expect, test } from 'vitest';
import { reactor, type ReactorEvent } from '../../src/index.js';
import { driftMarginMs, HoldDeadline } from '../../src/coordination/deadline.js';
import type { Coordinator, KeyWatches, LockAcquireRequest, LockGrant } from '../../src/ports/coordinator.js';
import { MemoryCoordinator } from '../../src/storage/memory/coordinator.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';

/** Lets every pending callback, microtask and `setImmediate` run (the deadline's verdict waits one macrotask). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

const BACKEND_CALLS = new Set([
  'lockAcquire',
  'lockExtend',
  'lockRelease',
  'lockState',
  'semaphoreAcquire',
  'semaphoreExtend',
  'semaphoreRelease',
  'semaphoreState',
]);

/** A coordinator whose lock and semaphore commands wait while it is frozen, and are served (in order, at the clock's time then) when it thaws. */
function freezable(inner: MemoryCoordinator): {
  readonly coordinator: MemoryCoordinator;
  freeze(): void;
  thaw(): void;
} {
  let thawed: (() => void) | undefined;
  let frozen: Promise<void> | undefined;
  const coordinator = new Proxy(inner, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const call = (...args: unknown[]): unknown => (value as (...a: unknown[]) => unknown).apply(target, args);
      if (typeof property !== 'string' || !BACKEND_CALLS.has(property)) return call;
      return (...args: unknown[]) => (frozen === undefined ? call(...args) : frozen.then(() => call(...args)));
    },
  });
  return {
    coordinator,
    freeze: () => {
      frozen = new Promise<void>((resolve) => (thawed = resolve));
    },
    thaw: () => {
      frozen = undefined;
      thawed?.();
    },
  };
}

interface Marks {
  enter?: number;
  exit?: number;
  reason?: unknown;
}

/** A step body that records when it started and when its signal aborted, then stops with the signal's reason (as aborted I/O would). */
function holdUntilAborted(clock: ManualClock, marks: Marks) {
  return async (_args: unknown, ctx: { readonly signal: AbortSignal }): Promise<void> => {
    marks.enter = clock.now();
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    marks.exit = clock.now();
    marks.reason = ctx.signal.reason;
    throw ctx.signal.reason;
  };
}

describe('a hold whose backend stops answering', () => {
  test('a lock: the step is aborted with hold_lost at ttl − margin, before the waiter is admitted when the backend answers again; reported once', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const backend = freezable(new MemoryCoordinator({ clock }));
    const t = createTestEngine({ clock, coordinator: backend.coordinator });
    const a: Marks = {};
    const b: Marks = {};
    const locked = (body: (args: unknown, ctx: { readonly signal: AbortSignal }) => Promise<void>) =>
      reactor('frozen')
        .step('work', { lock: { key: () => 'acct', ttl: '3s', wait: '30s' }, run: body })
        .build();
    const start = clock.now();
    const runA = t.run(locked(holdUntilAborted(clock, a)), {});
    await settle();
    expect(a.enter).toBe(start);
    const runB = t.run(
      locked(async () => void (b.enter = clock.now())),
      {},
    );
    await settle();
    expect(t.events.some((e) => e.type === 'coordination.waiting')).toBe(true);

    backend.freeze();
    const deadline = 3_000 - driftMarginMs(3_000);
    clock.advance(deadline - 1); // the renewal at 1 s (and 2 s) is sent and not answered
    await settle();
    expect(a.exit).toBeUndefined();
    clock.advance(1);
    await settle();
    expect(a.exit).toBe(start + deadline);
    expect(a.reason).toMatchObject({ code: 'hold_lost', details: { primitive: 'lock', key: 'acct' } });
    const lost = (): ReactorEvent[] => t.events.filter((e) => e.type === 'coordination.lost');
    expect(lost()).toHaveLength(1);

    clock.advance(5_000 - deadline); // the backend stays frozen for 5 s in all
    await settle();
    backend.thaw(); // the renewals now find the key lapsed (answered false): not reported again
    for (let i = 0; i < 10 && b.enter === undefined; i++) {
      clock.advance(100);
      await settle();
    }
    expect(b.enter).toBeGreaterThan(a.exit!);
    const [resultA, resultB] = await Promise.all([runA, runB]);
    expect(resultA.status === 'failed' && resultA.error).toMatchObject({ code: 'hold_lost' });
    expect(resultB.status).toBe('completed');
    expect(lost()).toHaveLength(1);
  });

  test('a semaphore slot: the step is aborted at ttl − margin of its last answered renewal', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const backend = freezable(new MemoryCoordinator({ clock }));
    const t = createTestEngine({ clock, coordinator: backend.coordinator });
    const a: Marks = {};
    const r = reactor('slots')
      .step('work', { semaphore: { key: () => 'pool', limit: 2, ttl: '6s' }, run: holdUntilAborted(clock, a) })
      .build();
    const start = clock.now();
    const run = t.run(r, {});
    await settle();
    clock.advance(2_000); // one renewal, answered: the deadline moves to 2 s + 6 s − margin
    await settle();
    expect(t.events.filter((e) => e.type === 'coordination.extended')).toHaveLength(1);
    backend.freeze();
    const deadline = 2_000 + 6_000 - driftMarginMs(6_000);
    clock.advance(deadline - 2_000 - 1);
    await settle();
    expect(a.exit).toBeUndefined();
    clock.advance(1);
    await settle();
    expect(a.exit).toBe(start + deadline);
    expect(a.reason).toMatchObject({ code: 'hold_lost', details: { primitive: 'semaphore', key: 'pool' } });
    backend.thaw();
    clock.advance(10_000);
    const result = await run;
    expect(result.status === 'failed' && result.error).toMatchObject({ code: 'hold_lost' });
    expect(t.events.filter((e) => e.type === 'coordination.lost')).toHaveLength(1);
  });

  test('a renewal answered false is reported then, and the deadline passing later reports nothing more', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const t = createTestEngine({ clock });
    const a: Marks = {};
    const r = reactor('taken')
      .step('work', { lock: { key: () => 'L', ttl: '3s' }, run: holdUntilAborted(clock, a) })
      .build();
    const start = clock.now();
    const run = t.run(r, {});
    await settle();
    // Another owner takes the key behind the holder's back (e.g. an operator's reset).
    await t.coordinator.lockRelease('L', (await t.coordinator.lockState('L'))!.holder.owner);
    await t.coordinator.lockAcquire({ key: 'L', holder: { owner: 'intruder' }, ttlMs: 60_000 });
    clock.advance(1_000);
    await settle();
    expect(a.exit).toBe(start + 1_000);
    clock.advance(5_000);
    await settle();
    expect((await run).status).toBe('failed');
    expect(t.events.filter((e) => e.type === 'coordination.lost')).toHaveLength(1);
  });

  test('renewals answered in time keep the hold for as long as the work runs, also when virtual time jumps past several deadlines at once', async () => {
    const clock = new ManualClock(); // auto-advance: the body's sleep moves time 20 s in one go
    const t = createTestEngine({ clock });
    const r = reactor('long')
      .step('work', {
        lock: { key: () => 'K', ttl: '3s' },
        run: async (_a, ctx) => (await clock.sleep(20_000), ctx.signal.aborted),
      })
      .returns('work');
    const result = await t.run(r, {});
    expect(result.status === 'completed' && result.value).toBe(false);
    expect(t.events.filter((e) => e.type === 'coordination.lost')).toHaveLength(0);
  });
});

describe('a lock handed over by another holder', () => {
  /**
   * A coordinator that, like Redis's in-process hand-over, grants the key to a waiting offer at
   * once: `confirmed` and `leaseLeftMs` as given. The key is moved in the memory backend so that
   * renewals are answered; `extendsAnswered: false` holds the receiver's renewals back.
   */
  function granting(
    clock: ManualClock,
    grant: { readonly leaseLeftMs?: number; readonly confirmed?: Promise<boolean> },
    extendsAnswered: boolean,
  ): Coordinator {
    const inner = new MemoryCoordinator({ clock });
    const hand = async (offer: LockAcquireRequest): Promise<LockGrant> => {
      const state = await inner.lockState(offer.key);
      if (state !== undefined) await inner.lockRelease(offer.key, state.holder.owner);
      const r = await inner.lockAcquire(offer);
      if (!r.acquired) throw new Error('the test key should be free');
      return { acquired: true, token: r.token, nesting: 1, ...grant };
    };
    const watches: KeyWatches = {
      watch: (_kind, _key, offer) => ({
        wait: () => (offer === undefined ? Promise.resolve(undefined) : hand(offer)),
        close: () => undefined,
      }),
    };
    return new Proxy(inner, {
      get(target, property, receiver) {
        if (property === 'fastPaths') return { ...target.fastPaths, watches };
        if (property === 'lockExtend' && !extendsAnswered) return () => new Promise<boolean>(() => undefined);
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  async function receive(
    coordinator: Coordinator,
    clock: ManualClock,
  ): Promise<{ marks: Marks; run: Promise<unknown>; granted: number }> {
    await coordinator.lockAcquire({ key: 'G', holder: { owner: 'releaser' }, ttlMs: 60_000 });
    const t = createTestEngine({ clock, coordinator });
    const marks: Marks = {};
    const r = reactor('receiver')
      .step('work', { lock: { key: () => 'G', ttl: '3s', wait: '10s' }, run: holdUntilAborted(clock, marks) })
      .build();
    const granted = clock.now();
    const run = t.run(r, {});
    await settle();
    expect(marks.enter).toBe(granted);
    return { marks, run, granted };
  }

  test("on the releaser's lease until confirmed: a confirmation that never comes ends the hold when that lease ends", async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const { marks, granted } = await receive(
      granting(clock, { leaseLeftMs: 700, confirmed: new Promise<boolean>(() => undefined) }, true),
      clock,
    );
    clock.advance(700 - driftMarginMs(3_000) - 1);
    await settle();
    expect(marks.exit).toBeUndefined();
    clock.advance(1);
    await settle();
    expect(marks.exit).toBe(granted + 700 - driftMarginMs(3_000));
  });

  test("confirmed: the receiver's own lease counts from the grant's arrival", async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const { marks, granted } = await receive(
      granting(clock, { leaseLeftMs: 700, confirmed: Promise.resolve(true) }, false),
      clock,
    );
    clock.advance(3_000 - driftMarginMs(3_000) - 1);
    await settle();
    expect(marks.exit).toBeUndefined();
    clock.advance(1);
    await settle();
    expect(marks.exit).toBe(granted + 3_000 - driftMarginMs(3_000));
  });

  test('without leaseLeftMs, the lease counts from when the waiter offered to take the key', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const { marks, granted } = await receive(granting(clock, {}, false), clock);
    clock.advance(3_000 - driftMarginMs(3_000));
    await settle();
    expect(marks.exit).toBe(granted + 3_000 - driftMarginMs(3_000));
  });
});

describe('HoldDeadline', () => {
  test('fires once at sent + ttl − margin; an extension moves it (never back) without a new timer per extension', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    let fired = 0;
    const every = clock.every.bind(clock);
    let timers = 0;
    clock.every = (ms, fn) => (timers++, every(ms, fn));
    const d = new HoldDeadline(clock, 1_000, clock.now(), () => fired++);
    const start = clock.now();
    expect(d.deadline).toBe(start + 1_000 - driftMarginMs(1_000));
    for (let i = 1; i <= 5; i++) d.extended(start + i * 100);
    d.extended(start); // older: ignored
    expect(d.deadline).toBe(start + 1_500 - driftMarginMs(1_000));
    expect(timers).toBe(1);
    clock.advance(1_000);
    await settle();
    expect(fired).toBe(0); // the timer found the deadline moved and waits the rest
    expect(timers).toBe(2);
    clock.advance(500 - driftMarginMs(1_000) - 1);
    await settle();
    expect(fired).toBe(0);
    expect(d.expired).toBe(false);
    clock.advance(1);
    await settle();
    expect(fired).toBe(1);
    expect(d.expired).toBe(true);
    d.extended(clock.now()); // after the report: ignored
    d.expire();
    clock.advance(10_000);
    await settle();
    expect(fired).toBe(1);
  });

  test('an extension answered right behind the timer (same turn) still counts', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    let fired = 0;
    const start = clock.now();
    const d = new HoldDeadline(clock, 1_000, start, () => fired++);
    // A renewal sent at 600 ms whose answer is processed after the timer callback, in the same turn.
    clock.every(600, () => {
      const sentAt = clock.now();
      void Promise.resolve().then(() => d.extended(sentAt));
    });
    clock.advance(2_000);
    await settle();
    expect(fired).toBe(0);
    expect(d.deadline).toBeGreaterThan(start + 2_000);
  });

  test('stop: never fires', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    let fired = 0;
    const d = new HoldDeadline(clock, 1_000, clock.now(), () => fired++);
    d.stop();
    clock.advance(5_000);
    await settle();
    expect(fired).toBe(0);
  });
});
