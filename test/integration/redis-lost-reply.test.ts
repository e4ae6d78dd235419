/**
 * Counted calls whose reply was lost (docs/decisions/065): a re-entrant acquire, a release, a
 * job's lease, a resume claim. The call reaches Redis and takes effect, but its reply is lost
 * to a dropped connection — simulated on the client (the command is sent and answered, then the
 * caller sees the error ioredis gives a command in flight when the connection drops). The call
 * must settle from what Redis holds, never count its effect twice; one that did not take effect
 * is sent again.
 */
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RECORD_VERSION, type ExecutionRecord } from '../../src/ports/store.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { scripts } from '../../src/storage/redis/scripts.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
let backend: RedisBackend;

beforeEach(() => {
  backend = createRedisBackend({
    url: server.url,
    prefix: `lost${crypto.randomUUID().slice(0, 8)}`,
    outageToleranceMs: 5_000,
  });
});
afterEach(async () => {
  await backend.close();
});

const dropped = (): Error =>
  Object.assign(new Error('Reached the max retries per request limit (which is 0).'), {
    name: 'MaxRetriesPerRequestError',
  });

/**
 * The next EVALSHA of `script` sent on `redis` fails as if its connection dropped: after Redis ran it
 * (`applied`), or before it was sent. Returns how many such calls were sent in all. The script
 * is loaded first, so that call is not a `NOSCRIPT`.
 */
async function dropNextReply(
  redis: Redis,
  script: { readonly sha: string; readonly source: string },
  applied: boolean,
): Promise<{ sent: () => number }> {
  await redis.script('LOAD', script.source);
  const sha = script.sha;
  const original = redis.sendCommand.bind(redis);
  let armed = true;
  let sent = 0;
  redis.sendCommand = (command, stream) => {
    if (command.name !== 'evalsha' || command.args[0] !== sha) return original(command, stream);
    if (!armed) {
      sent++;
      return original(command, stream);
    }
    armed = false;
    if (!applied) return Promise.reject(dropped());
    sent++;
    return Promise.resolve(original(command, stream)).then(() => Promise.reject(dropped()));
  };
  return { sent: () => sent };
}

function record(id: string): ExecutionRecord {
  return {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor: 'r',
    status: 'pending',
    input: {},
    steps: {},
    rollbackFailures: [],
    createdAt: 1,
    updatedAt: 1,
  };
}

describe('a lock acquire whose reply was lost', () => {
  it('that took the key: acquired once (nesting 1), not sent again', async () => {
    const c = backend.coordinator;
    const probe = await dropNextReply(backend.redis, scripts.lockAcquire, true);
    expect(await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 60_000 })).toMatchObject({
      acquired: true,
      nesting: 1,
    });
    expect(probe.sent()).toBe(1);
    expect(await c.lockState('k')).toMatchObject({ holder: { owner: 'a' }, nesting: 1 });
    expect(await c.lockRelease('k', 'a')).toMatchObject({ released: true, nesting: 0 });
    expect(await c.lockState('k')).toBeUndefined();
  });

  it('a re-entry that counted: nesting 2, and two releases free the key', async () => {
    const c = backend.coordinator;
    await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 60_000 });
    await dropNextReply(backend.redis, scripts.lockAcquire, true);
    expect(await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 60_000 })).toMatchObject({
      acquired: true,
      nesting: 2,
    });
    expect(await c.lockRelease('k', 'a')).toMatchObject({ released: true, nesting: 1 });
    expect(await c.lockRelease('k', 'a')).toMatchObject({ released: true, nesting: 0 });
    expect(await c.lockState('k')).toBeUndefined();
  });

  it('that never reached Redis: sent again, acquired once', async () => {
    const c = backend.coordinator;
    const probe = await dropNextReply(backend.redis, scripts.lockAcquire, false);
    expect(await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 60_000 })).toMatchObject({
      acquired: true,
      nesting: 1,
    });
    expect(probe.sent()).toBe(1);
    expect(await c.lockState('k')).toMatchObject({ nesting: 1 });
  });
});

