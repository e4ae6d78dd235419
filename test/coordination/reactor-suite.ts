/**
 * Reactor-level coordination on the synchronous (in-process) path, restating the reference
 * acceptance scenarios 1, 3, 4, 5, 6, 7, 8 and 9. Runs against every backend.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { ContentionError, RateLimitedError, reactor, type Coordinator } from '../../src/index.js';
import type { EngineRig as Backend } from '../support/backend-matrix.js';

const OTHER = { owner: 'someone-else' };

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

export function describeReactorCoordination(makeBackend: () => Promise<Backend>): void {
  let b: Backend;
  beforeAll(async () => {
    b = await makeBackend();
  });
  afterAll(async () => b.close());

  describe('1. lock, in-process contention', () => {
    test('a key held by another owner makes the run wait, then fail naming reactor, primitive and key; nothing runs, nothing persists as running, nothing is held', async () => {
      const key = b.key('user');
      await b.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
      let ran = 0;
      const r = reactor('simple-lock')
        .input({ id: z.string() })
        .withLock({ key: () => key, wait: 300 })
        .step('s', { run: () => ++ran })
        .build();
      const { engine, events } = b.engine();
      const result = await engine.run(r, { id: '1' });
      expect(result.status).toBe('failed');
      if (result.status !== 'failed') return;
      expect(result.error).toBeInstanceOf(ContentionError);
      expect(result.error.message).toContain('reactor "simple-lock"');
      expect(result.error.message).toContain(`lock "${key}"`);
      expect(result.failedStep).toBeUndefined();
      expect(ran).toBe(0);
      expect((await b.store.get(result.executionId))?.status).toBe('failed');
      expect((await b.coordinator.lockState(key))?.holder.owner).toBe('someone-else');
      expect(events.map((e) => e.type)).toContain('coordination.contended');
      await b.coordinator.lockRelease(key, 'someone-else');
      const again = await engine.run(r, { id: '1' });
      expect(again.status).toBe('completed');
      expect(await b.coordinator.lockState(key)).toBeUndefined();
    });

    test('the wait ends as soon as the holder releases', async () => {
      const key = b.key('user');
      await b.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
      const r = reactor('waits')
        .withLock({ key: () => key, wait: '10s' })
        .step('s', { run: () => 1 })
        .build();
      const { engine } = b.engine();
      const pending = engine.run(r, {});
      await b.pass(50);
      await b.coordinator.lockRelease(key, 'someone-else');
      expect((await pending).status).toBe('completed');
    });
  });

  describe('3. re-entrant lock across compose', () => {
    test('a parent and its composed child locking the same key complete; an external owner blocks it', async () => {
      const key = b.key('acct');
      const child = reactor('child')
        .withLock({ key: () => key })
        .step('inner', { run: async () => (await b.coordinator.lockState(key))?.nesting })
        .returns('inner');
      const parent = reactor('parent')
        .withLock({ key: () => key, wait: 200 })
        .compose('c', child)
        .returns('c');
      const { engine } = b.engine();
      const result = await engine.run(parent, {});
      expect(result.status === 'completed' && result.value).toBe(2);
      expect(await b.coordinator.lockState(key)).toBeUndefined();
      await b.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
      expect((await engine.run(parent, {})).status).toBe('failed');
      await b.coordinator.lockRelease(key, 'someone-else');
    });
  });

  describe('4. auto-extend', () => {
    test('a lock outlives its TTL while held, and the extender never refreshes the next owner', async () => {
      const key = b.key('long');
      let heldMidway: string | undefined;
      const r = reactor('long-runner')
        .withLock({ key: () => key, ttl: 600 })
        .step('work', {
          run: async () => {
            await b.pass(1_300);
            heldMidway = (await b.coordinator.lockState(key))?.holder.owner;
          },
        })
        .build();
      const { engine, events } = b.engine();
      const result = await engine.run(r, {});
      expect(result.status).toBe('completed');
      expect(heldMidway).toBe(result.executionId);
      expect(events.some((e) => e.type === 'coordination.extended')).toBe(true);
      await b.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 400 });
      await b.pass(900);
      expect(await b.coordinator.lockState(key)).toBeUndefined();
    });
  });

  describe('5. period', () => {
    const daily = (key: string, fail = false, counter = { n: 0 }) =>
      reactor('daily-report')
        .input({ user: z.number() })
        .withPeriod({ key: ({ user }) => `${key}:${user}`, every: 'day' })
        .withLock({ key: ({ user }) => `${key}:lock:${user}` })
        .step('send', { run: () => (fail ? Promise.reject(new Error('smtp down')) : ++counter.n) })
        .build();

    test('the first run marks the bucket; a second halts with reason period and runs no step', async () => {
      const key = b.key('report');
      const counter = { n: 0 };
      const { engine } = b.engine();
      expect((await engine.run(daily(key, false, counter), { user: 7 })).status).toBe('completed');
      const bucket = new Date(await b.coordinator.time()).toISOString().slice(0, 10);
      const ttl = await b.coordinator.periodState(`${key}:7`, bucket);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl!).toBeLessThanOrEqual(86_400_000 + 60_000);
      const second = await engine.run(daily(key, false, counter), { user: 7 });
      expect(second).toHaveHalted('period');
      expect(second.status === 'halted' && second.data).toEqual({ key: `${key}:7`, bucket });
      expect(counter.n).toBe(1);
    });

    test('a failed run leaves no marker', async () => {
      const key = b.key('report');
      const { engine } = b.engine();
      expect((await engine.run(daily(key, true), { user: 1 })).status).toBe('failed');
      const bucket = new Date(await b.coordinator.time()).toISOString().slice(0, 10);
      expect(await b.coordinator.periodIsMarked(`${key}:1`, bucket)).toBe(false);
    });

    test('a racer marking the bucket after we took the lock makes us halt under the lock, run nothing, and release it', async () => {
      const key = b.key('report');
      const counter = { n: 0 };
      const lockAcquire: Coordinator['lockAcquire'] = async (request) => {
        const r = await b.coordinator.lockAcquire(request);
        const bucket = new Date(await b.coordinator.time()).toISOString().slice(0, 10);
        await b.coordinator.periodMark({ key: `${key}:3`, bucket, ttlMs: 60_000 });
        return r;
      };
      const racing = new Proxy(b.coordinator, {
        get: (target, prop, receiver) => {
          if (prop === 'lockAcquire') return lockAcquire;
          const value: unknown = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const { engine } = b.engine({ coordinator: racing });
      const result = await engine.run(daily(key, false, counter), { user: 3 });
      expect(result).toHaveHalted('period');
      expect(counter.n).toBe(0);
      expect(await b.coordinator.lockState(`${key}:lock:3`)).toBeUndefined();
    });
  });

  describe('6. rate limit, several windows', () => {
    test('the third start in one second is refused naming the window; the minute window is not charged', async () => {
      const key = b.key('api');
      const r = reactor('rated')
        .withRateLimit({
          key: () => key,
          windows: [
            { limit: 2, per: '1s' },
            { limit: 10, per: '1m' },
          ],
        })
        .withLock({ key: () => `${key}:lock` })
        .step('s', { run: () => 1 })
        .build();
      const { engine } = b.engine();
      expect((await engine.run(r, {})).status).toBe('completed');
      expect((await engine.run(r, {})).status).toBe('completed');
      const third = await engine.run(r, {});
      expect(third.status).toBe('failed');
      if (third.status !== 'failed') return;
      expect(third.error).toBeInstanceOf(RateLimitedError);
      expect(third.error).toMatchObject({ code: 'rate_limited', details: { limit: 2, periodMs: 1000 } });
      expect((third.error as RateLimitedError).details.retryAfterMs).toBeGreaterThan(0);
      expect((await b.coordinator.rateState(key, 60_000)).count).toBe(2);
      expect(await b.coordinator.lockState(`${key}:lock`)).toBeUndefined();
    });

    test('an invalid input consumes no slot and takes no lock; a named limit is shared by reactors', async () => {
      const key = b.key('named');
      const { engine } = b.engine({ rateLimits: { psp: [{ limit: 1, per: '1m' }] } });
      const a = reactor('a')
        .input({ n: z.number() })
        .withRateLimit({ name: 'psp', key: () => key })
        .step('s', { run: () => 1 })
        .build();
      const c = reactor('c')
        .withRateLimit({ name: 'psp', key: () => key })
        .step('s', { run: () => 1 })
        .build();
      expect((await engine.run(a, { n: 'bad' as never })).status).toBe('failed');
      expect((await b.coordinator.rateState(`psp:${key}`, 60_000)).count).toBe(0);
      expect((await engine.run(a, { n: 1 })).status).toBe('completed');
      const refused = await engine.run(c, {});
      expect(refused.status === 'failed' && refused.error.message).toContain('allows 1 per 60000 ms');
    });

    test('a run that loses lock contention spends no rate slot', async () => {
      const key = b.key('order');
      await b.coordinator.lockAcquire({ key: `${key}:lock`, holder: OTHER, ttlMs: 30_000 });
      const r = reactor('r')
        .withRateLimit({ key: () => key, limit: 5, per: '1m' })
        .withLock({ key: () => `${key}:lock`, wait: 0 })
        .step('s', { run: () => 1 })
        .build();
      const { engine } = b.engine();
      expect((await engine.run(r, {})).status).toBe('failed');
      expect((await b.coordinator.rateState(key, 60_000)).count).toBe(0);
      await b.coordinator.lockRelease(`${key}:lock`, 'someone-else');
    });
  });

  describe('limits from the arguments, several of a kind (decision 085)', () => {
    test('a semaphore limit from the input: a free run is refused where a pro run is admitted', async () => {
      const key = b.key('tier');
      await b.coordinator.semaphoreAcquire({ key, holder: OTHER, limit: 3, ttlMs: 30_000 });
      const r = reactor('tier')
        .input({ tier: z.enum(['pro', 'free']) })
        .withSemaphore({ key: () => key, limit: ({ tier }) => (tier === 'pro' ? 3 : 1), wait: 0 })
        .step('s', { run: async () => (await b.coordinator.semaphoreState(key)).holders.length })
        .returns('s');
      const { engine } = b.engine();
      const free = await engine.run(r, { tier: 'free' });
      expect(free.status === 'failed' && free.error).toMatchObject({ code: 'contention', details: { key } });
      const pro = await engine.run(r, { tier: 'pro' });
      expect(pro.status === 'completed' && pro.value).toBe(2);
      await b.coordinator.semaphoreRelease(key, OTHER.owner);
    });

    test('two semaphores: a refusal by the second releases the first, and names the key that refused', async () => {
      const [first, second] = [b.key('a-user'), b.key('b-project')].sort();
      await b.coordinator.semaphoreAcquire({ key: second!, holder: OTHER, limit: 1, ttlMs: 30_000 });
      const r = reactor('two-semaphores')
        .withSemaphore([
          { key: () => second!, limit: 1, wait: 0 },
          { key: () => first!, limit: 2, wait: 0 },
        ])
        .step('s', { run: () => 1 })
        .build();
      const { engine } = b.engine();
      const result = await engine.run(r, {});
      expect(result.status === 'failed' && result.error).toMatchObject({
        code: 'contention',
        details: { key: second },
      });
      const coordination = result.trace.filter((e) => e.type.startsWith('coordination.'));
      expect(coordination.map((e) => [e.type, 'key' in e ? e.key : undefined])).toEqual([
        ['coordination.acquired', first],
        ['coordination.waiting', second],
        ['coordination.contended', second],
        ['coordination.released', first],
      ]);
      expect((await b.coordinator.semaphoreState(first!)).holders).toEqual([]);
      await b.coordinator.semaphoreRelease(second!, OTHER.owner);
      expect((await engine.run(r, {})).status).toBe('completed');
    });

    test('two rate limits: a refusal by the second refunds the charge of the first', async () => {
      const [first, second] = [b.key('a-user'), b.key('b-project')].sort();
      const r = reactor('two-rates')
        .input({ n: z.number() })
        .withRateLimit([
          { key: () => first!, limit: 10, per: '1m' },
          { key: () => second!, limit: ({ n }) => n, per: '1m' },
        ])
        .step('s', { run: () => 1 })
        .build();
      const { engine } = b.engine();
      expect((await engine.run(r, { n: 1 })).status).toBe('completed');
      const refused = await engine.run(r, { n: 1 });
      expect(refused.status === 'failed' && refused.error).toMatchObject({
        code: 'rate_limited',
        details: { key: second, limit: 1, periodMs: 60_000 },
      });
      expect(
        refused.trace.some((e) => e.type === 'coordination.released' && e.refunded === true && e.key === first),
      ).toBe(true);
      expect((await b.coordinator.rateState(first!, 60_000)).count).toBe(1);
      expect((await b.coordinator.rateState(second!, 60_000)).count).toBe(1);
      expect((await engine.run(r, { n: 2 })).status).toBe('completed');
      expect((await b.coordinator.rateState(first!, 60_000)).count).toBe(2);
    });

    test('a limit function that returns 0 refuses before anything is taken', async () => {
      const [first, second] = [b.key('a'), b.key('b')].sort();
      const r = reactor('zero')
        .withSemaphore([
          { key: () => first!, limit: 1 },
          { key: () => second!, limit: () => 0 },
        ])
        .withRateLimit({ key: () => first!, limit: 5, per: '1m' })
        .step('s', { run: () => 1 })
        .build();
      const { engine } = b.engine();
      const result = await engine.run(r, {});
      expect(result.status === 'failed' && result.error).toMatchObject({
        code: 'coordination_limit_invalid',
        details: { primitive: 'semaphore', key: second },
      });
      expect((await b.coordinator.semaphoreState(first!)).holders).toEqual([]);
      expect((await b.coordinator.rateState(first!, 60_000)).count).toBe(0);
    });
  });

  describe('7. ordered lock, basic', () => {
    test('runs pass in the order run() accepted them, one at a time; a drain restarts the batch', async () => {
      const key = b.key('seq');
      const order: number[] = [];
      const first = gate();
      const started = gate();
      const r = reactor('ordered')
        .input({ n: z.number() })
        .withOrderedLock({ key: () => key, wait: '10s' })
        .step('s', {
          args: ($) => ({ n: $.input('n') }),
          run: async ({ n }) => (n === 1 ? (started.open(), await first.promise) : undefined, order.push(n)),
        })
        .build();
      const { engine } = b.engine();
      const runs = [1, 2, 3].map((n) => engine.run(r, { n }));
      await started.promise;
      // Runs 2 and 3 have taken their positions (however slowly a loaded machine gets them there).
      await expect.poll(async () => (await b.coordinator.orderedState(key)).issued, { timeout: 10_000 }).toBe(3);
      await b.pass(50);
      const mid = await b.coordinator.orderedState(key);
      expect(mid).toMatchObject({ issued: 3, lastCompleted: 0, inFlight: 1, drained: false });
      expect(order).toEqual([]);
      first.open();
      const results = await Promise.all(runs);
      expect(results.map((x) => x.status)).toEqual(['completed', 'completed', 'completed']);
      expect(order).toEqual([1, 2, 3]);
      const drained = await b.coordinator.orderedState(key);
      expect(drained).toMatchObject({ issued: 0, lastCompleted: 0, drained: true });
      expect(drained.epoch).toBeGreaterThan(mid.epoch);
      expect((await b.coordinator.orderedTicket(key)).nonce).toBe(1);
    });
  });

  describe('8. ordered lock, poison pill', () => {
    test('a position that never shows up is passed over after the poison timeout', async () => {
      const key = b.key('seq');
      await b.coordinator.orderedTicket(key); // position 1: its holder died before entering
      const r = reactor('ordered')
        .withOrderedLock({ key: () => key, poisonTimeout: 300, wait: '10s' })
        .step('s', { run: () => 'ran' })
        .returns('s');
      const { engine } = b.engine();
      const result = await engine.run(r, {});
      expect(result.status === 'completed' && result.value).toBe('ran');
    });

    test('a slow holder that heartbeats is never passed over', async () => {
      const key = b.key('seq');
      const log: string[] = [];
      const r = reactor('ordered')
        .input({ name: z.string(), ms: z.number() })
        .withOrderedLock({ key: () => key, poisonTimeout: 600, wait: '10s' })
        .step('s', {
          args: ($) => ({ name: $.input('name'), ms: $.input('ms') }),
          run: async ({ name, ms }) => (log.push(`${name}:start`), await b.pass(ms), log.push(`${name}:end`)),
        })
        .build();
      const { engine } = b.engine();
      await Promise.all([engine.run(r, { name: 'slow', ms: 1_500 }), engine.run(r, { name: 'next', ms: 0 })]);
      expect(log).toEqual(['slow:start', 'slow:end', 'next:start', 'next:end']);
    });
  });

  describe('9. ordered lock, strict chain', () => {
    test('after a failure, later positions halt with ordered_lock_chain_failed without running, still advance, and the key drains', async () => {
      const key = b.key('strict');
      const ran: number[] = [];
      const started = gate();
      const proceed = gate();
      const r = reactor('strict')
        .input({ n: z.number() })
        .withOrderedLock({ key: () => key, strict: true, wait: '10s' })
        .step('s', {
          args: ($) => ({ n: $.input('n') }),
          run: async ({ n }) => {
            ran.push(n);
            if (n !== 1) return n;
            started.open();
            await proceed.promise;
            throw new Error('first fails');
          },
        })
        .build();
      const { engine } = b.engine();
      const runs = [1, 2, 3].map((n) => engine.run(r, { n }));
      await started.promise;
      // Runs 2 and 3 have taken their positions before the fourth one below.
      await expect.poll(async () => (await b.coordinator.orderedState(key)).issued, { timeout: 10_000 }).toBe(3);
      await b.pass(50);
      const holdOpen = await b.coordinator.orderedTicket(key); // a fourth position keeps the batch from draining
      proceed.open();
      const results = await Promise.all(runs);
      expect(results.map((x) => x.status)).toEqual(['failed', 'halted', 'halted']);
      expect(results[1]).toHaveHalted('ordered_lock_chain_failed');
      expect(ran).toEqual([1]);
      expect(await b.coordinator.orderedState(key)).toMatchObject({ lastCompleted: 3, firstFailed: 1, drained: false });
      await b.coordinator.orderedComplete({ ...holdOpen, failed: false, strict: true });
      expect(await b.coordinator.orderedState(key)).toMatchObject({ drained: true, firstFailed: undefined });
    });
  });

  describe('semaphore', () => {
    test('at most N runs inside at once; the others wait for a slot', async () => {
      const key = b.key('sem');
      let inside = 0;
      let max = 0;
      const r = reactor('sem')
        .withSemaphore({ key: () => key, limit: 3, wait: '20s' })
        .step('s', { run: async () => (inside++, (max = Math.max(max, inside)), await b.pass(30), inside--) })
        .build();
      const { engine } = b.engine();
      const results = await Promise.all(Array.from({ length: 8 }, () => engine.run(r, {})));
      expect(results.every((x) => x.status === 'completed')).toBe(true);
      expect(max).toBe(3);
      expect((await b.coordinator.semaphoreState(key, 3)).holders).toHaveLength(0);
    });
  });

  describe('bad input', () => {
    test('a key function that throws or returns a non-string fails the run before anything is taken', async () => {
      const key = b.key('k');
      const { engine } = b.engine();
      const throwing = reactor('r')
        .withLock({
          key: () => {
            throw new Error('no account');
          },
        })
        .withRateLimit({ key: () => key, limit: 1, per: '1m' })
        .step('s', { run: () => 1 })
        .build();
      const empty = reactor('r')
        .withLock({ key: () => '' })
        .step('s', { run: () => 1 })
        .build();
      const notString = reactor('r')
        .withLock({ key: () => 42 as never })
        .step('s', { run: () => 1 })
        .build();
      for (const [r, text] of [
        [throwing, 'the key function threw: no account'],
        [empty, 'empty string'],
        [notString, 'returned number'],
      ] as const) {
        const result = await engine.run(r, {});
        expect(result.status === 'failed' && result.error).toMatchObject({ code: 'coordination_key_invalid' });
        expect(result.status === 'failed' && result.error.message).toContain(text);
      }
      expect((await b.coordinator.rateState(key, 60_000)).count).toBe(0);
    });

    test('an unknown named rate limit fails the run clearly before anything is taken', async () => {
      const key = b.key('k');
      const r = reactor('r')
        .withLock({ key: () => key })
        .withRateLimit({ name: 'nope' })
        .step('s', { run: () => 1 })
        .build();
      const result = await b.engine().engine.run(r, {});
      expect(result.status === 'failed' && result.error).toMatchObject({ code: 'rate_limit_unknown' });
      expect(await b.coordinator.lockState(key)).toBeUndefined();
    });
  });
}
