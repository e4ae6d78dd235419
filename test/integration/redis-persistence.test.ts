/**
 * The Redis backend across a restart WITH persistence (AOF, fsync always): holds survive with
 * their remaining TTL, and fencing tokens keep increasing from the persisted fence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

let server: RedisServerHandle;
let backend: RedisBackend;

beforeAll(async () => {
  server = await startRedisServer({ persistence: 'aof' });
  backend = createRedisBackend({ url: server.url, prefix: `rxp${crypto.randomUUID().slice(0, 8)}` });
});
afterAll(async () => {
  await backend.close();
  await server.dispose();
});

describe('restart with AOF persistence', () => {
  it('keeps the lock, its token, semaphore leases, ordered counters and records', async () => {
    const c = backend.coordinator;
    const first = await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 60_000 });
    await c.semaphoreAcquire({ key: 's', holder: { owner: 'a' }, limit: 1, ttlMs: 60_000 });
    const ticket = await c.orderedTicket('o');
    await c.orderedEnter({ ...ticket, poisonMs: 60_000, strict: false, holder: { owner: 'a' } });

    await server.restart();

    expect(await c.lockState('k')).toMatchObject({ holder: { owner: 'a' }, token: first.acquired ? first.token : 'x' });
    expect((await c.semaphoreAcquire({ key: 's', holder: { owner: 'b' }, limit: 1, ttlMs: 60_000 })).acquired).toBe(
      false,
    );
    expect(await c.orderedHeartbeat(ticket)).toBe(true);
    expect(await c.lockRelease('k', 'a')).toEqual({ released: true, nesting: 0 });
    const second = await c.lockAcquire({ key: 'k', holder: { owner: 'b' }, ttlMs: 60_000 });
    expect(first.acquired && second.acquired && BigInt(second.token) > BigInt(first.token)).toBe(true);
  });
});