describe('a lock release whose reply was lost', () => {
  it('of an inner level: one level released, the outer one still held', async () => {
    const c = backend.coordinator;
    await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 60_000 });
    await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 60_000 });
    const probe = await dropNextReply(backend.redis, scripts.lockRelease, true);
    expect(await c.lockRelease('k', 'a')).toMatchObject({ released: true, nesting: 1 });
    expect(probe.sent()).toBe(1);
    expect(await c.lockState('k')).toMatchObject({ holder: { owner: 'a' }, nesting: 1 });
  });

  it('of the last level: released, the key free', async () => {
    const c = backend.coordinator;
    await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 60_000 });
    await dropNextReply(backend.redis, scripts.lockRelease, true);
    expect(await c.lockRelease('k', 'a')).toMatchObject({ released: true, nesting: 0 });
    expect(await c.lockState('k')).toBeUndefined();
  });

  it('that never reached Redis: sent again', async () => {
    const c = backend.coordinator;
    await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 60_000 });
    await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 60_000 });
    await dropNextReply(backend.redis, scripts.lockRelease, false);
    expect(await c.lockRelease('k', 'a')).toMatchObject({ released: true, nesting: 1 });
    expect(await c.lockState('k')).toMatchObject({ nesting: 1 });
  });
});

describe('semaphores', () => {
  it('an acquire whose reply was lost holds one slot; a lost release frees it', async () => {
    const c = backend.coordinator;
    await dropNextReply(backend.redis, scripts.semaphoreAcquire, true);
    expect(await c.semaphoreAcquire({ key: 's', holder: { owner: 'a' }, limit: 2, ttlMs: 60_000 })).toMatchObject({
      acquired: true,
      nesting: 1,
    });
    expect((await c.semaphoreState('s', 2)).holders).toMatchObject([{ holder: { owner: 'a' }, nesting: 1 }]);
    await dropNextReply(backend.redis, scripts.semaphoreRelease, true);
    expect(await c.semaphoreRelease('s', 'a')).toMatchObject({ released: true, nesting: 0 });
    expect((await c.semaphoreState('s', 2)).holders).toEqual([]);
  });
});

describe('store calls', () => {
  it("a job's lease taken by a call whose reply was lost: entered once, with the record; one release frees it", async () => {
    const { store, coordinator } = backend;
    await store.save(record('e1'));
    const request = {
      lease: { key: 'live:e1', holder: { owner: 'w:1:1', executionId: 'e1' }, ttlMs: 60_000 },
      executionId: 'e1',
      cancel: { key: 'cancel:e1', bucket: 'requested' },
    };
    await dropNextReply(backend.redis, scripts.jobEnter, true);
    const entered = await backend.jobLeases.enterJob(request);
    expect(entered).toMatchObject({ acquired: true, cancelRequested: false, record: { id: 'e1', status: 'pending' } });
    expect(await coordinator.lockState('live:e1')).toMatchObject({ holder: { owner: 'w:1:1' }, nesting: 1 });
    await coordinator.lockRelease('live:e1', 'w:1:1');
    expect(await coordinator.lockState('live:e1')).toBeUndefined();
  });

  it('a resume claim (SET NX) whose reply was lost is claimed by its claimant, and only by it', async () => {
    const store = backend.store as unknown as {
      claimResume: (id: string, step: string, claimant: string, ttlMs: number) => Promise<{ claimed: boolean }>;
    };
    const redis = backend.redis as unknown as { set: (...args: unknown[]) => Promise<unknown> };
    const original = redis.set.bind(redis);
    let armed = true;
    redis.set = async (...args: unknown[]) => {
      if (!armed || args[args.length - 1] !== 'NX') return original(...args);
      armed = false;
      await original(...args);
      throw dropped();
    };
    expect(await store.claimResume('e1', 'approve', 'claimant-1', 60_000)).toEqual({ claimed: true });
    expect(await store.claimResume('e1', 'approve', 'claimant-2', 60_000)).toEqual({
      claimed: false,
      holder: 'claimant-1',
    });
  });
});
