/**
 * The Redis backend across a server restart WITHOUT persistence (every key and the script cache
 * are lost) and while the server is down.
 */
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { CoordinationUnavailableError, StoreUnavailableError } from '../../src/errors.js';
import { createRedisBackend, RedisKeys, setOutageTolerance, type RedisBackend } from '../../src/storage/redis/index.js';
import { scripts } from '../../src/storage/redis/scripts.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { offered } from '../support/fast-paths.js';

let server: RedisServerHandle;
let backend: RedisBackend;
let keys: RedisKeys;

beforeAll(async () => {
  server = await startRedisServer({ persistence: 'none' });
});
afterAll(async () => {
  await server.dispose();
});
beforeEach(() => {
  const prefix = `rxr${crypto.randomUUID().slice(0, 8)}`;
  keys = new RedisKeys(prefix);
  backend = createRedisBackend({ url: server.url, prefix });
});
afterEach(async () => {
  await backend.close();
});

const token = async (key: string, owner: string): Promise<bigint> => {
  const result = await backend.coordinator.lockAcquire({ key, holder: { owner }, ttlMs: 60_000 });
  if (!result.acquired) throw new Error('expected to acquire');
  return BigInt(result.token);
};

describe('restart without persistence', () => {
  it('keeps fencing tokens increasing although the fence key is lost, and reloads scripts (NOSCRIPT)', async () => {
    const c = backend.coordinator;
    const before: bigint[] = [];
    for (let i = 0; i < 5; i++) {
      before.push(await token('k', `a${i}`));
      await c.lockRelease('k', `a${i}`);
    }
    const held = await token('k', 'holder'); // held across the restart
    expect(await backend.redis.script('EXISTS', scripts.lockAcquire.sha)).toEqual([1]);

    await server.restart();

    expect(await backend.redis.exists(keys.lockFence('k'), keys.lock('k'))).toBe(0);
    expect(await backend.redis.script('EXISTS', scripts.lockAcquire.sha)).toEqual([0]);
    // The lock vanished with the data: a new holder gets in, with a larger token than any before.
    const after = await token('k', 'newcomer');
    for (const t of [...before, held]) expect(after > t).toBe(true);
    expect(await backend.redis.script('EXISTS', scripts.lockAcquire.sha)).toEqual([1]);
    // The old holder learns it lost the lock.
    expect(await c.lockExtend('k', 'holder', 60_000)).toBe(false);
    expect((await c.lockRelease('k', 'holder')).released).toBe(false);
    expect(await c.lockState('k')).toMatchObject({ holder: { owner: 'newcomer' } });
  });

  it('makes ordered-lock tickets of a lost batch stale (time-floored epochs)', async () => {
    const c = backend.coordinator;
    const t1 = await c.orderedTicket('o');
    const t2 = await c.orderedTicket('o');
    expect(await c.orderedEnter({ ...t1, poisonMs: 60_000, strict: false, holder: { owner: 'a' } })).toEqual({
      outcome: 'entered',
    });

    await server.restart();

    const fresh = await c.orderedTicket('o');
    expect(fresh.nonce).toBe(1);
    expect(fresh.epoch).toBeGreaterThan(t1.epoch);
    const stale = await c.orderedEnter({ ...t2, poisonMs: 60_000, strict: false, holder: { owner: 'b' } });
    expect(stale).toEqual({ outcome: 'stale', epoch: fresh.epoch });
    expect(await c.orderedHeartbeat(t1)).toBe(false);
    expect(await c.orderedComplete({ ...t1, failed: false, strict: false })).toMatchObject({
      issued: 1,
      lastCompleted: 0,
      epoch: fresh.epoch,
    });
    expect(await c.orderedEnter({ ...fresh, poisonMs: 60_000, strict: false, holder: { owner: 'c' } })).toEqual({
      outcome: 'entered',
    });
  });

  it('fails calls past the outage tolerance while the server is down (coordinator and store errors apart); waits still resolve; recovers after', async () => {
    const c = backend.coordinator;
    await token('k', 'a');
    setOutageTolerance(backend.redis, 200);
    await server.stop();
    try {
      await expect(c.lockAcquire({ key: 'k2', holder: { owner: 'b' }, ttlMs: 1000 })).rejects.toBeInstanceOf(
        CoordinationUnavailableError,
      );
      await expect(c.time()).rejects.toMatchObject({
        code: 'coordination_unavailable',
        details: { operation: 'time' },
      });
      await expect(backend.store.get('x')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(backend.store.get('x')).rejects.toMatchObject({
        code: 'store_unavailable',
        details: { operation: 'store-get' },
      });
      await expect(offered(c, 'changes').waitForChange('lock', 'k', 100)).resolves.toBeUndefined();
    } finally {
      await server.restart();
    }
    expect(await c.lockAcquire({ key: 'k2', holder: { owner: 'b' }, ttlMs: 1000 })).toMatchObject({ acquired: true });
  });
});
