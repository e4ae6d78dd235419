/**
 * The Coordinator contract: one suite of scenarios every backend must pass (memory with a manual
 * clock, Redis with real time): the required transitions, and each fast path the backend offers
 * (skipped when it offers none). Durations are small (150–400 ms) so the Redis run stays quick;
 * assertions on remaining times use bounds, never exact values, since real time moves on Redis;
 * where a claim needs steps inside a deadline, the bounds come from the backend clock read around
 * each step, and a run that a stalled machine pushed past a deadline is repeated at a larger scale.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Coordinator, HolderInfo, KeyChanges, OrderedTicket, RateWindow } from '../../src/ports/coordinator.js';

/** A backend under test plus the means to move its time forward. */
export interface CoordinatorHarness {
  readonly coordinator: Coordinator;
  /** Moves the backend's time forward by at least `ms` (a manual clock advances, Redis sleeps). */
  advance(ms: number): Promise<void>;
  /**
   * Resolves once the backend listens for the changes its waits were registered for (a Redis
   * subscription confirmed); without it, a short real pause stands in.
   */
  listening?(): Promise<void>;
  close(): Promise<void>;
}

/** The observable state of a promise, for checking that a wait has (not) resolved yet. */
export function track(promise: Promise<unknown>): { readonly settled: boolean } {
  const state = { settled: false };
  void promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

/** A short real pause: lets queued work (a backend's subscription, a microtask chain) finish. */
export function realPause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Resolves once `backend` listens on a channel and has every subscription confirmed (a
 * {@link CoordinatorHarness.listening} for Redis), however slowly a loaded machine gets there.
 */
export async function subscribed(backend: {
  subscriptions(): { confirmed: boolean; unconfirmed: number; channels: number };
}): Promise<void> {
  await expect
    .poll(
      () => {
        const health = backend.subscriptions();
        return health.channels > 0 && health.confirmed && health.unconfirmed === 0;
      },
      { timeout: 10_000 },
    )
    .toBe(true);
}

/** Resolves with `'timeout'` if `promise` does not settle within `ms` of real time. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What an operation returned, and the backend clock just before it was sent and just after it answered. */
interface Timed<T> {
  readonly value: T;
  readonly before: number;
  readonly after: number;
}

/** Runs `operation` between two readings of the backend clock: it took effect somewhere in [before, after]. */
async function timed<T>(coordinator: Coordinator, operation: () => Promise<T>): Promise<Timed<T>> {
  const before = await coordinator.time();
  const value = await operation();
  return { value, before, after: await coordinator.time() };
}

/**
 * Runs a scenario whose claim needs its steps to land inside deadlines (a TTL, a window) at time
 * scale 1, 2, 4, … until a run's own clock readings show they did. A run returns `false` when a
 * stall of the machine (not the backend) pushed a step past a deadline, so it proves nothing, and
 * `true` once it has checked everything. A manual clock never stalls: its first run decides.
 */
async function atGrowingScale(run: (scale: number) => Promise<boolean>): Promise<void> {
  const scales = [1, 2, 4, 8, 16];
  for (const scale of scales) if (await run(scale)) return;
  throw new Error(`the scenario missed its deadlines at every time scale up to ${scales.at(-1)}`);
}

const holder = (owner: string, extra: Partial<HolderInfo> = {}): HolderInfo => ({ owner, ...extra });

export function describeCoordinatorContract(name: string, makeHarness: () => Promise<CoordinatorHarness>): void {
  describe(`Coordinator contract: ${name}`, () => {
    let harness: CoordinatorHarness;
    let c: Coordinator;
    let prefix: string;
    /** A key unique to this test, so tests never share state on a shared backend. */
    const key = (suffix: string): string => `${prefix}:${suffix}`;
    /** Resolves once the waits registered so far are listened for. */
    const listening = (): Promise<void> => harness.listening?.() ?? realPause(50);

    beforeEach(async () => {
      harness = await makeHarness();
      c = harness.coordinator;
      prefix = `contract:${crypto.randomUUID().slice(0, 8)}`;
    });
    afterEach(async () => {
      await harness.close();
    });

    describe('time', () => {
      it('reports the backend clock in ms and moves with it', async () => {
        const before = await c.time();
        await harness.advance(200);
        const after = await c.time();
        expect(after - before).toBeGreaterThanOrEqual(200);
      });
    });

    describe('arguments', () => {
      it('refuses fractional, zero or negative durations and limits with a RangeError, taking nothing', async () => {
        const k = key('bad');
        const h = holder('a');
        const refusals: (() => Promise<unknown>)[] = [
          () => c.lockAcquire({ key: k, holder: h, ttlMs: 0 }),
          () => c.lockAcquire({ key: k, holder: h, ttlMs: 1.5 }),
          () => c.lockExtend(k, 'a', -1),
          () => c.semaphoreAcquire({ key: k, holder: h, limit: 1, ttlMs: 0 }),
          () => c.semaphoreAcquire({ key: k, holder: h, limit: -1, ttlMs: 300 }),
          () => c.semaphoreExtend(k, 'a', Number.NaN),
          () => c.rateTake({ windows: [{ key: k, limit: 1, periodMs: 0 }], id: 'r1' }),
          () => c.rateTake({ windows: [{ key: k, limit: 1.5, periodMs: 300 }], id: 'r1' }),
          () => c.rateState(k, 0),
          () => c.periodMark({ key: k, bucket: 'b', ttlMs: 0 }),
        ];
        for (const refusal of refusals) await expect(refusal()).rejects.toBeInstanceOf(RangeError);
        expect(await c.lockState(k)).toBeUndefined();
        expect((await c.semaphoreState(k, 1)).holders).toEqual([]);
        expect((await c.rateState(k, 300)).count).toBe(0);
        expect(await c.periodIsMarked(k, 'b')).toBe(false);
      });
    });

    describe('lock', () => {
      it('grants a free key with nesting 1 and a token, and reports the hold', async () => {
        const k = key('lock');
        const result = await c.lockAcquire({
          key: k,
          holder: holder('a', { executionId: 'a.1', reactor: 'R', step: 's' }),
          ttlMs: 300,
        });
        expect(result).toMatchObject({ acquired: true, nesting: 1 });
        if (!result.acquired) return;
        expect(result.token).toMatch(/^\d+$/);
        const state = await c.lockState(k);
        expect(state).toMatchObject({
          key: k,
          holder: { owner: 'a', executionId: 'a.1', reactor: 'R', step: 's' },
          nesting: 1,
          token: result.token,
        });
        expect(state?.ttlMs).toBeGreaterThan(0);
        expect(state?.ttlMs).toBeLessThanOrEqual(300);
        expect(await c.lockState(key('other'))).toBeUndefined();
      });

      it('refuses another owner, naming the holder and the time left', async () => {
        const k = key('lock');
        await c.lockAcquire({ key: k, holder: holder('a', { reactor: 'R' }), ttlMs: 300 });
        const refused = await c.lockAcquire({ key: k, holder: holder('b'), ttlMs: 300 });
        expect(refused).toMatchObject({ acquired: false, holder: { owner: 'a', reactor: 'R' } });
        if (refused.acquired) return;
        expect(refused.ttlMs).toBeGreaterThan(0);
        expect(refused.ttlMs).toBeLessThanOrEqual(300);
      });

      it('re-enters for the same owner with a counted nesting and the outer token', async () => {
        const k = key('lock');
        const outer = await c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 300 });
        const inner = await c.lockAcquire({ key: k, holder: holder('a', { step: 'inner' }), ttlMs: 300 });
        const innermost = await c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 300 });
        expect(outer.acquired && inner.acquired && innermost.acquired).toBe(true);
        if (!outer.acquired || !inner.acquired || !innermost.acquired) return;
        expect([outer.nesting, inner.nesting, innermost.nesting]).toEqual([1, 2, 3]);
        expect(inner.token).toBe(outer.token);
        expect(innermost.token).toBe(outer.token);
        expect((await c.lockState(k))?.nesting).toBe(3);
      });

      it('refreshes the TTL on re-entry', async () => {
        await atGrowingScale(async (scale) => {
          const k = key(`lock-${scale}`);
          const first = await timed(c, () => c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 300 * scale }));
          await harness.advance(150 * scale);
          const reentry = await timed(c, () => c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 400 * scale }));
          await harness.advance(200 * scale); // past the first TTL, inside the re-entry's
          const state = await timed(c, () => c.lockState(k));
          const inTime =
            reentry.after < first.before + 300 * scale &&
            state.before >= first.after + 300 * scale &&
            state.after < reentry.before + 400 * scale;
          if (!inTime) return false;
          expect([first.value.acquired, reentry.value.acquired]).toEqual([true, true]);
          expect(state.value).toMatchObject({ holder: { owner: 'a' }, nesting: 2 });
          return true;
        });
      });

      it('frees the key only when the outermost hold is released', async () => {
        const k = key('lock');
        await c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 300 });
        await c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 300 });
        expect(await c.lockRelease(k, 'a')).toEqual({ released: true, nesting: 1 });
        expect((await c.lockAcquire({ key: k, holder: holder('b'), ttlMs: 300 })).acquired).toBe(false);
        expect(await c.lockRelease(k, 'a')).toEqual({ released: true, nesting: 0 });
        expect(await c.lockState(k)).toBeUndefined();
        expect(await c.lockAcquire({ key: k, holder: holder('b'), ttlMs: 300 })).toMatchObject({
          acquired: true,
          nesting: 1,
        });
      });

      it('checks the owner on release: another owner cannot release, a free key reports nothing released', async () => {
        const k = key('lock');
        expect((await c.lockRelease(k, 'a')).released).toBe(false);
        await c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 300 });
        expect((await c.lockRelease(k, 'b')).released).toBe(false);
        expect(await c.lockState(k)).toMatchObject({ holder: { owner: 'a' }, nesting: 1 });
        expect(await c.lockRelease(k, 'a')).toEqual({ released: true, nesting: 0 });
        expect((await c.lockRelease(k, 'a')).released).toBe(false);
      });

      it('checks the owner on extend, and an extension outlives the original TTL', async () => {
        await atGrowingScale(async (scale) => {
          const k = key(`lock-${scale}`);
          const [ttlMs, extensionMs] = [250 * scale, 400 * scale];
          const acquired = await timed(c, () => c.lockAcquire({ key: k, holder: holder('a'), ttlMs }));
          expect(acquired.value.acquired).toBe(true);
          expect(await c.lockExtend(k, 'b', 1000 * scale)).toBe(false);
          await harness.advance(150 * scale);
          const extended = await timed(c, () => c.lockExtend(k, 'a', extensionMs));
          const state = await timed(c, () => c.lockState(k));
          await harness.advance(150 * scale); // past the original TTL, inside the extension
          const later = await timed(c, () => c.lockState(k));
          const intruder = await timed(c, () => c.lockAcquire({ key: k, holder: holder('b'), ttlMs: 300 }));
          // The original hold lapsed in [acquired.before, acquired.after] + ttlMs; an extension sent
          // at or after extended.before lasts until extended.before + extensionMs at the earliest.
          const lastsUntil = extended.before + extensionMs;
          const inTime =
            extended.after < acquired.before + ttlMs &&
            later.before >= acquired.after + ttlMs &&
            intruder.after < lastsUntil;
          if (!inTime) return false;
          expect(extended.value).toBe(true);
          expect(state.value?.ttlMs).toBeGreaterThanOrEqual(lastsUntil - state.after);
          expect(state.value?.ttlMs).toBeGreaterThan(acquired.after + ttlMs - state.before); // more than was left
          expect(state.value?.ttlMs).toBeLessThanOrEqual(extensionMs);
          expect(later.value).toMatchObject({ holder: { owner: 'a' }, nesting: 1 });
          expect(intruder.value.acquired).toBe(false);
          return true;
        });
      });

      it('frees the key when the TTL lapses; the lapsed owner can neither release nor extend it', async () => {
        const k = key('lock');
        await c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 150 });
        await harness.advance(200);
        expect(await c.lockState(k)).toBeUndefined();
        expect(await c.lockExtend(k, 'a', 1000)).toBe(false);
        expect((await c.lockRelease(k, 'a')).released).toBe(false);
        expect(await c.lockAcquire({ key: k, holder: holder('b'), ttlMs: 300 })).toMatchObject({
          acquired: true,
          nesting: 1,
        });
        expect((await c.lockRelease(k, 'a')).released).toBe(false);
        expect(await c.lockState(k)).toMatchObject({ holder: { owner: 'b' } });
      });

      it('issues fencing tokens that strictly increase across acquisitions, releases and expiries', async () => {
        const k = key('lock');
        const tokens: bigint[] = [];
        const take = async (owner: string, ttlMs = 300): Promise<void> => {
          const result = await c.lockAcquire({ key: k, holder: holder(owner), ttlMs });
          expect(result.acquired).toBe(true);
          if (result.acquired) tokens.push(BigInt(result.token));
        };
        await take('a');
        await c.lockRelease(k, 'a');
        await take('b');
        await c.lockRelease(k, 'b');
        await take('a');
        await c.lockRelease(k, 'a');
        await take('c', 150);
        await harness.advance(200); // c's hold lapses without a release
        await take('a');
        expect(tokens).toHaveLength(5);
        for (let i = 1; i < tokens.length; i++) expect(tokens[i]! > tokens[i - 1]!).toBe(true);
      });

      it('keeps keys independent', async () => {
        await c.lockAcquire({ key: key('x'), holder: holder('a'), ttlMs: 300 });
        expect((await c.lockAcquire({ key: key('y'), holder: holder('b'), ttlMs: 300 })).acquired).toBe(true);
        expect((await c.lockRelease(key('y'), 'a')).released).toBe(false);
      });
    });

    describe('semaphore', () => {
      it('admits up to the limit, then refuses with the holders, the limit and a retry-after', async () => {
        const k = key('sem');
        for (const [i, owner] of ['a', 'b', 'c'].entries()) {
          expect(await c.semaphoreAcquire({ key: k, holder: holder(owner), limit: 3, ttlMs: 300 })).toEqual({
            acquired: true,
            nesting: 1,
            holders: i + 1,
          });
        }
        const refused = await c.semaphoreAcquire({ key: k, holder: holder('d'), limit: 3, ttlMs: 300 });
        expect(refused).toMatchObject({ acquired: false, holders: 3, limit: 3 });
        if (refused.acquired) return;
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(300);
        const state = await c.semaphoreState(k, 3);
        expect(state.key).toBe(k);
        expect(state.limit).toBe(3);
        expect(state.holders.map((h) => h.holder.owner).sort()).toEqual(['a', 'b', 'c']);
        for (const h of state.holders) {
          expect(h.nesting).toBe(1);
          expect(h.ttlMs).toBeGreaterThan(0);
          expect(h.ttlMs).toBeLessThanOrEqual(300);
        }
      });

      it("returns a dead holder's slot when its lease expires, leaving the others' leases alone", async () => {
        await atGrowingScale(async (scale) => {
          const k = key(`sem-${scale}`);
          const a = await timed(c, () =>
            c.semaphoreAcquire({ key: k, holder: holder('a'), limit: 2, ttlMs: 300 * scale }),
          );
          await harness.advance(100 * scale);
          await c.semaphoreAcquire({ key: k, holder: holder('b'), limit: 2, ttlMs: 10_000 * scale });
          const refused = await timed(c, () =>
            c.semaphoreAcquire({ key: k, holder: holder('c'), limit: 2, ttlMs: 10_000 }),
          );
          if (refused.after >= a.before + 300 * scale) return false; // a's lease may have lapsed already
          expect(refused.value.acquired).toBe(false);
          if (refused.value.acquired) return true;
          // The earliest lease to expire is a's (≈200 ms left), not b's (≈10 s left: long, so a loaded machine cannot lapse it too).
          expect(refused.value.retryAfterMs).toBeGreaterThan(0);
          expect(refused.value.retryAfterMs).toBeLessThanOrEqual(a.after + 300 * scale - refused.before);
          await harness.advance(250 * scale); // a never released: its lease lapses
          expect(await c.semaphoreAcquire({ key: k, holder: holder('c'), limit: 2, ttlMs: 10_000 })).toMatchObject({
            acquired: true,
            holders: 2,
          });
          expect((await c.semaphoreState(k, 2)).holders.map((h) => h.holder.owner).sort()).toEqual(['b', 'c']);
          expect(await c.semaphoreExtend(k, 'a', 1000)).toBe(false);
          expect((await c.semaphoreRelease(k, 'a')).released).toBe(false);
          return true;
        });
      });

      it('keeps a lease alive through extend, owner-checked', async () => {
        await atGrowingScale(async (scale) => {
          const k = key(`sem-${scale}`);
          const acquired = await timed(c, () =>
            c.semaphoreAcquire({ key: k, holder: holder('a'), limit: 1, ttlMs: 250 * scale }),
          );
          expect(acquired.value.acquired).toBe(true);
          expect(await c.semaphoreExtend(k, 'b', 1000 * scale)).toBe(false);
          await harness.advance(150 * scale);
          const extended = await timed(c, () => c.semaphoreExtend(k, 'a', 400 * scale));
          await harness.advance(150 * scale); // past the original lease
          const intruder = await timed(c, () =>
            c.semaphoreAcquire({ key: k, holder: holder('b'), limit: 1, ttlMs: 300 }),
          );
          const state = await timed(c, () => c.semaphoreState(k));
          const inTime =
            extended.after < acquired.before + 250 * scale &&
            intruder.before >= acquired.after + 250 * scale &&
            state.after < extended.before + 400 * scale;
          if (!inTime) return false;
          expect(extended.value).toBe(true);
          expect(intruder.value.acquired).toBe(false);
          expect(state.value.holders.map((h) => h.holder.owner)).toEqual(['a']);
          return true;
        });
      });

      it('is re-entrant per owner: one slot, counted nesting, freed at zero', async () => {
        const k = key('sem');
        expect(await c.semaphoreAcquire({ key: k, holder: holder('a'), limit: 1, ttlMs: 300 })).toEqual({
          acquired: true,
          nesting: 1,
          holders: 1,
        });
        expect(await c.semaphoreAcquire({ key: k, holder: holder('a'), limit: 1, ttlMs: 300 })).toEqual({
          acquired: true,
          nesting: 2,
          holders: 1,
        });
        expect((await c.semaphoreState(k, 1)).holders).toMatchObject([{ holder: { owner: 'a' }, nesting: 2 }]);
        expect(await c.semaphoreRelease(k, 'a')).toEqual({ released: true, nesting: 1 });
        expect((await c.semaphoreAcquire({ key: k, holder: holder('b'), limit: 1, ttlMs: 300 })).acquired).toBe(false);
        expect(await c.semaphoreRelease(k, 'a')).toEqual({ released: true, nesting: 0 });
        expect((await c.semaphoreAcquire({ key: k, holder: holder('b'), limit: 1, ttlMs: 300 })).acquired).toBe(true);
      });

      it('refreshes the lease on re-entry', async () => {
        await atGrowingScale(async (scale) => {
          const k = key(`sem-${scale}`);
          const take = (owner: string, ttlMs: number) =>
            timed(c, () => c.semaphoreAcquire({ key: k, holder: holder(owner), limit: 1, ttlMs }));
          const first = await take('a', 300 * scale);
          await harness.advance(150 * scale);
          const reentry = await take('a', 400 * scale);
          await harness.advance(200 * scale); // past the first lease, inside the re-entry's
          const state = await timed(c, () => c.semaphoreState(k, 1));
          const intruder = await take('b', 300);
          const inTime =
            reentry.after < first.before + 300 * scale &&
            state.before >= first.after + 300 * scale &&
            intruder.after < reentry.before + 400 * scale;
          if (!inTime) return false;
          expect([first.value.acquired, reentry.value.acquired]).toEqual([true, true]);
          expect(state.value.holders).toMatchObject([{ holder: { owner: 'a' }, nesting: 2 }]);
          expect(intruder.value.acquired).toBe(false);
          return true;
        });
      });

      it('never inflates capacity: releases by non-holders and repeated releases free nothing', async () => {
        const k = key('sem');
        await c.semaphoreAcquire({ key: k, holder: holder('a'), limit: 1, ttlMs: 300 });
        expect(await c.semaphoreRelease(k, 'b')).toMatchObject({ released: false });
        expect(await c.semaphoreRelease(k, 'b')).toMatchObject({ released: false });
        expect((await c.semaphoreAcquire({ key: k, holder: holder('c'), limit: 1, ttlMs: 300 })).acquired).toBe(false);
        expect(await c.semaphoreRelease(k, 'a')).toEqual({ released: true, nesting: 0 });
        expect(await c.semaphoreRelease(k, 'a')).toMatchObject({ released: false });
        expect((await c.semaphoreAcquire({ key: k, holder: holder('b'), limit: 1, ttlMs: 300 })).acquired).toBe(true);
        expect((await c.semaphoreAcquire({ key: k, holder: holder('c'), limit: 1, ttlMs: 300 })).acquired).toBe(false);
        expect((await c.semaphoreState(k, 1)).holders).toHaveLength(1);
      });

      it('applies a changed limit at once', async () => {
        const k = key('sem');
        await c.semaphoreAcquire({ key: k, holder: holder('a'), limit: 1, ttlMs: 300 });
        expect(await c.semaphoreAcquire({ key: k, holder: holder('b'), limit: 1, ttlMs: 300 })).toMatchObject({
          acquired: false,
          limit: 1,
        });
        expect(await c.semaphoreAcquire({ key: k, holder: holder('b'), limit: 2, ttlMs: 300 })).toMatchObject({
          acquired: true,
          holders: 2,
        });
        expect(await c.semaphoreAcquire({ key: k, holder: holder('c'), limit: 2, ttlMs: 300 })).toMatchObject({
          acquired: false,
          holders: 2,
          limit: 2,
        });
        // Lowered below the current holders: nobody is evicted, nobody new gets in.
        expect(await c.semaphoreAcquire({ key: k, holder: holder('c'), limit: 1, ttlMs: 300 })).toMatchObject({
          acquired: false,
          holders: 2,
          limit: 1,
        });
        await c.semaphoreRelease(k, 'a');
        expect((await c.semaphoreAcquire({ key: k, holder: holder('c'), limit: 1, ttlMs: 300 })).acquired).toBe(false);
        expect((await c.semaphoreAcquire({ key: k, holder: holder('c'), limit: 2, ttlMs: 300 })).acquired).toBe(true);
      });

      it('reports an empty semaphore with the given limit', async () => {
        expect(await c.semaphoreState(key('none'), 4)).toEqual({ key: key('none'), limit: 4, holders: [] });
      });
    });

    describe('rate limit', () => {
      const window = (suffix: string, limit: number, periodMs: number): RateWindow => ({
        key: key(suffix),
        limit,
        periodMs,
      });

      it('admits N starts in any sliding window and refuses the next with the window, the count and a retry-after', async () => {
        await atGrowingScale(async (scale) => {
          const periodMs = 300 * scale;
          const w = window(`rate-${scale}`, 3, periodMs);
          const take = (id: string) => c.rateTake({ windows: [w], id });
          // A start counts in [t, t + periodMs) from its server time t, taken in [before, after].
          const r1 = await timed(c, () => take('r1'));
          expect(r1.value).toEqual({ allowed: true });
          await harness.advance(periodMs / 2);
          const r23 = await timed(c, async () => [await take('r2'), await take('r3')]);
          expect(r23.value).toEqual([{ allowed: true }, { allowed: true }]);
          const refused = await timed(c, () => take('r4'));
          const counted = await timed(c, () => c.rateState(w.key, w.periodMs));
          if (counted.after >= r1.before + periodMs) return false; // r1 may have left already
          expect(refused.value).toMatchObject({ allowed: false, window: w, count: 3 });
          expect(counted.value.count).toBe(3);
          if (refused.value.allowed) return true;
          // r1 leaves the window periodMs after it was taken.
          const retryAfterMs = refused.value.retryAfterMs;
          expect(retryAfterMs).toBeGreaterThan(0);
          expect(retryAfterMs).toBeGreaterThanOrEqual(r1.before + periodMs - refused.after);
          expect(retryAfterMs).toBeLessThanOrEqual(r1.after + periodMs - refused.before);
          await harness.advance(retryAfterMs + 10);
          // r1 has left; r2 and r3 are still inside the window (a fixed window would admit 3 here).
          const r4 = await timed(c, () => take('r4'));
          const r5 = await timed(c, () => take('r5'));
          if (r5.after >= r23.before + periodMs) return false; // r2 or r3 may have left too
          expect(r4.value).toEqual({ allowed: true });
          expect(r5.value).toMatchObject({ allowed: false, count: 3 });
          if (r5.value.allowed) return true;
          expect(r5.value.retryAfterMs).toBeLessThanOrEqual(r23.after + periodMs - r5.before);
          return true;
        });
      });

      it('a resend of a charged id is not charged again (charged: false); a refund takes the start back out of its windows', async () => {
        const w = window('refund', 2, 60_000);
        const other = window('refund-other', 5, 60_000);
        expect(await c.rateTake({ windows: [w], id: 'r1' })).toEqual({ allowed: true });
        expect(await c.rateTake({ windows: [w], id: 'r1' })).toEqual({ allowed: true, charged: false });
        expect(await c.rateTake({ windows: [other], id: 'r1' })).toEqual({ allowed: true });
        await c.rateRefund({ windows: [w, other], id: 'r1' });
        await c.rateRefund({ windows: [w], id: 'never-charged' });
        expect((await c.rateState(w.key, w.periodMs)).count).toBe(0);
        expect((await c.rateState(other.key, other.periodMs)).count).toBe(0);
        expect(await c.rateTake({ windows: [w], id: 'r1' })).toEqual({ allowed: true });
      });

      it('never counts a refused start', async () => {
        const w = window('rate', 1, 300);
        await c.rateTake({ windows: [w], id: 'r1' });
        for (const id of ['r2', 'r3', 'r4']) expect((await c.rateTake({ windows: [w], id })).allowed).toBe(false);
        expect((await c.rateState(w.key, w.periodMs)).count).toBe(1);
        await harness.advance(350);
        expect((await c.rateTake({ windows: [w], id: 'r5' })).allowed).toBe(true);
      });

      it('checks every window and charges all or none', async () => {
        const short = window('second', 2, 300);
        const long = window('minute', 5, 5000);
        expect((await c.rateTake({ windows: [short, long], id: 'r1' })).allowed).toBe(true);
        expect((await c.rateTake({ windows: [short, long], id: 'r2' })).allowed).toBe(true);
        expect(await c.rateTake({ windows: [short, long], id: 'r3' })).toMatchObject({
          allowed: false,
          window: short,
          count: 2,
        });
        expect((await c.rateState(long.key, long.periodMs)).count).toBe(2);
        expect((await c.rateState(short.key, short.periodMs)).count).toBe(2);

        // The full window is the second one: the first is not charged either.
        const roomy = window('roomy', 10, 5000);
        const tight = window('tight', 1, 5000);
        expect((await c.rateTake({ windows: [roomy, tight], id: 'r1' })).allowed).toBe(true);
        expect(await c.rateTake({ windows: [roomy, tight], id: 'r2' })).toMatchObject({
          allowed: false,
          window: tight,
          count: 1,
        });
        expect((await c.rateState(roomy.key, roomy.periodMs)).count).toBe(1);
      });

      it('shares a window key across different requests (a named limit)', async () => {
        const shared = window('shared', 2, 5000);
        expect((await c.rateTake({ windows: [shared, window('own-a', 5, 5000)], id: 'a1' })).allowed).toBe(true);
        expect((await c.rateTake({ windows: [shared, window('own-b', 5, 5000)], id: 'b1' })).allowed).toBe(true);
        expect(await c.rateTake({ windows: [window('own-c', 5, 5000), shared], id: 'c1' })).toMatchObject({
          allowed: false,
          window: shared,
          count: 2,
        });
        expect((await c.rateState(key('own-c'), 5000)).count).toBe(0);
      });

      it('charges a start once however often it is taken with the same id', async () => {
        const w = window('rate', 1, 5000);
        expect(await c.rateTake({ windows: [w], id: 'same' })).toEqual({ allowed: true });
        expect(await c.rateTake({ windows: [w], id: 'same' })).toEqual({ allowed: true, charged: false });
        expect((await c.rateState(w.key, w.periodMs)).count).toBe(1);
        expect((await c.rateTake({ windows: [w], id: 'other' })).allowed).toBe(false);
      });

      it('reports the count and the time until the oldest start leaves', async () => {
        await atGrowingScale(async (scale) => {
          const w = window(`rate-${scale}`, 5, 400 * scale);
          expect(await c.rateState(w.key, w.periodMs)).toEqual({ key: w.key, count: 0, resetInMs: 0 });
          const r1 = await timed(c, () => c.rateTake({ windows: [w], id: 'r1' }));
          await harness.advance(150 * scale);
          const r2 = await timed(c, () => c.rateTake({ windows: [w], id: 'r2' }));
          const state = await timed(c, () => c.rateState(w.key, w.periodMs));
          await harness.advance(300 * scale); // past r1's window, inside r2's
          const later = await timed(c, () => c.rateState(w.key, w.periodMs));
          const inTime = state.after < r1.before + w.periodMs && later.after < r2.before + w.periodMs;
          if (!inTime) return false;
          expect(state.value.count).toBe(2);
          expect(state.value.resetInMs).toBeGreaterThan(0);
          expect(state.value.resetInMs).toBeLessThanOrEqual(r1.after + w.periodMs - state.before);
          expect(later.value).toMatchObject({ count: 1 });
          return true;
        });
      });
    });

    describe('period', () => {
      it('marks a bucket once and reports the marker', async () => {
        const k = key('period');
        expect(await c.periodIsMarked(k, 'b1')).toBe(false);
        expect(await c.periodState(k, 'b1')).toBeUndefined();
        expect(await c.periodMark({ key: k, bucket: 'b1', ttlMs: 300 })).toBe(true);
        expect(await c.periodIsMarked(k, 'b1')).toBe(true);
        expect(await c.periodMark({ key: k, bucket: 'b1', ttlMs: 300 })).toBe(false);
        const ttl = await c.periodState(k, 'b1');
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(300);
        expect(await c.periodIsMarked(k, 'b2')).toBe(false);
        expect(await c.periodIsMarked(key('other'), 'b1')).toBe(false);
        expect(await c.periodMark({ key: k, bucket: 'b2', ttlMs: 300 })).toBe(true);
      });

      it('keeps the first mark’s note and forgets it with the marker (when the backend reads notes back)', async (context) => {
        if (c.periodNote === undefined) return context.skip();
        const k = key('period');
        expect(await c.periodNote?.(k, 'b1')).toBeUndefined();
        await c.periodMark({ key: k, bucket: 'b0', ttlMs: 300 });
        expect(await c.periodNote?.(k, 'b0')).toBeUndefined(); // set without a note
        expect(await c.periodMark({ key: k, bucket: 'b1', ttlMs: 150, note: 'its parent x-1 was cancelled' })).toBe(
          true,
        );
        expect(await c.periodMark({ key: k, bucket: 'b1', ttlMs: 150, note: 'a later reason' })).toBe(false);
        expect(await c.periodNote(k, 'b1')).toBe('its parent x-1 was cancelled');
        await harness.advance(200);
        expect(await c.periodNote(k, 'b1')).toBeUndefined();
        expect(await c.periodMark({ key: k, bucket: 'b1', ttlMs: 150 })).toBe(true);
        expect(await c.periodNote(k, 'b1')).toBeUndefined();
      });

      it('forgets a marker when its TTL lapses', async () => {
        const k = key('period');
        await c.periodMark({ key: k, bucket: 'b1', ttlMs: 150 });
        await harness.advance(200);
        expect(await c.periodIsMarked(k, 'b1')).toBe(false);
        expect(await c.periodState(k, 'b1')).toBeUndefined();
        expect(await c.periodMark({ key: k, bucket: 'b1', ttlMs: 150 })).toBe(true);
      });
    });

    describe('ordered lock', () => {
      const POISON = 60_000;
      const enter = (ticket: OrderedTicket, options: { strict?: boolean; poisonMs?: number } = {}) =>
        c.orderedEnter({
          ...ticket,
          poisonMs: options.poisonMs ?? POISON,
          strict: options.strict ?? false,
          holder: holder(`run-${ticket.nonce}`),
        });
      const complete = (ticket: OrderedTicket, options: { failed?: boolean; strict?: boolean } = {}) =>
        c.orderedComplete({ ...ticket, failed: options.failed ?? false, strict: options.strict ?? false });
      const tickets = async (k: string, n: number): Promise<OrderedTicket[]> => {
        const out: OrderedTicket[] = [];
        for (let i = 0; i < n; i++) out.push(await c.orderedTicket(k));
        return out;
      };

      it('reports a fresh key as drained with zero counters', async () => {
        const k = key('ord');
        const state = await c.orderedState(k);
        expect(state).toMatchObject({
          key: k,
          issued: 0,
          lastCompleted: 0,
          inFlight: undefined,
          firstFailed: undefined,
          drained: true,
        });
      });

      it('hands out consecutive positions of one epoch', async () => {
        const k = key('ord');
        const [t1, t2, t3] = await tickets(k, 3);
        expect([t1?.nonce, t2?.nonce, t3?.nonce]).toEqual([1, 2, 3]);
        expect(new Set([t1?.epoch, t2?.epoch, t3?.epoch]).size).toBe(1);
        expect(t1?.key).toBe(k);
        expect(await c.orderedState(k)).toMatchObject({
          epoch: t1?.epoch,
          issued: 3,
          lastCompleted: 0,
          inFlight: undefined,
          drained: false,
        });
      });

      it('lets positions in strictly in order and drains when the last one completes', async () => {
        const k = key('ord');
        const [t1, t2, t3] = (await tickets(k, 3)) as [OrderedTicket, OrderedTicket, OrderedTicket];
        expect(await enter(t2)).toMatchObject({ outcome: 'wait', head: 1 });
        expect(await enter(t3)).toMatchObject({ outcome: 'wait', head: 1 });
        expect(await enter(t1)).toEqual({ outcome: 'entered' });
        expect(await c.orderedState(k)).toMatchObject({ inFlight: 1, lastCompleted: 0 });
        expect(await enter(t2)).toMatchObject({ outcome: 'wait', head: 1 });
        expect(await complete(t1)).toMatchObject({ lastCompleted: 1, inFlight: undefined, issued: 3, drained: false });
        expect(await enter(t3)).toMatchObject({ outcome: 'wait', head: 2 });
        expect(await enter(t2)).toEqual({ outcome: 'entered' });
        expect(await complete(t2)).toMatchObject({ lastCompleted: 2 });
        expect(await enter(t3)).toEqual({ outcome: 'entered' });
        const drained = await complete(t3);
        expect(drained).toMatchObject({ issued: 0, lastCompleted: 0, inFlight: undefined, drained: true });
        expect(drained.epoch).not.toBe(t1.epoch);
        const next = await c.orderedTicket(k);
        expect(next).toEqual({ key: k, nonce: 1, epoch: drained.epoch });
      });

      it('advances for the head idempotently; a completed position is passed', async () => {
        const k = key('ord');
        const [t1, t2] = (await tickets(k, 3)) as [OrderedTicket, OrderedTicket, OrderedTicket];
        await enter(t1);
        expect(await complete(t1)).toMatchObject({ lastCompleted: 1, inFlight: undefined });
        expect(await complete(t1)).toMatchObject({ lastCompleted: 1, issued: 3 });
        expect(await enter(t1)).toEqual({ outcome: 'passed' });
        expect(await c.orderedHeartbeat(t1)).toBe(false);
        expect(await enter(t2)).toEqual({ outcome: 'entered' });
        expect(await c.orderedState(k)).toMatchObject({ lastCompleted: 1, inFlight: 2, issued: 3 });
        expect(await enter(t2)).toEqual({ outcome: 'entered' }); // a redelivered turn re-enters
        expect(await c.orderedHeartbeat(t2)).toBe(true);
      });

      it('remembers a completion out of turn and passes over it when the head gets there', async () => {
        const k = key('ord');
        const [t1, t2, t3] = (await tickets(k, 3)) as [OrderedTicket, OrderedTicket, OrderedTicket];
        await enter(t1);
        expect(await complete(t3)).toMatchObject({ lastCompleted: 0, inFlight: 1 });
        expect(await complete(t1)).toMatchObject({ lastCompleted: 1 });
        expect(await enter(t2)).toEqual({ outcome: 'entered' });
        expect(await complete(t2)).toMatchObject({ drained: true, issued: 0, lastCompleted: 0 });
      });

      it('refuses to enter a position never issued in the epoch', async () => {
        const k = key('ord');
        const [t1] = (await tickets(k, 1)) as [OrderedTicket];
        await expect(enter({ ...t1, nonce: 5 })).rejects.toThrow();
        expect(await c.orderedState(k)).toMatchObject({ issued: 1, lastCompleted: 0, inFlight: undefined });
      });

      it('makes tickets of a drained batch stale', async () => {
        const k = key('ord');
        const [t1] = (await tickets(k, 1)) as [OrderedTicket];
        await enter(t1);
        const drained = await complete(t1);
        expect(drained.drained).toBe(true);
        expect(await enter(t1)).toEqual({ outcome: 'stale', epoch: drained.epoch });
        expect(await c.orderedHeartbeat(t1)).toBe(false);
        // The old ticket's completion does not touch the new batch.
        const [n1, n2] = (await tickets(k, 2)) as [OrderedTicket, OrderedTicket];
        expect(await complete(t1)).toMatchObject({ issued: 2, lastCompleted: 0, epoch: n1.epoch });
        expect(await enter(n2)).toMatchObject({ outcome: 'wait', head: 1 });
        expect(await enter(n1)).toEqual({ outcome: 'entered' });
      });

      it('makes outstanding tickets stale after a reset and restarts the counters', async () => {
        const k = key('ord');
        const [t1, t2] = (await tickets(k, 2)) as [OrderedTicket, OrderedTicket];
        await enter(t1);
        const reset = await c.orderedReset(k);
        expect(reset).toMatchObject({
          key: k,
          issued: 0,
          lastCompleted: 0,
          inFlight: undefined,
          firstFailed: undefined,
          drained: true,
        });
        expect(reset.epoch).not.toBe(t1.epoch);
        expect(await enter(t2)).toEqual({ outcome: 'stale', epoch: reset.epoch });
        expect(await c.orderedHeartbeat(t1)).toBe(false);
        expect(await complete(t1)).toMatchObject({ lastCompleted: 0, issued: 0, epoch: reset.epoch });
        const fresh = await c.orderedTicket(k);
        expect(fresh).toEqual({ key: k, nonce: 1, epoch: reset.epoch });
        expect(await enter(fresh)).toEqual({ outcome: 'entered' });
      });

      it('in strict mode halts the rest of the chain after a failure, until the batch drains', async () => {
        const k = key('ord');
        const [t1, t2, t3] = (await tickets(k, 3)) as [OrderedTicket, OrderedTicket, OrderedTicket];
        expect(await enter(t1, { strict: true })).toEqual({ outcome: 'entered' });
        expect(await complete(t1, { failed: true, strict: true })).toMatchObject({ lastCompleted: 1, firstFailed: 1 });
        expect(await enter(t2, { strict: true })).toEqual({ outcome: 'chain_failed', firstFailed: 1 });
        expect(await complete(t2, { strict: true })).toMatchObject({ lastCompleted: 2, firstFailed: 1 });
        expect(await c.orderedState(k)).toMatchObject({ firstFailed: 1 });
        expect(await enter(t3, { strict: true })).toEqual({ outcome: 'chain_failed', firstFailed: 1 });
        const drained = await complete(t3, { strict: true });
        expect(drained).toMatchObject({ drained: true, firstFailed: undefined, issued: 0 });
        const next = await c.orderedTicket(k);
        expect(await enter(next, { strict: true })).toEqual({ outcome: 'entered' });
      });

      it('drains a strict chain whose halted positions complete out of turn', async () => {
        const k = key('ord');
        const [t1, t2, t3] = (await tickets(k, 3)) as [OrderedTicket, OrderedTicket, OrderedTicket];
        await enter(t1, { strict: true });
        await complete(t1, { failed: true, strict: true });
        expect(await enter(t3, { strict: true })).toEqual({ outcome: 'chain_failed', firstFailed: 1 });
        expect(await complete(t3, { strict: true })).toMatchObject({ lastCompleted: 1, firstFailed: 1 });
        expect(await enter(t2, { strict: true })).toEqual({ outcome: 'chain_failed', firstFailed: 1 });
        expect(await complete(t2, { strict: true })).toMatchObject({ drained: true, firstFailed: undefined });
      });

      it('records the lowest strict failure only', async () => {
        const k = key('ord');
        const [t1, t2] = (await tickets(k, 3)) as [OrderedTicket, OrderedTicket, OrderedTicket];
        await enter(t1, { strict: true });
        expect(await complete(t2, { failed: true, strict: true })).toMatchObject({ firstFailed: 2, lastCompleted: 0 });
        expect(await complete(t1, { failed: true, strict: true })).toMatchObject({ firstFailed: 1 });
        expect(await complete(t1, { failed: true, strict: true })).toMatchObject({ firstFailed: 1 });
      });

      it('does not poison the chain outside strict mode', async () => {
        const k = key('ord');
        const [t1, t2] = (await tickets(k, 2)) as [OrderedTicket, OrderedTicket];
        await enter(t1);
        expect(await complete(t1, { failed: true })).toMatchObject({ lastCompleted: 1, firstFailed: undefined });
        expect(await enter(t2)).toEqual({ outcome: 'entered' });
      });

      it('passes over a dead head that entered and stopped heartbeating (poison pill)', async () => {
        const k = key('ord');
        const [t1, t2, t3] = (await tickets(k, 3)) as [OrderedTicket, OrderedTicket, OrderedTicket];
        expect(await enter(t1, { poisonMs: 200 })).toEqual({ outcome: 'entered' });
        expect(await enter(t2, { poisonMs: 200 })).toMatchObject({ outcome: 'wait', head: 1 });
        await harness.advance(250);
        expect(await enter(t2, { poisonMs: 200 })).toEqual({ outcome: 'entered' });
        expect(await c.orderedState(k)).toMatchObject({ lastCompleted: 1, inFlight: 2 });
        expect(await c.orderedHeartbeat(t1)).toBe(false);
        expect(await enter(t1, { poisonMs: 200 })).toEqual({ outcome: 'passed' });
        void t3;
      });

      it('tells a waiter when the head would be passed over: the poison time since its last sign of life', async () => {
        await atGrowingScale(async (scale) => {
          const k = key(`ord-${scale}`);
          const poisonMs = 300 * scale;
          const [t1, t2] = (await tickets(k, 2)) as [OrderedTicket, OrderedTicket];
          const waitOf = (entered: Timed<unknown>) => (entered.value as { poisonedInMs: number }).poisonedInMs;
          const head = await timed(c, () => enter(t1, { poisonMs }));
          const first = await timed(c, () => enter(t2, { poisonMs }));
          await harness.advance(150 * scale);
          const later = await timed(c, () => enter(t2, { poisonMs }));
          const beat = await timed(c, () => c.orderedHeartbeat(t1)); // a sign of life moves it back
          const again = await timed(c, () => enter(t2, { poisonMs }));
          // Each bound is the poison time from the head's last sign of life, read around both ends (±1 ms of rounding).
          const inTime = beat.after < head.before + poisonMs && again.after - beat.before < later.before - head.after;
          if (!inTime) return false;
          expect(head.value).toEqual({ outcome: 'entered' });
          expect(first.value).toMatchObject({ outcome: 'wait', head: 1 });
          expect(waitOf(first)).toBeGreaterThanOrEqual(head.before + poisonMs - first.after - 1);
          expect(waitOf(first)).toBeLessThanOrEqual(head.after + poisonMs - first.before + 1);
          expect(waitOf(later)).toBeLessThanOrEqual(head.after + poisonMs - later.before + 1);
          expect(waitOf(later)).toBeLessThan(waitOf(first));
          expect(beat.value).toBe(true);
          expect(waitOf(again)).toBeGreaterThanOrEqual(beat.before + poisonMs - again.after - 1);
          expect(waitOf(again)).toBeGreaterThan(waitOf(later));
          return true;
        });
      });

      it('passes over a head that never arrived once the cursor has not moved for the poison time', async () => {
        const k = key('ord');
        const [, t2] = (await tickets(k, 2)) as [OrderedTicket, OrderedTicket];
        expect(await enter(t2, { poisonMs: 200 })).toMatchObject({ outcome: 'wait', head: 1 });
        await harness.advance(250);
        expect(await enter(t2, { poisonMs: 200 })).toEqual({ outcome: 'entered' });
        expect(await c.orderedState(k)).toMatchObject({ lastCompleted: 1, inFlight: 2 });
      });

      it('passes over several dead positions in one call', async () => {
        const k = key('ord');
        const [, , t3] = (await tickets(k, 3)) as [OrderedTicket, OrderedTicket, OrderedTicket];
        await harness.advance(250);
        expect(await enter(t3, { poisonMs: 200 })).toEqual({ outcome: 'entered' });
        expect(await c.orderedState(k)).toMatchObject({ lastCompleted: 2, inFlight: 3 });
      });

      it('counts a waiting position as alive when its turn comes', async () => {
        await atGrowingScale(async (scale) => {
          const k = key(`ord-${scale}`);
          const poisonMs = 400 * scale;
          const issued = await timed(c, () => tickets(k, 3));
          const [, t2, t3] = issued.value as [OrderedTicket, OrderedTicket, OrderedTicket];
          await harness.advance(200 * scale);
          const waited = await timed(c, () => enter(t2, { poisonMs }));
          await harness.advance(300 * scale); // position 1 is dead; position 2 waited 300 ms ago
          const third = await timed(c, () => enter(t3, { poisonMs }));
          const inTime =
            waited.after < issued.before + poisonMs &&
            third.before >= issued.after + poisonMs &&
            third.after < waited.before + poisonMs;
          if (!inTime) return false;
          expect(waited.value).toMatchObject({ outcome: 'wait', head: 1 });
          expect(third.value).toMatchObject({ outcome: 'wait', head: 2 });
          expect(await c.orderedState(k)).toMatchObject({ lastCompleted: 1 });
          expect(await enter(t2, { poisonMs })).toEqual({ outcome: 'entered' });
          return true;
        });
      });

      it('never passes over a slow head that keeps heartbeating', async () => {
        await atGrowingScale(async (scale) => {
          const k = key(`ord-${scale}`);
          const poisonMs = 300 * scale;
          const [t1, t2] = (await tickets(k, 2)) as [OrderedTicket, OrderedTicket];
          const entered = await timed(c, () => enter(t1, { poisonMs }));
          await harness.advance(180 * scale);
          const beat = await timed(c, () => c.orderedHeartbeat(t1));
          expect(await c.orderedHeartbeat(t2)).toBe(false); // not in flight
          await harness.advance(180 * scale); // older than the poison time since entering, not since the heartbeat
          const second = await timed(c, () => enter(t2, { poisonMs }));
          const state = await timed(c, () => c.orderedState(k));
          const inTime =
            beat.after < entered.before + poisonMs &&
            second.before >= entered.after + poisonMs &&
            state.after < beat.before + poisonMs;
          if (!inTime) return false;
          expect(entered.value).toEqual({ outcome: 'entered' });
          expect(beat.value).toBe(true);
          expect(second.value).toMatchObject({ outcome: 'wait', head: 1 });
          expect(state.value).toMatchObject({ lastCompleted: 0, inFlight: 1 });
          await complete(t1);
          expect(await enter(t2, { poisonMs })).toEqual({ outcome: 'entered' });
          return true;
        });
      });

      it('skips the head on an operator request', async () => {
        const k = key('ord');
        const [t1, t2] = (await tickets(k, 2)) as [OrderedTicket, OrderedTicket];
        await enter(t1);
        expect(await c.orderedSkip(k)).toMatchObject({ lastCompleted: 1, inFlight: undefined, drained: false });
        expect(await enter(t1)).toEqual({ outcome: 'passed' });
        expect(await c.orderedHeartbeat(t1)).toBe(false);
        expect(await enter(t2)).toEqual({ outcome: 'entered' });
        const drained = await c.orderedSkip(k);
        expect(drained).toMatchObject({ drained: true, issued: 0, lastCompleted: 0 });
        expect(await c.orderedSkip(k)).toMatchObject({
          drained: true,
          issued: 0,
          lastCompleted: 0,
          epoch: drained.epoch,
        });
      });

      it('keeps keys independent', async () => {
        const [a1] = (await tickets(key('a'), 1)) as [OrderedTicket];
        const [b1] = (await tickets(key('b'), 1)) as [OrderedTicket];
        expect(a1.nonce).toBe(1);
        expect(b1.nonce).toBe(1);
        expect(await enter(a1)).toEqual({ outcome: 'entered' });
        expect(await enter(b1)).toEqual({ outcome: 'entered' });
      });
    });

    // A fast path a backend may offer (`fastPaths.changes`): checked when offered, skipped when not.
    describe('key-change notification (fast path, when offered)', () => {
      let changes: KeyChanges;
      beforeEach((context) => {
        const offered = c.fastPaths?.changes;
        if (offered === undefined) return context.skip();
        changes = offered;
      });

      it('resolves promptly when the lock is released', async () => {
        const k = key('lock');
        await c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 60_000 });
        const wait = changes.waitForChange('lock', k, 20_000);
        const state = track(wait);
        await listening();
        expect(state.settled).toBe(false);
        await c.lockRelease(k, 'a');
        expect(await within(wait, 5_000)).toBeUndefined();
      });

      it('does not resolve on a release that leaves the lock held (inner nesting)', async () => {
        const k = key('lock');
        await c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 60_000 });
        await c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 60_000 });
        const wait = changes.waitForChange('lock', k, 20_000);
        const state = track(wait);
        await listening();
        await c.lockRelease(k, 'a');
        await realPause(100);
        expect(state.settled).toBe(false);
        await c.lockRelease(k, 'a');
        expect(await within(wait, 5_000)).toBeUndefined();
      });

      it('resolves promptly when a semaphore slot is released', async () => {
        const k = key('sem');
        await c.semaphoreAcquire({ key: k, holder: holder('a'), limit: 1, ttlMs: 60_000 });
        const wait = changes.waitForChange('semaphore', k, 20_000);
        await listening();
        await c.semaphoreRelease(k, 'a');
        expect(await within(wait, 5_000)).toBeUndefined();
      });

      it('resolves promptly when the ordered cursor advances or the key is reset', async () => {
        const k = key('ord');
        const t1 = await c.orderedTicket(k);
        await c.orderedTicket(k);
        await c.orderedEnter({ ...t1, poisonMs: 60_000, strict: false, holder: holder('a') });
        const advanced = changes.waitForChange('ordered', k, 20_000);
        await listening();
        await c.orderedComplete({ ...t1, failed: false, strict: false });
        expect(await within(advanced, 5_000)).toBeUndefined();
        const reset = changes.waitForChange('ordered', k, 20_000);
        await listening();
        await c.orderedReset(k);
        expect(await within(reset, 5_000)).toBeUndefined();
      });

      it('ignores changes of other keys and kinds, and resolves at its timeout', async () => {
        const k = key('lock');
        await c.lockAcquire({ key: k, holder: holder('a'), ttlMs: 60_000 });
        await c.lockAcquire({ key: key('other'), holder: holder('a'), ttlMs: 60_000 });
        await c.semaphoreAcquire({ key: k, holder: holder('a'), limit: 1, ttlMs: 60_000 });
        const wait = changes.waitForChange('lock', k, 300);
        const state = track(wait);
        await listening();
        await c.lockRelease(key('other'), 'a');
        await c.semaphoreRelease(k, 'a');
        await realPause(50);
        expect(state.settled).toBe(false);
        await harness.advance(350);
        expect(await within(wait, 5_000)).toBeUndefined();
        expect(await c.lockState(k)).toMatchObject({ holder: { owner: 'a' } });
      });

      it('wakes every waiter on close', async () => {
        const wait = changes.waitForChange('lock', key('lock'), 20_000);
        await realPause(50);
        await c.close();
        expect(await within(wait, 5_000)).toBeUndefined();
      });

      it('resolves when its signal aborts, and at once for an aborted signal', async () => {
        const k = key('lock');
        const controller = new AbortController();
        const wait = changes.waitForChange('lock', k, 20_000, controller.signal);
        const state = track(wait);
        await realPause(50);
        expect(state.settled).toBe(false);
        controller.abort();
        expect(await within(wait, 5_000)).toBeUndefined();
        expect(await within(changes.waitForChange('lock', k, 20_000, controller.signal), 5_000)).toBeUndefined();
      });
    });
  });
}
