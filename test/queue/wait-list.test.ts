/**
 * One WaitList contract, run against the in-process list, the Redis list (a throwaway
 * redis-server) and the Postgres list (a throwaway PostgreSQL server).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WaitList } from '../../src/ports/wait-list.js';
import { MemoryWaitList } from '../../src/queue/memory.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { PostgresWaitList } from '../../src/storage/postgres/wait-list.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import { RedisWaitList } from '../../src/storage/redis/wait-list.js';
import { startPostgresServer, type PostgresServerHandle } from '../support/postgres-server.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

let counter = 0;
/** A key no other test uses. */
const freshKey = (): string => `orders-${++counter}`;

function describeWaitListContract(name: string, make: () => WaitList): void {
  describe(`wait list contract: ${name}`, () => {
    it('shifts waiters first come, first served', async () => {
      const list = make();
      const key = freshKey();
      for (const id of ['a:1', 'b:1', 'c:1']) await list.add(key, id);
      expect(await list.list(key)).toEqual(['a:1', 'b:1', 'c:1']);
      expect(await list.shift(key)).toBe('a:1');
      await list.add(key, 'd:1');
      expect(await list.shift(key)).toBe('b:1');
      expect(await list.shift(key)).toBe('c:1');
      expect(await list.shift(key)).toBe('d:1');
      expect(await list.shift(key)).toBeUndefined();
    });

    it('adding a waiter twice keeps one entry in its first place', async () => {
      const list = make();
      const key = freshKey();
      await list.add(key, 'a:1');
      await list.add(key, 'b:1');
      await list.add(key, 'a:1');
      await Promise.all([list.add(key, 'b:1'), list.add(key, 'b:1'), list.add(key, 'c:1')]);
      expect(await list.list(key)).toEqual(['a:1', 'b:1', 'c:1']);
    });

    it('shift of an empty or unknown list gives undefined; list gives []', async () => {
      const list = make();
      const key = freshKey();
      expect(await list.shift(key)).toBeUndefined();
      expect(await list.list(key)).toEqual([]);
    });

    it('remove takes one waiter out and leaves the order of the others', async () => {
      const list = make();
      const key = freshKey();
      for (const id of ['a:1', 'b:1', 'c:1']) await list.add(key, id);
      await list.remove(key, 'b:1');
      await list.remove(key, 'absent');
      await list.remove(freshKey(), 'a:1');
      expect(await list.list(key)).toEqual(['a:1', 'c:1']);
      await list.remove(key, 'a:1');
      await list.remove(key, 'c:1');
      expect(await list.list(key)).toEqual([]);
      // A removed waiter added again goes to the end.
      await list.add(key, 'x:1');
      await list.add(key, 'a:1');
      expect(await list.list(key)).toEqual(['x:1', 'a:1']);
    });

    it('keeps keys apart, also keys with braces and percent signs', async () => {
      const list = make();
      const base = freshKey();
      const keys = [`${base}`, `${base}}`, `{${base}`, `${base}%7D`];
      for (const [i, key] of keys.entries()) await list.add(key, `job-${i}`);
      for (const [i, key] of keys.entries()) expect(await list.list(key)).toEqual([`job-${i}`]);
    });
  });
}

describeWaitListContract('memory', () => new MemoryWaitList());

let server: RedisServerHandle;
let redis: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url, { lazyConnect: false });
});

afterAll(async () => {
  await redis.quit();
  await server.dispose();
});

describeWaitListContract('redis', () => new RedisWaitList({ redis, prefix: 'wl' }));

