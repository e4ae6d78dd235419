/**
 * Limits computed from arguments, and several semaphores / rate limits of one declaration set,
 * on the memory backend with the manual clock (no test here sleeps): per-admission limits,
 * all-or-nothing admission in key order with release / refund on refusal, bad limit values,
 * and a parked execution woken by the release of the key that refused it.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import type { RateLimitedError } from '../../src/index.js';
import {
  createEngine,
  MemoryCoordinator,
  MemoryStore,
  CoordinationKeyError,
  CoordinationLimitError,
  ContentionError,
  DefinitionError,
  reactor,
  type ReactorEvent,
} from '../../src/index.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { createWorker } from '../../src/queue/worker.js';
import { gate } from '../background/helpers.js';

const tiered = (body: () => Promise<unknown>) =>
  reactor('tiered')
    .input({ user: z.string(), tier: z.enum(['pro', 'free']) })
    .step('work', {
      args: ($) => ({ user: $.input('user'), tier: $.input('tier') }),
      semaphore: { key: ({ user }) => `user:${user}`, limit: ({ tier }) => (tier === 'pro' ? 3 : 1), wait: 0 },
      run: body,
    })
    .build();

function coordination(trace: readonly ReactorEvent[]): string[] {
  return trace.filter((e) => e.type.startsWith('coordination.')).map((e) => `${e.type} ${'key' in e ? e.key : ''}`);
}

describe('a semaphore limit from the arguments', () => {
  test('is evaluated at every admission: 3 at a time for a pro user, 1 for a free one', async () => {
    const t = createTestEngine();
    const open = gate();
    let inside = 0;
    let most = 0;
    const r = tiered(async () => {
      most = Math.max(most, ++inside);
      await open.promise;
      inside--;
    });
    const pro = [1, 2, 3, 4].map(() => t.run(r, { user: 'ann', tier: 'pro' }));
    const free = [1, 2].map(() => t.run(r, { user: 'bob', tier: 'free' }));
    // The fourth pro run and the second free one are refused while the others hold their slots.
    const refused = [await pro[3]!, await free[1]!];
    open.open();
    const all = await Promise.all([...pro, ...free]);
    expect(all.map((x) => x.status).sort()).toEqual([
      'completed',
      'completed',
      'completed',
      'completed',
      'failed',
      'failed',
    ]);
    expect(refused.map((x) => x.status === 'failed' && x.error)).toEqual([
      expect.any(ContentionError),
      expect.any(ContentionError),
    ]);
    expect(most).toBe(4);
    const acquired = t.events.filter((e) => e.type === 'coordination.acquired' && e.primitive === 'semaphore');
    expect(acquired.map((e) => e.type === 'coordination.acquired' && [e.key, e.limit])).toEqual([
      ['user:ann', 3],
      ['user:ann', 3],
      ['user:ann', 3],
      ['user:bob', 1],
    ]);
  });

  test('a reactor-level limit is a function of the input', async () => {
    const t = createTestEngine();
    const seen: unknown[] = [];
    const r = reactor('per-tenant')
      .input({ tenant: z.string(), seats: z.number() })
      .withSemaphore({ key: ({ tenant }) => `tenant:${tenant}`, limit: ({ seats }) => seats })
      .step('s', { run: async () => (seen.push(await t.coordinator.semaphoreState('tenant:t1')), 1) })
      .build();
    expect((await t.run(r, { tenant: 't1', seats: 7 })).status).toBe('completed');
    expect(seen).toEqual([expect.objectContaining({ limit: 7 })]);
  });

  test('a limit-1 semaphore from a function counts as exclusive in the held-key registry', async () => {
    const t = createTestEngine();
    let held: string[] = [];
    const r = reactor('one')
      .input({ n: z.number() })
      .withSemaphore({ key: () => 'k', limit: ({ n }) => n })
      .step('s', { run: (_args, ctx) => void (held = [...ctx.heldKeys]) })
      .build();
    await t.run(r, { n: 1 });
    expect(held).toEqual(['semaphore:k']);
    await t.run(r, { n: 2 });
    expect(held).toEqual([]);
  });
});

describe('bad limit values at admission', () => {
  const cases: [string, (input: { n: number }) => number, RegExp][] = [
    ['0', () => 0, /returned 0/],
    ['negative', () => -2, /returned -2/],
    ['NaN', () => Number.NaN, /returned NaN/],
    ['not an integer', () => 1.5, /returned 1\.5/],
    ['a string', () => '3' as unknown as number, /returned the string "3"/],
    ['Infinity', () => Number.POSITIVE_INFINITY, /returned Infinity/],
    [
      'a throw',
      () => {
        throw new Error('no tier');
      },
      /threw: no tier/,
    ],
  ];
  test.each(cases)(
    'a limit function returning %s refuses with coordination_limit_invalid and takes nothing',
    async (_, limit, message) => {
      const t = createTestEngine();
      let ran = false;
      const r = reactor('bad')
        .input({ n: z.number() })
        .step('s', {
          args: ($) => ({ n: $.input('n') }),
          semaphore: [
            { key: () => 'first', limit: 5 },
            { key: () => 'second', limit },
          ],
          rateLimit: { key: () => 'rate', limit: 10, per: '1m' },
          run: () => void (ran = true),
        })
        .build();
      const result = await t.run(r, { n: 1 });
      expect(result.status).toBe('failed');
      const error = result.status === 'failed' ? result.error : undefined;
      expect(error).toBeInstanceOf(CoordinationLimitError);
      expect(error).toMatchObject({
        code: 'coordination_limit_invalid',
        details: { reactor: 'bad', step: 's', primitive: 'semaphore', key: 'second' },
      });
      expect(error?.message).toMatch(message);
      expect(ran).toBe(false);
      expect((await t.coordinator.semaphoreState('first')).holders).toEqual([]);
      expect((await t.coordinator.rateState('rate', 60_000)).count).toBe(0);
      expect(coordination(result.trace)).toEqual([]);
    },
  );

  test('a rate window limit function is checked the same way', async () => {
    const t = createTestEngine();
    const r = reactor('bad-rate')
      .input({ n: z.number() })
      .withRateLimit({
        key: () => 'r',
        windows: [
          { limit: 5, per: '1s' },
          { limit: ({ n }) => n, per: '1m' },
        ],
      })
      .step('s', { run: () => 1 })
      .build();
    const result = await t.run(r, { n: 0 });
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'coordination_limit_invalid',
      details: { primitive: 'rate_limit', key: 'r' },
    });
    expect((await t.coordinator.rateState('r', 1_000)).count).toBe(0);
  });

  test('definitions: an empty list, or a limit that is neither a function nor an integer >= 1, fails when built', () => {
    expect(() => reactor('x').withSemaphore([])).toThrow(DefinitionError);
    expect(() => reactor('x').withRateLimit([])).toThrow(/non-empty list/);
    expect(() => reactor('x').withSemaphore({ key: () => 'k', limit: 0 })).toThrow(/limit must be an integer >= 1/);
    expect(() =>
      reactor('x')
        .input({ n: z.number() })
        .step('s', { semaphore: [{ key: () => 'a', limit: 1 }, null as never], run: () => 1 }),
    ).toThrow(/semaphore \[1\] is not a declaration/);
  });
});

describe('several semaphores', () => {
  const twoKeys = (body: () => Promise<unknown>) =>
    reactor('two')
      .input({ user: z.string(), project: z.string() })
      .step('work', {
        args: ($) => ({ user: $.input('user'), project: $.input('project') }),
        semaphore: [
          { key: ({ user }) => `user:${user}`, limit: 1, wait: 0 },
          { key: ({ project }) => `project:${project}`, limit: 2, wait: 0 },
        ],
        run: body,
      })
      .build();

  test('are taken in the string order of their keys and released newest first', async () => {
    const t = createTestEngine();
    const result = await t.run(
      twoKeys(async () => 1),
      { user: 'ann', project: 'p' },
    );
    expect(coordination(result.trace)).toEqual([
      'coordination.acquired project:p',
      'coordination.acquired user:ann',
      'coordination.released user:ann',
      'coordination.released project:p',
    ]);
  });

  test('a refusal by a later one gives back the slot of the earlier one and names the key that refused', async () => {
    const t = createTestEngine();
    await t.coordinator.semaphoreAcquire({ key: 'user:ann', holder: { owner: 'other' }, limit: 1, ttlMs: 60_000 });
    const result = await t.run(
      twoKeys(async () => 1),
      { user: 'ann', project: 'p' },
    );
    expect(result.status === 'failed' && result.error).toMatchObject({
      code: 'contention',
      details: { primitive: 'semaphore', key: 'user:ann', step: 'work' },
    });
    expect(coordination(result.trace)).toEqual([
      'coordination.acquired project:p',
      'coordination.waiting user:ann',
      'coordination.contended user:ann',
      'coordination.released project:p',
    ]);
    expect((await t.coordinator.semaphoreState('project:p')).holders).toEqual([]);
  });

  test('two declarations computing the same key are refused before anything is taken', async () => {
    const t = createTestEngine();
    const r = reactor('same')
      .withSemaphore([
        { key: () => 'k', limit: 1 },
        { key: () => 'k', limit: 2 },
      ])
      .step('s', { run: () => 1 })
      .build();
    const result = await t.run(r, {});
    expect(result.status === 'failed' && result.error).toBeInstanceOf(CoordinationKeyError);
    expect(result.status === 'failed' && result.error.message).toMatch(
      /two semaphore declarations computed the same key "k"/,
    );
    expect((await t.coordinator.semaphoreState('k')).holders).toEqual([]);
  });

  test('a redeclaration replaces every semaphore of the reactor', () => {
    const r = reactor('re')
      .withSemaphore([
        { key: () => 'a', limit: 1 },
        { key: () => 'b', limit: 1 },
      ])
      .withSemaphore({ key: () => 'c', limit: 1 })
      .step('s', { run: () => 1 })
      .build();
    expect(r.coordination.map((s) => s.kind === 'semaphore' && s.key(undefined as never))).toEqual(['c']);
  });

  test('in a worker, the execution parks on the key that refused, holding nothing, and its release wakes it', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const coordinator = new MemoryCoordinator({ clock });
    const memory = createMemoryQueue({ clock });
    const engine = createEngine({
      store: new MemoryStore({ clock }),
      coordinator,
      clock,
      queue: memory.queue,
      waitList: memory.waitList,
      background: { workerWaitMs: 0, parkFallbackMs: 60_000 },
    });
    const open = gate();
    const holder = reactor('holder')
      .withSemaphore({ key: () => 'user:ann', limit: 1 })
      .step('s', { run: () => open.promise })
      .build();
    const r = reactor('bg')
      .input({ user: z.string() })
      .withSemaphore([
        { key: ({ user }) => `user:${user}`, limit: 1 },
        { key: () => 'project:p', limit: 1 },
      ])
      .step('s', { run: () => 'done' })
      .background('all')
      .build();
    const worker = createWorker({ engine, consumer: memory.consumer, reactors: [r], concurrency: 2 });
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 10_000; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        const counts = memory.queue.counts();
        if (counts.ready === 0 && counts.running === 0) return;
      }
    };
    const held = engine.run(holder, {});
    const queued = await engine.run(r, { user: 'ann' });
    await settle();
    const parked = await engine.result(queued.executionId);
    expect(parked?.status).toBe('parked');
    expect(parked?.trace.filter((e) => e.type === 'run.parked').map((e) => 'key' in e && e.key)).toEqual(['user:ann']);
    expect((await coordinator.semaphoreState('project:p')).holders).toEqual([]);
    open.open();
    expect((await held).status).toBe('completed');
    await settle();
    // Woken by the release, long before its 60 s fallback: the clock never moved.
    expect((await engine.result(queued.executionId))?.status).toBe('completed');
    await worker.stop();
    await memory.queue.close();
  });
});

describe('a wake that the woken execution cannot use', () => {
  test('goes on to the next waiter of the released key when the woken one parks on another key', async () => {
    const clock = new ManualClock({ autoAdvance: false });
    const memory = createMemoryQueue({ clock });
    const engine = createEngine({
      store: new MemoryStore({ clock }),
      coordinator: new MemoryCoordinator({ clock }),
      clock,
      queue: memory.queue,
      waitList: memory.waitList,
      background: { workerWaitMs: 0, parkFallbackMs: 60_000 },
    });
    const holdA = gate();
    const holdB = gate();
    const holder = (name: string, key: string, until: Promise<void>) =>
      reactor(name)
        .withSemaphore({ key: () => key, limit: 1 })
        .step('s', { run: () => until })
        .build();
    const both = reactor('both')
      .withSemaphore([
        { key: () => 'a:user', limit: 1 },
        { key: () => 'b:project', limit: 1 },
      ])
      .step('s', { run: () => 'both' })
      .background('all')
      .build();
    const onlyB = reactor('only-b')
      .withSemaphore({ key: () => 'b:project', limit: 1 })
      .step('s', { run: () => 'b' })
      .background('all')
      .build();
    const worker = createWorker({ engine, consumer: memory.consumer, reactors: [both, onlyB], concurrency: 2 });
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 10_000; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        const counts = memory.queue.counts();
        if (counts.ready === 0 && counts.running === 0) return;
      }
    };
    const heldB = engine.run(holder('hold-b', 'b:project', holdB.promise), {});
    const first = await engine.run(both, {}); // takes a:user, parks on b:project
    await settle();
    const second = await engine.run(onlyB, {}); // parks on b:project behind it
    await settle();
    const heldA = engine.run(holder('hold-a', 'a:user', holdA.promise), {}); // a:user is busy now
    expect((await engine.result(first.executionId))?.status).toBe('parked');
    expect((await engine.result(second.executionId))?.status).toBe('parked');
    holdB.open(); // the release of b:project wakes "both", which parks on a:user and passes the wake on
    await heldB;
    await settle();
    expect(
      (await engine.result(first.executionId))?.trace
        .filter((e) => e.type === 'run.parked')
        .map((e) => 'key' in e && e.key),
    ).toEqual(['b:project', 'a:user']);
    // Woken at once, not by its 60 s fallback: the clock never moved.
    expect((await engine.result(second.executionId))?.status).toBe('completed');
    holdA.open();
    await heldA;
    await settle();
    expect((await engine.result(first.executionId))?.status).toBe('completed');
    await worker.stop();
    await memory.queue.close();
  });
});

describe('several rate limits', () => {
  const perUserAndProject = () =>
    reactor('api')
      .input({ user: z.string(), project: z.string() })
      .step('call', {
        args: ($) => ({ user: $.input('user'), project: $.input('project') }),
        rateLimit: [
          { key: ({ user }) => `user:${user}`, limit: 2, per: '1s' },
          { key: ({ project }) => `project:${project}`, limit: 5, per: '1s' },
        ],
        run: () => 1,
      })
      .build();

  test('per user 2/s and per project 5/s: each refusal names its limit; a refused start is charged to none', async () => {
    const t = createTestEngine();
    const r = perUserAndProject();
    const outcomes: string[] = [];
    for (const user of ['a', 'a', 'a', 'b', 'b', 'c', 'c']) {
      const result = await t.run(r, { user, project: 'p' });
      const error = result.status === 'failed' ? (result.error as RateLimitedError) : undefined;
      outcomes.push(error === undefined ? 'ok' : `${error.details.key} ${error.details.limit}`);
    }
    expect(outcomes).toEqual(['ok', 'ok', 'user:a 2', 'ok', 'ok', 'ok', 'project:p 5']);
    // Key order charges project:p first: user a's third start got its project charge back; user c's second was refused first-hand.
    expect((await t.coordinator.rateState('user:a', 1_000)).count).toBe(2);
    expect((await t.coordinator.rateState('user:c', 1_000)).count).toBe(1);
    expect((await t.coordinator.rateState('project:p', 1_000)).count).toBe(5);
    const refunds = t.events.filter((e) => e.type === 'coordination.released' && e.refunded === true);
    expect(refunds.map((e) => e.type === 'coordination.released' && e.key)).toEqual(['project:p']);
    const denied = t.events.filter((e) => e.type === 'coordination.denied');
    expect(denied.map((e) => e.type === 'coordination.denied' && [e.key, e.limit, e.periodMs])).toEqual([
      ['user:a', 2, 1_000],
      ['project:p', 5, 1_000],
    ]);
    t.clock.advance(1_000);
    expect((await t.run(r, { user: 'c', project: 'p' })).status).toBe('completed');
  });

  test('a refusal refunds only what this admission charged: a start charged already keeps its earlier charge', async () => {
    const t = createTestEngine();
    let attempts = 0;
    const r = reactor('retried')
      .step('call', {
        rateLimit: [
          { key: () => 'a', limit: 10, per: '1m' },
          { key: () => 'b', limit: 1, per: '1s' },
        ],
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: '100ms' },
        run: async () => {
          attempts++;
          // Fill b for the retry: this start's own charge leaves b's 1 s window before it, this one does not.
          await t.clock.sleep(950);
          await t.coordinator.rateTake({ windows: [{ key: 'b', limit: 5, periodMs: 1_000 }], id: 'other' });
          throw new Error('first attempt fails');
        },
      })
      .build();
    const result = await t.run(r, {});
    expect(attempts).toBe(1);
    expect(result.status === 'failed' && result.error).toMatchObject({ code: 'rate_limited', details: { key: 'b' } });
    // The retry found the start charged to a already (not charged again), so the refusal by b takes nothing back from a.
    expect((await t.coordinator.rateState('a', 60_000)).count).toBe(1);
    expect(t.events.some((e) => e.type === 'coordination.released' && e.refunded === true)).toBe(false);
  });

  test('a rate window limit from the arguments', async () => {
    const t = createTestEngine();
    const r = reactor('tiered-api')
      .input({ user: z.string(), tier: z.enum(['pro', 'free']) })
      .withRateLimit({ key: ({ user }) => `user:${user}`, limit: ({ tier }) => (tier === 'pro' ? 3 : 1), per: '1m' })
      .step('s', { run: () => 1 })
      .build();
    const statuses = async (input: { user: string; tier: 'pro' | 'free' }) => {
      const out: string[] = [];
      for (let i = 0; i < 4; i++) out.push((await t.run(r, input)).status);
      return out;
    };
    expect(await statuses({ user: 'p', tier: 'pro' })).toEqual(['completed', 'completed', 'completed', 'failed']);
    expect(await statuses({ user: 'f', tier: 'free' })).toEqual(['completed', 'failed', 'failed', 'failed']);
  });

  test('an in-process wait on a later limit keeps the earlier charge, and gets room when the window moves', async () => {
    const t = createTestEngine();
    const r = reactor('wait')
      .withRateLimit([
        { key: () => 'a', limit: 10, per: '1s', wait: '5s' },
        { key: () => 'b', limit: 1, per: '2s', wait: '5s' },
      ])
      .step('s', { run: () => 1 })
      .build();
    await t.run(r, {});
    const before = t.clock.now();
    expect((await t.run(r, {})).status).toBe('completed');
    expect(t.clock.now() - before).toBeGreaterThanOrEqual(2_000);
    expect((await t.coordinator.rateState('b', 2_000)).count).toBe(1);
  });
});
