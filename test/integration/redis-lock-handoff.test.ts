/**
 * In-process lock hand-over on Redis (docs/decisions/037): a release by this process hands the
 * key straight to the oldest waiter that offered to take it — a new fencing token, no
 * notification — at most MAX_STREAK times in a row; a waiter that stopped waiting is never
 * handed the key; a release that cannot hand over ends the offer's wait without a grant.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LockAcquireRequest } from '../../src/engine/ports/coordinator.js';
import { createEngine, reactor, type ReactorEvent } from '../../src/index.js';
import { MAX_STREAK } from '../../src/storage/redis/handoff.js';
import { createRedisBackend, RedisCoordinator, type RedisBackend } from '../../src/storage/redis/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

let server: RedisServerHandle;
let backend: RedisBackend;
let c: RedisCoordinator;
let other: RedisBackend;

const request = (owner: string, key = 'k', ttlMs = 60_000): LockAcquireRequest => ({ key, holder: { owner, executionId: `e-${owner}`, reactor: 'r', step: 's' }, ttlMs });

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.dispose();
});
beforeEach(() => {
  const prefix = `rxh${crypto.randomUUID().slice(0, 8)}`;
  backend = createRedisBackend({ url: server.url, prefix });
  other = createRedisBackend({ url: server.url, prefix }); // another process's coordinator
  c = backend.coordinator as RedisCoordinator;
});
afterEach(async () => {
  await Promise.all([backend.close(), other.close()]);
});

describe('lock hand-over within a process', () => {
  it('hands the key to the oldest offer with a greater fencing token and its own lease', async () => {
    const a = await c.lockAcquire(request('a'));
    const wb = c.watch('lock', 'k', request('b', 'k', 5_000));
    const wc = c.watch('lock', 'k', request('c'));
    const [b, cc] = [wb.wait(10_000), wc.wait(300)];
    const released = await c.lockRelease('k', 'a');
    expect(released).toEqual({ released: true, nesting: 0, handedOver: true });
    const grant = await b;
    expect(grant?.acquired).toBe(true);
    expect(BigInt(grant!.token)).toBeGreaterThan(BigInt(a.acquired ? a.token : '0'));
    const state = await c.lockState('k');
    expect(state).toMatchObject({ holder: { owner: 'b', executionId: 'e-b', reactor: 'r', step: 's' }, nesting: 1, token: grant!.token });
    expect(state!.ttlMs).toBeLessThanOrEqual(5_000);
    expect(await cc).toBeUndefined(); // the younger offer timed out: the key was not free
    wb.close();
    wc.close();
  });

  it('after MAX_STREAK hand-overs a release frees the key and notifies other processes', async () => {
    await c.lockAcquire(request('o0'));
    const remote = other.coordinator.waitForChange('lock', 'k', 10_000);
    for (let i = 1; i <= MAX_STREAK; i++) {
      const watch = c.watch('lock', 'k', request(`o${i}`));
      const wait = watch.wait(10_000);
      expect(await c.lockRelease('k', `o${i - 1}`)).toMatchObject({ handedOver: true });
      expect((await wait)?.acquired).toBe(true);
      watch.close();
    }
    const watch = c.watch('lock', 'k', request('late'));
    const late = watch.wait(300);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the remote waiter is subscribed
    const started = performance.now();
    expect(await c.lockRelease('k', `o${MAX_STREAK}`)).toEqual({ released: true, nesting: 0 });
    await remote; // woken by the release's notification
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await late).toBeUndefined(); // woken (or timed out), without a grant
    expect(await c.lockState('k')).toBeUndefined();
    watch.close();
  });

  it('never hands the key to a waiter whose wait has ended', async () => {
    await c.lockAcquire(request('a'));
    const watch = c.watch('lock', 'k', request('b'));
    expect(await watch.wait(20)).toBeUndefined();
    expect(await c.lockRelease('k', 'a')).toEqual({ released: true, nesting: 0 });
    expect(await c.lockState('k')).toBeUndefined();
    watch.close();
  });

  it('an inner (re-entrant) release keeps the key; a release by a non-holder hands nothing; both end the offer without a grant', async () => {
    await c.lockAcquire(request('a'));
    await c.lockAcquire(request('a'));
    const first = c.watch('lock', 'k', request('b'));
    const inner = first.wait(10_000);
    expect(await c.lockRelease('k', 'a')).toEqual({ released: true, nesting: 1 });
    expect(await inner).toBeUndefined();
    first.close();
    const second = c.watch('lock', 'k', request('b'));
    const stranger = second.wait(10_000);
    expect(await c.lockRelease('k', 'nobody')).toEqual({ released: false, nesting: 0 });
    expect(await stranger).toBeUndefined();
    second.close();
    expect((await c.lockState('k'))?.holder.owner).toBe('a');
  });

  it('lockHandOff: false frees the key at every release, offers or not', async () => {
    const plain = new RedisCoordinator({ redis: backend.redis, prefix: `rxp${crypto.randomUUID().slice(0, 8)}`, lockHandOff: false });
    await plain.lockAcquire(request('a'));
    const watch = plain.watch('lock', 'k', request('b'));
    const wait = watch.wait(2_000);
    expect(await plain.lockRelease('k', 'a')).toEqual({ released: true, nesting: 0 });
    expect(await wait).toBeUndefined(); // woken by the notification: it must try again
    expect(await plain.lockState('k')).toBeUndefined();
    watch.close();
    await plain.close();
  });

  it('an engine: the second run of one process takes the key from the first with a greater token; the events say so', async () => {
    const engine = createEngine({ store: backend.store, coordinator: c });
    const events: ReactorEvent[] = [];
    engine.subscribe((e) => void events.push(e));
    let inside = 0;
    let most = 0;
    const locked = reactor('handoff')
      .withLock({ key: () => 'acct', ttl: '10s', wait: '5s' })
      .step('work', {
        run: async () => {
          most = Math.max(most, ++inside);
          await new Promise((resolve) => setTimeout(resolve, 30));
          inside--;
          return 1;
        },
      })
      .returns('work');
    const results = await Promise.all([engine.run(locked, {}), engine.run(locked, {}), engine.run(locked, {})]);
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(most).toBe(1);
    const acquired = events.filter((e) => e.type === 'coordination.acquired').map((e) => BigInt((e as { token: string }).token));
    expect(acquired).toHaveLength(3);
    expect([...acquired].sort((a, b) => (a < b ? -1 : 1))).toEqual(acquired); // tokens increase in entry order
    const released = events.filter((e): e is Extract<ReactorEvent, { type: 'coordination.released' }> => e.type === 'coordination.released');
    expect(released.filter((e) => e.handedOver === true)).toHaveLength(2);
    expect(await c.lockState('acct')).toBeUndefined();
  });
});
