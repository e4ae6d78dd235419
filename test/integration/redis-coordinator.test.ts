/**
 * RedisCoordinator beyond the shared contract: concurrency on one key, key layout (hash tags,
 * escaping), holder info, pub/sub wake-ups and subscription bookkeeping, and input checks.
 */
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Coordinator, HolderInfo } from '../../src/ports/coordinator.js';
import { createRedisBackend, RedisCoordinator, RedisKeys, type RedisBackend } from '../../src/storage/redis/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { offered } from '../support/fast-paths.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const holder = (owner: string, extra: Partial<HolderInfo> = {}): HolderInfo => ({ owner, ...extra });

/** The cluster hash tag of a key (the whole key when it has none), per the Redis Cluster rule. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.slice(open + 1, close);
}

let server: RedisServerHandle;
let backend: RedisBackend;
let c: Coordinator;
let prefix: string;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.dispose();
});
beforeEach(() => {
  prefix = `rxk${crypto.randomUUID().slice(0, 8)}`;
  backend = createRedisBackend({ url: server.url, prefix });
  c = backend.coordinator;
});
afterEach(async () => {
  await backend.close();
});

describe('key layout', () => {
  it('puts every key of one primitive instance in one slot, also for keys with braces', () => {
    const keys = new RedisKeys('rx');
    for (const k of ['orders', 'a{b}c', '}{', 'x:y}:fence', '%7B']) {
      expect(hashTag(keys.lock(k))).toBe(hashTag(keys.lockFence(k)));
      expect(hashTag(keys.lock(k))).toBe(hashTag(keys.lockChannel(k)));
      expect(hashTag(keys.semaphore(k))).toBe(hashTag(keys.semaphoreMeta(k)));
      expect(hashTag(keys.rate(k, 1000))).toBe(hashTag(keys.rate(k, 60_000)));
      expect(hashTag(keys.period(k, 'b1'))).toBe(hashTag(keys.period(k, 'b2')));
      expect(hashTag(keys.ordered(k))).toBe(hashTag(keys.orderedChannel(k)));
    }
    expect(keys.lock('orders')).toBe('rx:{lock:orders}');
    expect(keys.lockFence('orders')).toBe('rx:{lock:orders}:fence');
    expect(keys.rate('api', 1000)).toBe('rx:{rate:api}:1000');
    expect(keys.period('daily', '2026-11-30')).toBe('rx:{period:daily}:2026-11-30');
    expect(keys.ordered('acct')).toBe('rx:{ord:acct}');
    expect(keys.execution('e1')).toBe('rx:exec:{e1}');
  });

  it('escapes braces and percent signs so distinct keys never collide', () => {
    const keys = new RedisKeys('rx');
    const samples = ['a', 'a}', 'a}:fence', 'a%7D', '{a', 'a%', 'a%25'];
    const built = samples.flatMap((k) => [
      keys.lock(k),
      keys.lockFence(k),
      keys.idempotency(k, 'x'),
      keys.idempotency('r', k),
    ]);
    expect(new Set(built).size).toBe(built.length);
    expect(keys.idempotency('R}:x', 'y')).not.toBe(keys.idempotency('R', 'x}:y'));
  });

  it('rejects prefixes that would break hash tags', () => {
    for (const bad of ['', 'a{b', 'x}', 'has space']) expect(() => new RedisKeys(bad)).toThrow(RangeError);
  });

  it('writes only under its prefix', async () => {
    await c.lockAcquire({ key: 'k', holder: holder('a'), ttlMs: 5000 });
    await c.semaphoreAcquire({ key: 'k', holder: holder('a'), limit: 2, ttlMs: 5000 });
    await c.rateTake({ windows: [{ key: 'k', limit: 5, periodMs: 5000 }], id: 'r1' });
    await c.periodMark({ key: 'k', bucket: 'b', ttlMs: 5000 });
    await c.orderedTicket('k');
    expect((await backend.redis.keys(`${prefix}:*`)).sort()).toEqual(
      [
        `${prefix}:{lock:k}`,
        `${prefix}:{lock:k}:fence`,
        `${prefix}:{sem:k}`,
        `${prefix}:{sem:k}:meta`,
        `${prefix}:{rate:k}:5000`,
        `${prefix}:{period:k}:b`,
        `${prefix}:{ord:k}`,
      ].sort(),
    );
  });
});

describe('lock', () => {
  it('grants one of many concurrent contenders, and reports it to the others', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        c.lockAcquire({ key: 'hot', holder: holder(`o${i}`, { reactor: 'R' }), ttlMs: 5000 }),
      ),
    );
    const winners = results.filter((r) => r.acquired);
    expect(winners).toHaveLength(1);
    const owner = (await c.lockState('hot'))?.holder.owner;
    for (const r of results) if (!r.acquired) expect(r.holder).toEqual({ owner, reactor: 'R' });
  });

  it('keeps the outer lease on a shorter re-entry, and the outer token', async () => {
    const outer = await c.lockAcquire({ key: 'k', holder: holder('a'), ttlMs: 5000 });
    const inner = await c.lockAcquire({ key: 'k', holder: holder('a'), ttlMs: 100 });
    expect(inner).toMatchObject({ acquired: true, nesting: 2, token: outer.acquired ? outer.token : 'x' });
    expect((await c.lockState('k'))?.ttlMs).toBeGreaterThan(4000);
  });

  it('a lapsed holder re-acquiring gets a new, larger token (no silent continuation)', async () => {
    const first = await c.lockAcquire({ key: 'k', holder: holder('a'), ttlMs: 60 });
    await sleep(100);
    const second = await c.lockAcquire({ key: 'k', holder: holder('a'), ttlMs: 60 });
    expect(first.acquired && second.acquired).toBe(true);
    if (first.acquired && second.acquired) {
      expect(second.nesting).toBe(1);
      expect(BigInt(second.token) > BigInt(first.token)).toBe(true);
    }
  });

  it('rejects invalid TTLs before calling Redis', async () => {
    for (const ttlMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(c.lockAcquire({ key: 'k', holder: holder('a'), ttlMs })).rejects.toThrow(RangeError);
      await expect(c.lockExtend('k', 'a', ttlMs)).rejects.toThrow(RangeError);
    }
    expect(await c.lockState('k')).toBeUndefined();
  });
});

describe('semaphore', () => {
  it('admits exactly `limit` of many concurrent contenders', async () => {
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        c.semaphoreAcquire({ key: 's', holder: holder(`o${i}`), limit: 3, ttlMs: 5000 }),
      ),
    );
    expect(results.filter((r) => r.acquired)).toHaveLength(3);
    expect((await c.semaphoreState('s')).holders).toHaveLength(3);
  });

  it('reports holder details and the stored limit when none is given', async () => {
    await c.semaphoreAcquire({
      key: 's',
      holder: holder('a', { executionId: 'a.2', reactor: 'R', step: 'charge' }),
      limit: 4,
      ttlMs: 5000,
    });
    const state = await c.semaphoreState('s');
    expect(state).toMatchObject({
      key: 's',
      limit: 4,
      holders: [{ holder: { owner: 'a', executionId: 'a.2', reactor: 'R', step: 'charge' }, nesting: 1 }],
    });
  });

  it('rejects an invalid limit or TTL', async () => {
    await expect(c.semaphoreAcquire({ key: 's', holder: holder('a'), limit: -1, ttlMs: 100 })).rejects.toThrow(
      RangeError,
    );
    await expect(c.semaphoreAcquire({ key: 's', holder: holder('a'), limit: 1, ttlMs: 0 })).rejects.toThrow(RangeError);
  });
});

describe('rate limit', () => {
  it('admits exactly `limit` of many concurrent starts, and a resent id never charges twice', async () => {
    const window = { key: 'api', limit: 5, periodMs: 10_000 };
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) => c.rateTake({ windows: [window], id: `s${i % 20}` })),
    );
    const allowedIds = new Set(results.flatMap((r, i) => (r.allowed ? [`s${i % 20}`] : [])));
    expect(allowedIds.size).toBe(5);
    expect((await c.rateState('api', 10_000)).count).toBe(5);
  });

  it('refuses with the window that is full, and a retry-after within its period', async () => {
    const second = { key: 'k', limit: 10, periodMs: 1000 };
    const minute = { key: 'k', limit: 2, periodMs: 60_000 };
    await c.rateTake({ windows: [second, minute], id: 'a' });
    await c.rateTake({ windows: [second, minute], id: 'b' });
    const refused = await c.rateTake({ windows: [second, minute], id: 'c' });
    expect(refused).toMatchObject({ allowed: false, window: minute, count: 2 });
    if (!refused.allowed) {
      expect(refused.retryAfterMs).toBeGreaterThan(59_000);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000);
    }
    expect(await c.rateTake({ windows: [], id: 'none' })).toEqual({ allowed: true });
  });
});

describe('period', () => {
  it('marks a bucket once among many concurrent markers', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => c.periodMark({ key: 'daily', bucket: '2026-11-30', ttlMs: 5000 })),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await c.periodIsMarked('daily', '2026-11-30')).toBe(true);
  });
});

describe('ordered lock', () => {
  it('hands out distinct consecutive positions to concurrent callers', async () => {
    const tickets = await Promise.all(Array.from({ length: 20 }, () => c.orderedTicket('o')));
    expect(tickets.map((t) => t.nonce).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(new Set(tickets.map((t) => t.epoch)).size).toBe(1);
  });

  it('lets exactly one of the concurrent enters in, and admits positions in order', async () => {
    const tickets = [];
    for (let i = 0; i < 5; i++) tickets.push(await c.orderedTicket('o'));
    const order: number[] = [];
    for (let round = 0; round < 5; round++) {
      const outcomes = await Promise.all(
        tickets.map((t) => c.orderedEnter({ ...t, poisonMs: 60_000, strict: false, holder: holder(`r${t.nonce}`) })),
      );
      const entered = tickets.filter((_, i) => outcomes[i]?.outcome === 'entered');
      expect(entered).toHaveLength(1);
      const [turn] = entered;
      if (turn === undefined) return;
      order.push(turn.nonce);
      await c.orderedComplete({ ...turn, failed: false, strict: false });
      tickets.splice(tickets.indexOf(turn), 1);
    }
    expect(order).toEqual([1, 2, 3, 4, 5]);
    expect((await c.orderedState('o')).drained).toBe(true);
  });

  it('rejects an invalid poison time', async () => {
    const t = await c.orderedTicket('o');
    await expect(c.orderedEnter({ ...t, poisonMs: -1, strict: false, holder: holder('a') })).rejects.toThrow(
      RangeError,
    );
  });
});

describe('waitForChange', () => {
  const numsub = async (redis: Redis, channel: string): Promise<number> => {
    const reply = (await redis.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
    return Number(reply[1]);
  };
  /** Until the server counts `n` subscribers of the channel (however slowly a loaded machine subscribes). */
  const subscribers = async (channel: string, n: number): Promise<void> => {
    await expect.poll(() => numsub(backend.redis, channel), { timeout: 10_000 }).toBe(n);
  };
  const keys = (): RedisKeys => new RedisKeys(prefix);

  it('is woken by a release, not its timeout; a lock release wakes only the oldest waiter here (decision 030)', async () => {
    await c.lockAcquire({ key: 'k', holder: holder('a'), ttlMs: 60_000 });
    const woken: number[] = [];
    const younger = new AbortController();
    // Timeouts far beyond the test's: a wait that ends was woken (or, for the younger two, aborted below).
    const waits = [
      offered(c, 'changes').waitForChange('lock', 'k', 600_000),
      offered(c, 'changes').waitForChange('lock', 'k', 600_000, younger.signal),
      offered(c, 'changes').waitForChange('lock', 'k', 600_000, younger.signal),
    ].map((w, i) => w.then(() => woken.push(i)));
    await subscribers(keys().lockChannel('k'), 1);
    await c.lockRelease('k', 'a');
    await waits[0];
    await sleep(100); // any other wake-up from the same message would have run by now
    expect(woken).toEqual([0]); // the two younger waiters sleep on (their try would lose to the woken one)
    younger.abort();
    await Promise.all(waits);
    expect(woken).toEqual([0, 1, 2]);
  });

  it('wakes every waiter of an ordered lock (only the next position may enter)', async () => {
    const [t1] = [await c.orderedTicket('w'), await c.orderedTicket('w'), await c.orderedTicket('w')];
    await c.orderedEnter({ ...t1, poisonMs: 60_000, strict: false, holder: holder('a') });
    const waits = [
      offered(c, 'changes').waitForChange('ordered', 'w', 600_000),
      offered(c, 'changes').waitForChange('ordered', 'w', 600_000),
    ];
    await subscribers(keys().orderedChannel('w'), 1);
    await c.orderedComplete({ ...t1, failed: false, strict: false });
    await Promise.all(waits); // their timeouts are far beyond the test's: both were woken
  });

  it('watch: a release between the watch and its wait is kept, so the wait ends at once', async () => {
    await c.lockAcquire({ key: 'kw', holder: holder('a'), ttlMs: 60_000 });
    const watch = (c as RedisCoordinator).watch('lock', 'kw');
    await subscribers(keys().lockChannel('kw'), 1);
    await c.lockRelease('kw', 'a'); // lands "while the caller's try is in flight"
    await sleep(50); // the message has arrived
    await watch.wait(600_000); // ends at once: its timeout is far beyond the test's
    watch.close();
    await subscribers(keys().lockChannel('kw'), 0);
  });

  it('watch: a release published while the subscription is on its way still wakes the watch (decision 057)', async () => {
    const fresh = new RedisCoordinator({ redis: backend.redis, prefix }); // no subscriber connection yet
    await fresh.lockAcquire({ key: 'ks', holder: holder('a'), ttlMs: 60_000 });
    const watch = fresh.watch('lock', 'ks'); // connects a subscriber, then subscribes: several round trips
    await fresh.lockRelease('ks', 'a'); // one round trip on a ready connection: published before the subscription
    try {
      await expect(
        Promise.race([watch.wait(30_000).then(() => 'woken'), sleep(10_000).then(() => 'timed out')]),
      ).resolves.toBe('woken');
      expect(await fresh.lockAcquire({ key: 'ks', holder: holder('b'), ttlMs: 60_000 })).toMatchObject({
        acquired: true,
      });
    } finally {
      watch.close();
      await fresh.close();
    }
  });

  it('watch: a woken watch keeps the channel subscribed until it is closed (no unsubscribe between tries)', async () => {
    const channel = new RedisKeys(prefix).lockChannel('kf');
    await c.lockAcquire({ key: 'kf', holder: holder('a'), ttlMs: 60_000 });
    const watch = (c as RedisCoordinator).watch('lock', 'kf');
    await subscribers(channel, 1);
    await c.lockRelease('kf', 'a');
    await watch.wait(20_000);
    await sleep(50);
    expect(await numsub(backend.redis, channel)).toBe(1);
    watch.close();
    await subscribers(channel, 0);
  });

  it('watch: without a change, the wait ends at its timeout; close unsubscribes', async () => {
    const first = (c as RedisCoordinator).watch('lock', 'kq');
    await first.wait(20_000); // its subscription's confirmation is a change: a release may have gone unheard before it
    const watch = (c as RedisCoordinator).watch('lock', 'kq'); // registered on a subscribed channel
    first.close();
    const started = performance.now();
    await watch.wait(150);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    watch.close();
    watch.close(); // idempotent
    await subscribers(keys().lockChannel('kq'), 0);
  });

  it('subscribes once per channel and unsubscribes when no waiter remains', async () => {
    const keys = new RedisKeys(prefix);
    const channel = keys.semaphoreChannel('s');
    const controller = new AbortController();
    const a = offered(c, 'changes').waitForChange('semaphore', 's', 20_000, controller.signal);
    const b = offered(c, 'changes').waitForChange('semaphore', 's', 150);
    await subscribers(channel, 1);
    await b; // timed out: one waiter left, still subscribed
    expect(await numsub(backend.redis, channel)).toBe(1);
    controller.abort();
    await a;
    await subscribers(channel, 0);
  });

  it('wakes on the ordered channel when a dead head is passed over', async () => {
    const [t1, t2] = [await c.orderedTicket('o'), await c.orderedTicket('o')];
    await c.orderedEnter({ ...t1, poisonMs: 50, strict: false, holder: holder('a') });
    const wait = offered(c, 'changes').waitForChange('ordered', 'o', 20_000);
    await subscribers(keys().orderedChannel('o'), 1);
    await sleep(100); // the first head's poison time passes
    expect(await c.orderedEnter({ ...t2, poisonMs: 50, strict: false, holder: holder('b') })).toEqual({
      outcome: 'entered',
    });
    await expect(Promise.race([wait.then(() => 'woken'), sleep(5_000).then(() => 'timeout')])).resolves.toBe('woken');
  });

  it('resolves every pending waiter on close, and at once afterwards', async () => {
    const coordinator = new RedisCoordinator({ redis: backend.redis, prefix });
    const wait = coordinator.waitForChange('lock', 'k', 60_000);
    await sleep(30);
    await coordinator.close();
    await expect(Promise.race([wait.then(() => 'closed'), sleep(5_000).then(() => 'timeout')])).resolves.toBe('closed');
    await expect(coordinator.waitForChange('lock', 'k', 60_000)).resolves.toBeUndefined();
    expect(await backend.redis.ping()).toBe('PONG'); // not its connection to close (it may still be connecting)
  });
});

