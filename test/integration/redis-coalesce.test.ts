/**
 * Write coalescing on a command connection (docs/decisions/041): the commands of one tick leave
 * in one socket write, with their order, replies and errors unchanged. Real redis-server.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coalesceWrites, createRedisBackend } from '../../src/storage/redis/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

let server: RedisServerHandle;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.dispose();
});

/** Counts the socket writes of `redis` (write and writev) from now on. */
function countWrites(redis: Redis): () => number {
  const socket = redis.stream as unknown as {
    _write: (...a: unknown[]) => unknown;
    _writev: (...a: unknown[]) => unknown;
  };
  let writes = 0;
  const write = socket._write.bind(socket);
  const writev = socket._writev.bind(socket);
  socket._write = (...a) => (writes++, write(...a));
  socket._writev = (...a) => (writes++, writev(...a));
  return () => writes;
}

describe('coalesceWrites', () => {
  it('sends the commands of one tick in one write; replies and errors stay with their commands, in order', async () => {
    const redis = new Redis(server.url);
    try {
      await redis.ping();
      coalesceWrites(redis);
      coalesceWrites(redis); // idempotent
      const writes = countWrites(redis);
      const replies = Promise.all([
        ...Array.from({ length: 50 }, (_, i) => redis.set(`k${i}`, String(i))),
        redis.incr('k7'),
        redis.hset('k3', 'f', 'v').catch((error: Error) => `error: ${error.message.slice(0, 9)}`), // WRONGTYPE
        ...Array.from({ length: 50 }, (_, i) => redis.get(`k${i}`)),
      ]);
      const all = await replies;
      expect(writes()).toBe(1);
      expect(all.slice(0, 50)).toEqual(Array.from({ length: 50 }, () => 'OK'));
      expect(all[50]).toBe(8);
      expect(all[51]).toBe('error: WRONGTYPE');
      expect(all.slice(52)).toEqual(Array.from({ length: 50 }, (_, i) => (i === 7 ? '8' : String(i))));
      expect(redis.stream.writableCorked).toBe(0);
      // Commands of later ticks are not held back.
      expect(await redis.get('k1')).toBe('1');
      expect(await redis.get('k2')).toBe('2');
      expect(writes()).toBe(3);
    } finally {
      redis.disconnect();
    }
  });

  it('leaves commands sent before the connection is ready to the offline queue', async () => {
    const redis = new Redis(server.url, { lazyConnect: true });
    try {
      coalesceWrites(redis);
      expect(redis.status).toBe('wait');
      // The first command connects (lazyConnect): these wait in the offline queue, then go out.
      expect(await Promise.all([redis.set('early', '1'), redis.get('early')])).toEqual(['OK', '1']);
    } finally {
      redis.disconnect();
    }
  });

  it('is on for the connection a backend creates, off for a passed-in one unless asked', async () => {
    const own = createRedisBackend({ url: server.url, prefix: 'co1' });
    const given = new Redis(server.url);
    const passed = createRedisBackend({ redis: given, prefix: 'co2' });
    try {
      await Promise.all([own.redis.ping(), given.ping()]);
      const ownWrites = countWrites(own.redis);
      const givenWrites = countWrites(given);
      await Promise.all([own.redis.ping(), own.redis.ping(), given.ping(), given.ping()]);
      expect(ownWrites()).toBe(1);
      expect(givenWrites()).toBe(2);
    } finally {
      await own.close();
      await passed.close();
      given.disconnect();
    }
  });
});
