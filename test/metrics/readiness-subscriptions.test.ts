/**
 * Readiness and the pub/sub subscriptions, against a throwaway redis-server: a backend reports
 * its wake-up and cancel subscriptions unconfirmed from the subscriber's loss until each is
 * answered again; `ts-reactor worker --metrics-port`'s /readyz answers 503 with the reason
 * meanwhile (held there by refusing SUBSCRIBE to the reconnected subscriber, until it is allowed
 * again and the refused subscriptions, sent again, are answered), while Redis is
 * paused or frozen and while it is down, and 200 once everything is back.
 */
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import { runWorkerCommand } from '../../src/cli/worker.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { greet } from '../cli/fixtures/worker-reactors.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { offered } from '../support/fast-paths.js';

const server = useRedisServer();
const fixture = fileURLToPath(new URL('../cli/fixtures/worker-reactors.ts', import.meta.url));
const POLL = { timeout: 20_000, interval: 50 };

interface Ready {
  readonly status: number;
  readonly body: { ready: boolean; checks: { name: string; ok: boolean; detail?: string }[] };
}

async function readyz(base: string): Promise<Ready> {
  const response = await fetch(`${base}/readyz`);
  return { status: response.status, body: (await response.json()) as Ready['body'] };
}

const check = (ready: Ready, name: string) => ready.body.checks.find((c) => c.name === name);

/** The ids of the clients subscribed to something. */
async function pubsubClients(admin: Redis): Promise<string[]> {
  const list = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
  return [...list.matchAll(/^id=(\d+)/gm)].map((m) => m[1]!);
}

/** Refuses SUBSCRIBE to every connection of the default user (the command connections keep working). */
const refuseSubscribe = (admin: Redis) => admin.call('ACL', 'SETUSER', 'default', '-subscribe');
const allowSubscribe = (admin: Redis) => admin.call('ACL', 'SETUSER', 'default', '+subscribe');
const killSubscribers = (admin: Redis) => admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');