describe('after the subscriber connections reconnect (decision 061)', () => {
  /** Kills every pub/sub connection of the server; ioredis reconnects them within ~50 ms. */
  async function killSubscribers(): Promise<void> {
    const killed = (await backend.redis.call('CLIENT', 'KILL', 'TYPE', 'pubsub')) as number;
    expect(killed).toBeGreaterThan(0);
  }

  it('a release published while the wake-up subscriber was away still wakes the watch once it is back', async () => {
    const waiter = new RedisCoordinator({ redis: backend.redis.duplicate(), prefix, closeConnection: true });
    try {
      await c.lockAcquire({ key: 'kr', holder: holder('a'), ttlMs: 60_000 });
      const watch = waiter.watch('lock', 'kr');
      await expect
        .poll(
          async () =>
            Number(
              (
                (await backend.redis.call('PUBSUB', 'NUMSUB', new RedisKeys(prefix).lockChannel('kr'))) as [
                  string,
                  number,
                ]
              )[1],
            ),
          { timeout: 10_000 },
        )
        .toBe(1);
      const wait = watch.wait(30_000).then(() => 'woken');
      await killSubscribers();
      await c.lockRelease('kr', 'a'); // published to nobody: the waiter's subscriber is reconnecting
      await expect(Promise.race([wait, sleep(10_000).then(() => 'timed out')])).resolves.toBe('woken');
      watch.close();
    } finally {
      await waiter.close();
    }
  });

  it('every cancel listener looks again once the cancel subscriber is back', async () => {
    let looked = 0;
    const stop = (c as RedisCoordinator).onCancelAnnounced(
      () => undefined,
      () => looked++,
    );
    try {
      for (let i = 0; i < 1000 && looked === 0; i++) await sleep(10);
      expect(looked).toBe(1);
      await killSubscribers();
      for (let i = 0; i < 2000 && looked === 1; i++) await sleep(10);
      expect(looked).toBe(2);
    } finally {
      stop();
    }
  });
});