describe('redis wait list specifics', () => {
  it('stores one hash-tagged ZSET per key that disappears when emptied', async () => {
    const list = new RedisWaitList({ redis, prefix: 'wl', ttlMs: 60_000 });
    const key = freshKey();
    const redisKey = new RedisKeys('wl').waitList(key);
    expect(redisKey).toBe(`wl:{wait:${key}}`);
    await list.add(key, 'a:1');
    expect(await redis.type(redisKey)).toBe('zset');
    const ttl = await redis.pttl(redisKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await list.shift(key);
    expect(await redis.exists(redisKey)).toBe(0);
  });

  it('keeps working after the server forgets its scripts', async () => {
    const list = new RedisWaitList({ redis, prefix: 'wl' });
    const key = freshKey();
    await list.add(key, 'a:1');
    await redis.script('FLUSH');
    await list.add(key, 'b:1');
    expect(await list.list(key)).toEqual(['a:1', 'b:1']);
  });

  it('refuses a prefix that could break a hash tag', () => {
    expect(() => new RedisWaitList({ redis, prefix: 'a{b' })).toThrow(RangeError);
  });
});

let postgres: PostgresServerHandle;
let store: PostgresStore;

beforeAll(async () => {
  postgres = await startPostgresServer();
  store = new PostgresStore({ connection: postgres.url, schema: 'wl', migrate: true });
  await store.ready();
});

afterAll(async () => {
  await store.close();
  await postgres.dispose();
});

describeWaitListContract('postgres', () => new PostgresWaitList({ store }));

describe('postgres wait list specifics', () => {
  it('an expired waiter is skipped, and goes to the end when added again', async () => {
    const list = new PostgresWaitList({ store, ttlMs: 1 });
    const lasting = new PostgresWaitList({ store });
    const key = freshKey();
    await list.add(key, 'a:1');
    await new Promise((resolve) => setTimeout(resolve, 20)); // the database clock passes its 1 ms
    await lasting.add(key, 'b:1');
    expect(await lasting.list(key)).toEqual(['b:1']);
    await lasting.add(key, 'a:1');
    expect(await lasting.list(key)).toEqual(['b:1', 'a:1']);
    expect(await lasting.shift(key)).toBe('b:1');
  });

  it('concurrent shifts take distinct waiters', async () => {
    const list = new PostgresWaitList({ store });
    const key = freshKey();
    for (const id of ['a:1', 'b:1', 'c:1', 'd:1']) await list.add(key, id);
    const taken = await Promise.all([list.shift(key), list.shift(key), list.shift(key), list.shift(key)]);
    expect([...taken].sort()).toEqual(['a:1', 'b:1', 'c:1', 'd:1']);
    expect(await list.list(key)).toEqual([]);
  });

  it('refuses a ttl that is not a positive integer', () => {
    expect(() => new PostgresWaitList({ store, ttlMs: 0 })).toThrow(RangeError);
  });

  it('a shift takes exactly one waiter whatever plan the database picks (a nested loop that scans the waiters again per row)', async () => {
    // The plan a loaded database chose for a one-statement shift (DELETE … WHERE … IN (SELECT … LIMIT 1
    // FOR UPDATE SKIP LOCKED)): the subquery run again for each row, passing over the row this
    // statement had just deleted, so a second waiter was deleted too and the shift failed ("query
    // returned more than one row"), losing the release's wake-up. Forced here with the planner's settings.
    const nested = new PostgresStore({
      connection: {
        connectionString: postgres.url,
        max: 1,
        options:
          '-c enable_hashjoin=off -c enable_mergejoin=off -c enable_material=off -c enable_hashagg=off -c enable_sort=off',
      },
      schema: 'wl',
    });
    try {
      const list = new PostgresWaitList({ store: nested });
      const key = freshKey();
      for (const id of ['a:1', 'b:1', 'c:1']) await list.add(key, id);
      expect(await list.shift(key)).toBe('a:1');
      expect(await list.list(key)).toEqual(['b:1', 'c:1']);
      expect(await list.shift(key)).toBe('b:1');
      expect(await list.shift(key)).toBe('c:1');
      expect(await list.shift(key)).toBeUndefined();
    } finally {
      await nested.close();
    }
  });
});
