/**
 * Reactor-level coordination on the memory backend with a manual clock: the waiting rules in
 * virtual time (no test here sleeps), the held-key registry, fencing tokens seen by steps, and
 * the coordination matchers.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { ContentionError, reactor } from '../../src/index.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';
import { manualEngine } from '../background/helpers.js';

describe('in-process contention in virtual time', () => {
  test('waits the declared wait on release notifications with a growing fallback poll (no busy loop), then fails', async () => {
    const t = createTestEngine();
    await t.coordinator.lockAcquire({ key: 'acct:1', holder: { owner: 'other' }, ttlMs: 3_600_000 });
    const start = t.clock.now();
    const r = reactor('pay')
      .withLock({ key: () => 'acct:1', wait: '5s' })
      .step('charge', { run: () => 1 })
      .build();
    const result = await t.run(r, {});
    expect(result.status === 'failed' && result.error).toBeInstanceOf(ContentionError);
    expect(t.clock.now() - start).toBe(5_000);
    expect(t.clock.sleeps.length).toBeLessThan(20);
    expect(t.clock.sleeps.slice(0, 4)).toEqual([25, 50, 100, 200]);
    expect(result.status === 'failed' && (result.error as ContentionError).details).toMatchObject({
      reactor: 'pay',
      primitive: 'lock',
      key: 'acct:1',
      waitedMs: 5_000,
      holder: 'execution other',
    });
    expect(result.trace.map((e) => e.type)).toEqual([
      'run.started',
      'coordination.waiting',
      'coordination.contended',
      'run.failed',
    ]);
  });

  test('a holder whose TTL lapses during the wait lets the waiter in', async () => {
    const t = createTestEngine();
    await t.coordinator.lockAcquire({ key: 'acct:2', holder: { owner: 'crashed' }, ttlMs: 1_000 });
    const r = reactor('pay')
      .withLock({ key: () => 'acct:2', wait: '5s' })
      .step('charge', { run: () => 1 })
      .build();
    expect((await t.run(r, {})).status).toBe('completed');
  });

  test('a rate limit with a wait sleeps exactly until the window admits the start', async () => {
    const t = createTestEngine();
    const r = reactor('api')
      .withRateLimit({ key: () => 'api', limit: 1, per: '10s', wait: '1m' })
      .step('s', { run: () => 1 })
      .build();
    await t.run(r, {});
    const before = t.clock.now();
    expect((await t.run(r, {})).status).toBe('completed');
    expect(t.clock.now() - before).toBeGreaterThanOrEqual(10_000);
    expect(t.clock.now() - before).toBeLessThan(12_000);
  });

  test('the lock is renewed every ttl/3 of virtual time while the run works', async () => {
    const clock = new ManualClock();
    const t = createTestEngine({ clock });
    const r = reactor('long')
      .withLock({ key: () => 'k', ttl: '3s' })
      .step('work', { run: async () => (await clock.sleep(10_000), (await t.coordinator.lockState('k'))?.ttlMs) })
      .returns('work');
    const result = await t.run(r, {});
    expect(result.status === 'completed' && result.value).toBeGreaterThan(0);
    expect(result.trace.filter((e) => e.type === 'coordination.extended').length).toBeGreaterThanOrEqual(9);
  });
});

describe('held keys and fencing tokens', () => {
  test('steps see the held-key registry and the fencing token; nested re-entry keeps one token; all is cleared at release', async () => {
    const seen: unknown[] = [];
    const child = reactor('child')
      .withLock({ key: () => 'acct:9' })
      .step('inner', {
        run: (_a, ctx) => void seen.push({ keys: [...ctx.heldKeys], token: ctx.fencingToken('acct:9') }),
      })
      .build();
    const r = reactor('parent')
      .withLock({ key: () => 'acct:9' })
      .withSemaphore({ key: () => 'psp', limit: 1 })
      .withSemaphore({ key: () => 'psp-wide', limit: 3 }) // a redeclaration overrides the first
      .step('outer', { run: (_a, ctx) => void seen.push({ keys: [...ctx.heldKeys], token: ctx.fencingToken() }) })
      .compose('c', child, { waitFor: ['outer'] })
      .build();
    const t = createTestEngine();
    const result = await t.run(r, {});
    expect(result.status).toBe('completed');
    const [outer, inner] = seen as { keys: string[]; token: string }[];
    expect(outer!.keys).toEqual(['lock:acct:9']);
    expect(inner!.keys).toEqual(['lock:acct:9']);
    expect(inner!.token).toBe(outer!.token);
    expect(BigInt(outer!.token)).toBeGreaterThan(0n);
    const again = await t.run(
      reactor('again')
        .withLock({ key: () => 'acct:9' })
        .step('s', { run: (_a, ctx) => ctx.fencingToken() })
        .returns('s'),
      {},
    );
    expect(BigInt(again.status === 'completed' ? (again.value ?? '0') : '0')).toBeGreaterThan(BigInt(outer!.token));
  });
});

describe('coordination matchers', () => {
  test('lock, semaphore, rate, period and ordered-lock state', async () => {
    const t = createTestEngine();
    const c = t.coordinator;
    await c.lockAcquire({ key: 'L', holder: { owner: 'e1', step: 'charge' }, ttlMs: 10_000 });
    await expect(c).toBeLockedBy('L', 'e1', 'charge');
    await expect(c).not.toBeLockedBy('L', 'e2');
    await expect(c).not.toBeLockedBy('free');
    // A worker job holds as `<root execution id>@<job>`: the root execution id still names it.
    await c.lockAcquire({ key: 'W', holder: { owner: 'root-1@5f3a9c1e', step: 'ship' }, ttlMs: 10_000 });
    await expect(c).toBeLockedBy('W', 'root-1', 'ship');
    await expect(c).toBeLockedBy('W', 'root-1@5f3a9c1e');
    await expect(c).not.toBeLockedBy('W', 'root');
    await expect(c).not.toBeLockedBy('W', 'root-1@other');
    await expect(expect(c).toBeLockedBy('W', 'root-2')).rejects.toThrow(
      'held by root-1 (worker job 5f3a9c1e) (step "ship")',
    );
    await c.semaphoreAcquire({ key: 'S', holder: { owner: 'e1' }, limit: 3, ttlMs: 10_000 });
    await expect(c).toHaveSemaphoreSlots('S', { limit: 3, held: 1, available: 2 });
    await c.rateTake({ windows: [{ key: 'R', limit: 5, periodMs: 60_000 }], id: 'x' });
    await expect(c).toHaveRateCount('R', 60_000, 1);
    await c.periodMark({ key: 'P', bucket: '2026-01-01', ttlMs: 10_000 });
    await expect(c).toHavePeriodMarked('P', '2026-01-01');
    await expect(c).not.toHavePeriodMarked('P', '2026-01-02');
    const ticket = await c.orderedTicket('O');
    await expect(c).toHaveOrderedState('O', { next: 2, lastCompleted: 0, inFlight: undefined, drained: false });
    await c.orderedEnter({ ...ticket, poisonMs: 60_000, strict: false, holder: { owner: 'e1' } });
    await expect(c).toHaveOrderedState('O', { inFlight: 1 });
    await c.orderedComplete({ ...ticket, failed: false, strict: false });
    await expect(c).toHaveOrderedState('O', { drained: true });
  });
});

describe('derived reactors', () => {
  test('inherit declarations and steps, and may override a declaration', async () => {
    const base = reactor('base')
      .input({ id: z.string() })
      .withLock({ key: ({ id }) => `base:${id}` })
      .step('s', { run: (_a, ctx) => [...ctx.heldKeys] })
      .returns('s');
    const derived = base
      .extend('derived')
      .withLock({ key: ({ id }) => `derived:${id}` })
      .returns('s');
    const t = createTestEngine();
    const a = await t.run(base, { id: '1' });
    const b = await t.run(derived, { id: '1' });
    expect(a.status === 'completed' && a.value).toEqual(['lock:base:1']);
    expect(b.status === 'completed' && b.value).toEqual(['lock:derived:1']);
    expect(derived.name).toBe('derived');
  });
});

test("toBeLockedBy names a worker job's hold by its root execution id", async () => {
  const m = manualEngine();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const r = reactor('held-in-worker')
    .background('all')
    .step('ship', {
      lock: { key: () => 'parcel:1' },
      run: async () => {
        entered();
        await gate;
      },
    })
    .build();
  m.engine.register(r);
  const worker = m.startWorker();
  try {
    const { executionId } = await m.engine.start(r, {});
    await inside;
    await expect(m.coordinator).toBeLockedBy('parcel:1', executionId, 'ship');
    release();
    await expect.poll(async () => (await m.engine.result(executionId))?.status).toBe('completed');
  } finally {
    release();
    await worker.stop();
  }
});

describe('lost holds, release order, strict-chain give-back', () => {
  test('a lock lost while working is reported once, aborts ctx.signal, starts no further step, and fails the run with hold_lost', async () => {
    const clock = new ManualClock();
    const t = createTestEngine({ clock });
    let aborted = false;
    let secondRan = false;
    const r = reactor('fragile')
      .withLock({ key: () => 'L', ttl: '3s' })
      .step('first', {
        run: async (_a, ctx) => {
          // Another process takes the key behind our back (e.g. after a long GC pause).
          await t.coordinator.lockRelease('L', ctx.rootExecutionId);
          await t.coordinator.lockAcquire({ key: 'L', holder: { owner: 'intruder' }, ttlMs: 60_000 });
          await clock.sleep(5_000);
          aborted = ctx.signal.aborted;
        },
      })
      .step('second', { waitFor: ['first'], run: () => void (secondRan = true) })
      .build();
    const result = await t.run(r, {});
    expect(result.status === 'failed' && result.error).toMatchObject({ code: 'hold_lost' });
    expect(aborted).toBe(true);
    expect(secondRan).toBe(false);
    expect(result.trace.filter((e) => e.type === 'coordination.lost')).toHaveLength(1);
    await expect(t.coordinator).toBeLockedBy('L', 'intruder');
  });

  test('the period marker is written before the lock is given back', async () => {
    const t = createTestEngine();
    const r = reactor('daily')
      .withPeriod({ key: () => 'P', every: 'day' })
      .withLock({ key: () => 'L' })
      .step('s', { run: () => 1 })
      .build();
    const result = await t.run(r, {});
    const order = result.trace
      .filter((e) => e.type === 'coordination.acquired' || e.type === 'coordination.released')
      .map((e) => `${e.type.split('.')[1]}:${'primitive' in e ? e.primitive : ''}`);
    expect(order).toEqual(['acquired:lock', 'acquired:period', 'released:lock']);
  });

  test('in strict mode, a run that loses contention after its turn hands the position back without poisoning the chain', async () => {
    const t = createTestEngine();
    await t.coordinator.lockAcquire({ key: 'busy', holder: { owner: 'other' }, ttlMs: 3_600_000 });
    const loser = reactor('loser')
      .withOrderedLock({ key: () => 'O', strict: true })
      .withLock({ key: () => 'busy', wait: 0 })
      .step('s', { run: () => 1 })
      .build();
    const next = reactor('next')
      .withOrderedLock({ key: () => 'O', strict: true })
      .step('s', { run: () => 'ran' })
      .returns('s');
    expect((await t.run(loser, {})).status).toBe('failed');
    const result = await t.run(next, {});
    expect(result.status === 'completed' && result.value).toBe('ran');
  });
});
