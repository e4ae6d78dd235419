/**
 * Wake-up losses injected on a throwaway redis-server (docs/decisions/112): the subscriber
 * connection killed (`CLIENT KILL TYPE pubsub`), its `SUBSCRIBE` refused (an ACL without
 * `+subscribe`), and the server's pub/sub output buffer overflowed (`client-output-buffer-limit
 * pubsub 1 1 0` and a burst). Each time the process reports its wake-ups degraded (the
 * coordinator's listener and health; for the refused SUBSCRIBE also the engine's `warn` log, the
 * `ts_reactor_wakeups_degraded` gauge and the readiness check's reason), then reports them
 * recovered, and a release in another process wakes its waiter by its notification again.
 *
 * The kill and the overflow heal by themselves within a few reconnect attempts: those tests give
 * the subscriber a reconnect delay (300 ms) longer than its confirmation bound (100 ms), so the
 * loss lasts past the bound whatever the machine's speed. The refused SUBSCRIBE lasts until the
 * test allows it again, and keeps the default bound.
 */
import { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { createEngine } from '../../src/index.js';
import { prometheusMetrics, redisReadiness } from '../../src/metrics/index.js';
import {
  COORDINATION_CONNECTION_OPTIONS,
  createRedisBackend,
  RedisCoordinator,
} from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const POLL = { timeout: 30_000, interval: 20 };
const OWNER = 'holder-elsewhere';

type Transition = { readonly degraded: boolean; readonly detail: string | undefined };

const unique = (name: string): string => `${name}-${Math.random().toString(36).slice(2, 8)}`;

/** A coordinator whose subscriber reconnects 300 ms after a loss and counts a subscription degraded past 100 ms. */
function slowReconnecting(prefix: string): RedisCoordinator {
  const redis = new Redis(server.url, { ...COORDINATION_CONNECTION_OPTIONS, retryStrategy: () => 300 });
  return new RedisCoordinator({ redis, prefix, closeConnection: true, subscriptions: { confirmMs: 100 } });
}

/** Records the degraded / recovered transitions `coordinator` reports. */
function transitions(coordinator: RedisCoordinator): Transition[] {
  const seen: Transition[] = [];
  coordinator.onWakeUpsDegraded((degraded, detail) => seen.push({ degraded, detail }));
  return seen;
}

/** Resolves to `woken` when `wait` ends before `boundMs` (its own timeout is far later), else to `timed out`. */
async function wokenWithin(wait: Promise<unknown>, boundMs: number): Promise<'woken' | 'timed out'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timed out'>((resolve) => (timer = setTimeout(() => resolve('timed out'), boundMs)));
  try {
    return await Promise.race([wait.then(() => 'woken' as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** How many connections the server has subscribed to `channel`. */
async function subscribers(admin: Redis, channel: string): Promise<number> {
  const [, count] = (await admin.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
  return Number(count);
}

/**
 * `waiter` watches `key`, held by `releaser`'s owner; once the server has its subscription, the
 * release wakes it (its own timeout, 600 s, is never reached).
 */
async function expectReleaseWakes(
  waiter: RedisCoordinator,
  releaser: RedisCoordinator,
  key: string,
  admin: Redis,
): Promise<void> {
  const watch = waiter.watch('lock', key);
  try {
    await expect.poll(() => subscribers(admin, waiter.keys.lockChannel(key)), POLL).toBe(1);
    await expect.poll(() => waiter.subscriptions().confirmed, POLL).toBe(true);
    const waiting = watch.wait(600_000);
    expect((await releaser.lockRelease(key, OWNER)).released).toBe(true);
    expect(await wokenWithin(waiting, 60_000)).toBe('woken');
  } finally {
    watch.close();
  }
}

async function hold(coordinator: RedisCoordinator, key: string): Promise<void> {
  const taken = await coordinator.lockAcquire({ key, holder: { owner: OWNER }, ttlMs: 600_000 });
  expect(taken.acquired).toBe(true);
}

describe('subscriptions made while the subscriber connection comes up', () => {
  test("every channel is subscribed on the server and confirmed: none is lost to the connection's handshake", async () => {
    const admin = new Redis(server.url);
    try {
      for (let round = 0; round < 3; round++) {
        const prefix = unique('wf-up');
        const coordinator = new RedisCoordinator({ redis: new Redis(server.url), prefix, closeConnection: true });
        await coordinator.time(); // the command connection is up; the subscriber is opened by the first watch
        const watches = [];
        // Watches on new channels, one per turn of the event loop, from before the subscriber connects until well after.
        for (let i = 0; i < 300; i++) {
          watches.push(coordinator.watch('lock', `k${i}`));
          await new Promise((resolve) => setImmediate(resolve));
        }
        await expect
          .poll(async () => ((await admin.call('PUBSUB', 'CHANNELS', `${prefix}:*`)) as string[]).length, POLL)
          .toBe(300);
        await expect
          .poll(() => coordinator.subscriptions(), POLL)
          .toEqual({ confirmed: true, channels: 300, unconfirmed: 0 });
        for (const watch of watches) watch.close();
        await coordinator.close();
      }
    } finally {
      admin.disconnect();
    }
  }, 120_000);
});

describe('wake-ups after an injected loss', () => {
  test('CLIENT KILL TYPE pubsub: degraded while the subscriber is away, recovered once it is back, and a release wakes the waiter again', async () => {
    const prefix = unique('wf-kill');
    const waiter = slowReconnecting(prefix);
    const releaser = new RedisCoordinator({ redis: new Redis(server.url), prefix, closeConnection: true });
    const admin = new Redis(server.url);
    const seen = transitions(waiter);
    try {
      await hold(releaser, 'k');
      const watch = waiter.watch('lock', 'k'); // keeps the channel subscribed across the loss
      await expect.poll(() => waiter.subscriptions(), POLL).toEqual({ confirmed: true, channels: 1, unconfirmed: 0 });

      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      await expect.poll(() => seen.map((t) => t.degraded), POLL).toEqual([true, false]);
      expect(seen[0]!.detail).toMatch(/wake-up subscri.*degraded for \d+ ms/);
      expect(waiter.subscriptions()).toEqual({ confirmed: true, channels: 1, unconfirmed: 0 });
      expect(waiter.wakeUpsDegraded()).toBe(false);

      const waiting = watch.wait(600_000);
      expect((await releaser.lockRelease('k', OWNER)).released).toBe(true);
      expect(await wokenWithin(waiting, 60_000)).toBe('woken');
      watch.close();
    } finally {
      admin.disconnect();
      await waiter.close();
      await releaser.close();
    }
  }, 120_000);

  test('SUBSCRIBE refused (ACL -subscribe): the warn log, the gauge and /readyz say degraded with the reason; all clear once allowed, and releases wake again', async () => {
    const prefix = unique('wf-acl');
    const backend = createRedisBackend({ url: server.url, prefix });
    const coordinator = backend.coordinator as RedisCoordinator;
    const releaser = new RedisCoordinator({ redis: new Redis(server.url), prefix, closeConnection: true });
    const admin = new Redis(server.url);
    const logs: { level: string; message: string; fields: unknown }[] = [];
    const log =
      (level: string) =>
      (fields: object | string, message?: string): void =>
        void logs.push({ level, message: message ?? (typeof fields === 'string' ? fields : ''), fields });
    const logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
    const engine = createEngine({ store: backend.store, coordinator: backend.coordinator, logger });
    const metrics = prometheusMetrics({ gauges: { wakeUpsDegraded: () => backend.subscriptions().degraded === true } });
    const readiness = redisReadiness({ redis: backend.redis, subscriptions: () => backend.subscriptions() });
    const gauge = async (): Promise<string | undefined> =>
      /^ts_reactor_wakeups_degraded (\S+)$/m.exec(await metrics.text())?.[1];
    const subscriptionsCheck = async () => (await readiness()).find((c) => c.name === 'subscriptions');
    try {
      await hold(releaser, 'k');
      const watch = coordinator.watch('lock', 'k');
      await expect.poll(() => backend.subscriptions().confirmed, POLL).toBe(true);
      expect(await gauge()).toBe('0');

      await admin.call('ACL', 'SETUSER', 'default', '-subscribe');
      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      await expect.poll(() => backend.subscriptions().degraded, POLL).toBe(true);
      // The refused SUBSCRIBE is sent again, and past the bound on a fresh connection, refused again: the reason reads so.
      await expect
        .poll(() => backend.subscriptions().detail ?? '', POLL)
        .toMatch(
          /1 of 1 wake-up subscription\(s\) not confirmed since the subscriber reconnected \(SUBSCRIBE failed: NOPERM.*degraded for \d+ ms/,
        );
      expect(coordinator.wakeUpsDegraded()).toBe(true);
      await expect
        .poll(() => logs.some((l) => l.level === 'warn' && l.message.includes('wake-ups degraded')), POLL)
        .toBe(true);
      expect(await gauge()).toBe('1');
      await expect
        .poll(subscriptionsCheck, POLL)
        .toMatchObject({ ok: false, detail: expect.stringMatching(/wake-up subscri.*degraded for \d+ ms/) });

      await admin.call('ACL', 'SETUSER', 'default', '+subscribe'); // sent again (on a fresh connection past the bound), now answered
      await expect.poll(() => backend.subscriptions(), POLL).toEqual({ confirmed: true, channels: 1, unconfirmed: 0 });
      await expect
        .poll(() => logs.some((l) => l.level === 'info' && l.message.includes('wake-ups recovered')), POLL)
        .toBe(true);
      expect(await gauge()).toBe('0');
      expect(await subscriptionsCheck()).toEqual({ name: 'subscriptions', ok: true });
      watch.close();

      await hold(releaser, 'k2');
      await expectReleaseWakes(coordinator, releaser, 'k2', admin);
      await releaser.lockRelease('k', OWNER);
    } finally {
      await admin.call('ACL', 'SETUSER', 'default', '+subscribe').catch(() => undefined);
      admin.disconnect();
      await engine.idle();
      await backend.close();
      await releaser.close();
    }
  }, 120_000);

  test('pub/sub output buffer overflowed (limit "pubsub 1 1 0" and a burst): degraded, recovered, and a release wakes the waiter again', async () => {
    const prefix = unique('wf-buf');
    const waiter = slowReconnecting(prefix);
    const releaser = new RedisCoordinator({ redis: new Redis(server.url), prefix, closeConnection: true });
    const admin = new Redis(server.url);
    const seen = transitions(waiter);
    const [, limits] = (await admin.call('CONFIG', 'GET', 'client-output-buffer-limit')) as [string, string];
    try {
      await hold(releaser, 'k');
      const burst = waiter.watch('semaphore', 'burst'); // the channel the burst floods
      await expect.poll(() => waiter.subscriptions().confirmed, POLL).toBe(true);

      await admin.call('CONFIG', 'SET', 'client-output-buffer-limit', 'pubsub 1 1 0');
      const payload = 'x'.repeat(64 * 1024);
      const channel = waiter.keys.semaphoreChannel('burst');
      while (!seen.some((t) => t.degraded)) {
        await admin.publish(channel, payload); // the server drops the subscriber once its buffer is over the limit
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await admin.call('CONFIG', 'SET', 'client-output-buffer-limit', limits);
      burst.close();
      await expect.poll(() => seen.map((t) => t.degraded), POLL).toEqual([true, false]);

      await expectReleaseWakes(waiter, releaser, 'k', admin);
    } finally {
      await admin.call('CONFIG', 'SET', 'client-output-buffer-limit', limits).catch(() => undefined);
      admin.disconnect();
      await waiter.close();
      await releaser.close();
    }
  }, 120_000);
});