describe('subscription health', () => {
  test('a backend reports its subscriptions unconfirmed after the subscriber is killed, until they are answered again', async () => {
    const backend = createRedisBackend({ url: server.url, prefix: `sh-${Math.random().toString(36).slice(2, 8)}` });
    const admin = new Redis(server.url);
    try {
      expect(backend.subscriptions()).toEqual({ confirmed: true, channels: 0, unconfirmed: 0 });
      const stopCancels = offered(backend.coordinator, 'cancels').onCancelAnnounced(() => undefined);
      const watch = offered(backend.coordinator, 'watches').watch('semaphore', 'seats');
      await expect.poll(() => backend.subscriptions(), POLL).toEqual({ confirmed: true, channels: 2, unconfirmed: 0 });
      await expect.poll(() => pubsubClients(admin), POLL).toHaveLength(2);

      await refuseSubscribe(admin);
      await killSubscribers(admin);
      await expect
        .poll(() => backend.subscriptions().detail ?? '', POLL)
        .toMatch(
          /1 of 1 wake-up subscription\(s\) not confirmed since the subscriber reconnected \(SUBSCRIBE failed: NOPERM/,
        );
      await expect
        .poll(() => backend.subscriptions().detail ?? '', POLL)
        .toMatch(/1 of 1 cancel subscription\(s\) not confirmed/);
      expect(backend.subscriptions()).toMatchObject({ confirmed: false, channels: 2, unconfirmed: 2 });

      await allowSubscribe(admin); // the refused subscriptions are sent again, now answered
      await expect.poll(() => backend.subscriptions(), POLL).toEqual({ confirmed: true, channels: 2, unconfirmed: 0 });

      watch.close();
      stopCancels();
      expect(backend.subscriptions()).toEqual({ confirmed: true, channels: 0, unconfirmed: 0 });
    } finally {
      await allowSubscribe(admin);
      admin.disconnect();
      await backend.close();
    }
  }, 120_000);
});

describe('ts-reactor worker --metrics-port: /readyz and the subscriptions', () => {
  test('503 with the reason while the subscriptions are not confirmed again, or Redis is paused, frozen or down; 200 once back', async () => {
    const prefix = `rs-${Math.random().toString(36).slice(2, 8)}`;
    const out: string[] = [];
    const stop = new AbortController();
    const running = runWorkerCommand(
      ['--redis', server.url, '--module', fixture, '--prefix', prefix, '--metrics-port', '0'],
      { out: (l) => void out.push(l), err: () => undefined },
      { env: {}, signals: [], stop: stop.signal },
    );
    await expect.poll(() => out.find((l) => l.includes('metrics on ')), { timeout: 20_000 }).toBeDefined();
    const base = /metrics on (http:\/\/[^/]+)\/metrics/.exec(out.find((l) => l.includes('metrics on '))!)![1]!;
    let admin = new Redis(server.url);
    const producer = createRedisRuntime({ url: server.url, prefix, reactors: [greet] });
    try {
      // The worker's first run makes it listen to cancel announcements.
      const { executionId } = await producer.engine.start(greet, { name: 'a' });
      expect((await producer.engine.wait(executionId, { timeoutMs: 15_000 })).status).toBe('completed');
      await expect.poll(() => pubsubClients(admin), POLL).toHaveLength(1);
      await expect.poll(async () => (await readyz(base)).status, POLL).toBe(200);
      expect((await readyz(base)).body).toEqual({
        ready: true,
        checks: [
          { name: 'redis', ok: true },
          { name: 'subscriptions', ok: true },
          { name: 'worker', ok: true },
        ],
      });

      // The subscriber reconnects but its SUBSCRIBE is refused: connected, not confirmed.
      await refuseSubscribe(admin);
      const [before] = await pubsubClients(admin);
      await killSubscribers(admin);
      await expect.poll(async () => check(await readyz(base), 'subscriptions')?.detail ?? '', POLL).toMatch(/NOPERM/);
      const refused = await readyz(base);
      expect(refused.status).toBe(503);
      expect(refused.body.ready).toBe(false);
      expect(check(refused, 'redis')).toEqual({ name: 'redis', ok: true });
      expect(check(refused, 'subscriptions')).toMatchObject({
        ok: false,
        detail: expect.stringContaining('1 of 1 cancel subscription(s) not confirmed since the subscriber reconnected'),
      });
      await allowSubscribe(admin); // sent again, now answered
      await expect.poll(async () => (await readyz(base)).status, POLL).toBe(200);
      const [after] = await pubsubClients(admin);
      expect(after).not.toBe(before); // a new connection, subscribed and confirmed

      // Paused (for 6 s: an UNPAUSE would wait behind the pause too): PING is not answered in time.
      await admin.call('CLIENT', 'PAUSE', '6000', 'ALL');
      await expect.poll(async () => (await readyz(base)).status, POLL).toBe(503);
      expect(check(await readyz(base), 'redis')).toMatchObject({
        ok: false,
        detail: expect.stringContaining('PING'),
      });
      await expect.poll(async () => (await readyz(base)).status, POLL).toBe(200);

      // Frozen (SIGSTOP): the same.
      server.handle.pause();
      try {
        await expect.poll(async () => (await readyz(base)).status, POLL).toBe(503);
      } finally {
        server.handle.resume();
      }
      await expect.poll(async () => (await readyz(base)).status, POLL).toBe(200);

      // Down: the subscriber is disconnected; once the server is back, it reconnects and confirms.
      admin.disconnect();
      await server.handle.stop();
      await expect
        .poll(async () => check(await readyz(base), 'subscriptions')?.detail ?? '', POLL)
        .toMatch(/the cancel subscriber connection is (connecting|reconnecting|close|end)/);
      expect((await readyz(base)).status).toBe(503);
      await server.handle.restart();
      admin = new Redis(server.url);
      await expect.poll(async () => (await readyz(base)).status, POLL).toBe(200);
      expect(check(await readyz(base), 'subscriptions')).toEqual({ name: 'subscriptions', ok: true });
      await expect.poll(() => pubsubClients(admin), POLL).toHaveLength(1);
    } finally {
      await allowSubscribe(admin).catch(() => undefined);
      admin.disconnect();
      await producer.close();
      stop.abort();
    }
    expect(await running).toBe(0);
  }, 180_000);
});
