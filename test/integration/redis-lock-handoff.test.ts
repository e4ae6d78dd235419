/**
 * In-process lock hand-over on Redis (docs/decisions/037): a release by this process hands the
 * key straight to the oldest waiter that offered to take it — a new fencing token, no
 * notification — at most MAX_STREAK times in a row; a waiter that stopped waiting is never
 * handed the key; a release that cannot hand over ends the offer's wait without a grant.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LockAcquireRequest } from '../../src/engine/ports/coordinator.js';
import { createEngine, reactor, type ReactorEvent, type RunResult } from '../../src/index.js';
import { MAX_STREAK } from '../../src/storage/redis/handoff.js';
import { scripts } from '../../src/storage/redis/scripts.js';
import { createRedisBackend, RedisCoordinator, type RedisBackend } from '../../src/storage/redis/index.js';
import { CLAIM_TTL_MS, GRANT_PLACEHOLDER } from '../../src/storage/redis/coordinator.js';
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
    // A waiter whose (jittered) fallback poll is in flight at a release is not picked (decision 037), so
    // that release frees the key instead: at least one of the two releases with a waiter hands over.
    expect(released.filter((e) => e.handedOver === true).length).toBeGreaterThanOrEqual(1);
    expect(await c.lockState('acct')).toBeUndefined();
  });
});

describe('in-memory hand-over (docs/decisions/043)', () => {
  it('the receiver holds the key at once with the releaser token + 1; Redis confirms it behind the grant', async () => {
    const a = await c.lockAcquire(request('a', 'k', 5_000));
    const watch = c.watch('lock', 'k', request('b', 'k', 7_000));
    const wait = watch.wait(10_000);
    expect(await c.lockRelease('k', 'a')).toEqual({ released: true, nesting: 0, handedOver: true });
    const grant = (await wait)!;
    expect(grant.token).toBe((BigInt(a.acquired ? a.token : '0') + 1n).toString());
    expect(grant.confirmed).toBeDefined();
    expect(await grant.confirmed).toBe(true);
    const state = await c.lockState('k');
    expect(state).toMatchObject({ holder: { owner: 'b', executionId: 'e-b' }, nesting: 1, token: grant.token });
    expect(state!.ttlMs).toBeGreaterThan(5_000); // the receiver's own lease
    watch.close();
  });

  it("the receiver's own commands on the key reach Redis after the hand-over, even when the script must be resent", async () => {
    await c.lockAcquire(request('a'));
    const watch = c.watch('lock', 'k', request('b'));
    const wait = watch.wait(10_000);
    // Only lock-release stays loaded: the hand-over (lock-transfer) meets NOSCRIPT and is resent as EVAL.
    await backend.redis.script('FLUSH');
    await backend.redis.script('LOAD', scripts.lockRelease.source);
    await c.lockRelease('k', 'a');
    const grant = (await wait)!;
    expect(await c.lockRelease('k', 'b')).toEqual({ released: true, nesting: 0 }); // sent before the transfer is confirmed
    expect(await grant.confirmed).toBe(true);
    expect(await c.lockState('k')).toBeUndefined();
    watch.close();
  });

  it('a releaser that did not take the key in this process hands it over through Redis (no in-memory grant)', async () => {
    await other.coordinator.lockAcquire(request('a'));
    const watch = c.watch('lock', 'k', request('b'));
    const wait = watch.wait(10_000);
    expect(await c.lockRelease('k', 'a')).toMatchObject({ handedOver: true });
    const grant = (await wait)!;
    expect(grant.confirmed).toBeUndefined();
    expect((await c.lockState('k'))?.holder.owner).toBe('b');
    watch.close();
  });

  it('a hand-over by a releaser that had lost the key is not confirmed, and the receiving run learns it lost the key', async () => {
    const engine = createEngine({ store: backend.store, coordinator: c });
    const events: ReactorEvent[] = [];
    engine.subscribe((e) => void events.push(e));
    let entered!: () => void;
    const firstIn = new Promise<void>((resolve) => (entered = resolve));
    let leave!: () => void;
    const firstOut = new Promise<void>((resolve) => (leave = resolve));
    let calls = 0;
    const locked = reactor('lost-handoff')
      .withLock({ key: () => 'acct', ttl: '10s', wait: '5s' })
      .step('work', {
        run: async (_args, ctx) => {
          if (++calls === 1) {
            entered();
            await firstOut;
            return 1;
          }
          // The receiver: runs until it is told the key is not its own.
          await new Promise<void>((resolve) => (ctx.signal.aborted ? resolve() : ctx.signal.addEventListener('abort', () => resolve(), { once: true })));
          throw ctx.signal.reason as Error;
        },
      })
      .returns('work');
    const first = engine.run(locked, {});
    await firstIn;
    const second = engine.run(locked, {});
    await new Promise((resolve) => setTimeout(resolve, 50)); // the second run waits (and offers)
    // The first holder's lease lapses and another process takes the key.
    await backend.redis.del(c.keys.lock('acct'));
    expect((await other.coordinator.lockAcquire(request('intruder', 'acct'))).acquired).toBe(true);
    leave();
    const results: RunResult[] = await Promise.all([first, second]);
    expect(results[0]!.status).toBe('completed');
    expect(results[1]!.status).toBe('failed');
    expect(results[1]!.status === 'failed' && (results[1]!.error as { code?: string }).code).toBe('hold_lost');
    expect(events.some((e) => e.type === 'coordination.lost' && e.executionId === results[1]!.executionId)).toBe(true);
    expect((await c.lockState('acct'))?.holder.owner).toBe('intruder'); // untouched by the failed hand-over
  });
});

describe('grants to another process (docs/decisions/059)', () => {
  /** A waiter of `coordinator` on `key` whose retry registered its process as the next receiver. */
  async function registeredWaiter(coordinator: RedisCoordinator, owner: string, key = 'k') {
    const watch = coordinator.watch('lock', key, request(owner, key));
    await new Promise((resolve) => setTimeout(resolve, 50)); // the channel's subscription is confirmed
    expect((await coordinator.lockAcquire(request(owner, key))).acquired).toBe(false); // a retry: registers
    return watch;
  }

  it("a plain release grants the key to the registered process, whose oldest waiter holds it with a greater token, without a try of its own", async () => {
    const remote = other.coordinator as RedisCoordinator;
    const a = await remote.lockAcquire(request('a'));
    const watch = await registeredWaiter(c, 'b');
    const wait = watch.wait(10_000);
    expect(await remote.lockRelease('k', 'a')).toEqual({ released: true, nesting: 0, handedOver: true });
    const grant = (await wait)!;
    expect(grant.acquired).toBe(true);
    expect(BigInt(grant.token)).toBeGreaterThan(BigInt(a.acquired ? a.token : '0'));
    expect(await grant.confirmed).toBe(true);
    const state = await c.lockState('k');
    expect(state).toMatchObject({ holder: { owner: 'b', executionId: 'e-b' }, nesting: 1, token: grant.token });
    expect(state!.ttlMs).toBeGreaterThan(CLAIM_TTL_MS); // its own lease, not the placeholder's
    watch.close();
  });

  it('never grants to its own process, and a process with lockHandOff: false never registers', async () => {
    await c.lockAcquire(request('a'));
    const own = await registeredWaiter(c, 'b'); // the holder's own process: not registered
    own.close();
    const plain = new RedisCoordinator({ redis: other.redis, prefix: c.keys.prefix, lockHandOff: false });
    const watch = plain.watch('lock', 'k', request('x'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await plain.lockAcquire(request('x'))).acquired).toBe(false);
    expect(await c.lockRelease('k', 'a')).toEqual({ released: true, nesting: 0 });
    expect(await c.lockState('k')).toBeUndefined();
    watch.close();
    await plain.close();
  });

  it('a grant to a process with no waiter left is handed on or freed at once; to a process that is gone, it lapses with the claim TTL', async () => {
    const remote = other.coordinator as RedisCoordinator;
    await remote.lockAcquire(request('a'));
    const freed: string[] = [];
    c.onFreed((kind, key) => freed.push(`${kind}:${key}`));
    const gone = await registeredWaiter(c, 'b');
    gone.close(); // its waiter stopped waiting (it parked)
    expect(await remote.lockRelease('k', 'a')).toMatchObject({ handedOver: true });
    for (let i = 0; i < 100 && freed.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(freed).toEqual(['lock:k']); // so the engine wakes parked executions, as after a release
    expect(await c.lockState('k')).toBeUndefined(); // the placeholder freed it

    await remote.lockAcquire(request('a2'));
    const dead = await registeredWaiter(c, 'b2');
    dead.close();
    await backend.close(); // the registered process is gone
    expect(await remote.lockRelease('k', 'a2')).toMatchObject({ handedOver: true });
    const state = await remote.lockState('k');
    expect(state?.holder.owner.startsWith(GRANT_PLACEHOLDER)).toBe(true);
    expect(state!.ttlMs).toBeLessThanOrEqual(CLAIM_TTL_MS);
  });
});
