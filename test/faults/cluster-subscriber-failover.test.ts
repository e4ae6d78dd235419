/**
 * The subscriber connections of a backend on a Redis Cluster (3 masters, a replica each) follow
 * the topology (docs/decisions/113, 132): the cancel subscriber starts on the first-listed node,
 * a lock's wake-up channel on the master that serves the lock's key (here chosen to be the same
 * node); when that master is SIGKILLed, they come back on live nodes, their subscriptions are
 * confirmed again, and a release and a cancel announcement published after the replica's
 * promotion reach the process by notification (the waits end long before their own timeouts,
 * which are far beyond the test's). Then every wake-up channel is subscribed on the master that
 * serves its key, the promoted replica included.
 */
import { Redis } from 'ioredis';
import { afterEach, expect, test } from 'vitest';
import { createRedisBackend, type RedisBackend, type RedisConnection } from '../../src/storage/redis/index.js';
import type { RedisClusterHandle } from '../support/redis-cluster.js';
import { useRedisCluster } from '../support/use-redis-cluster.js';
import { offered } from '../support/fast-paths.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';

const cluster = useRedisCluster({ replicasPerMaster: 1 });
const opened: RedisBackend<RedisConnection>[] = [];
/** How long the subscriptions and notifications may take after the promotion, on a loaded machine. */
const DEADLINE_MS = 60_000;
/** A wait's own timeout: far beyond the test's deadline, so a wait that ends was woken. */
const WAIT_MS = 600_000;

afterEach(async () => {
  await Promise.all(opened.splice(0).map((b) => b.close().catch(() => undefined)));
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => boolean | Promise<boolean>, deadlineMs = DEADLINE_MS): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} within ${deadlineMs} ms`);
    await sleep(50);
  }
}

function backend(handle: RedisClusterHandle): RedisBackend<RedisConnection> {
  const created = createRedisBackend({ cluster: { nodes: handle.nodes }, prefix: 'subfo' });
  opened.push(created);
  return created;
}

/** Pub/sub clients connected to the node on `port` now (`CLIENT LIST TYPE pubsub`). */
async function subscribersOn(port: number): Promise<number> {
  const node = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
  try {
    await node.connect();
    const list = (await node.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
    return list.split('\n').filter((line) => line.trim() !== '').length;
  } catch {
    return 0;
  } finally {
    node.disconnect();
  }
}

/** The pub/sub channels with a subscriber connected to the node on `port` (`PUBSUB CHANNELS`). */
async function channelsOn(port: number): Promise<string[]> {
  const node = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
  try {
    await node.connect();
    return (await node.call('PUBSUB', 'CHANNELS', '*')) as string[];
  } catch {
    return [];
  } finally {
    node.disconnect();
  }
}

const keys = new RedisKeys('subfo', 'cluster');

/** A lock key named from `stem` whose lock (and wake-up channel) the master on `port` serves. */
async function keyServedBy(handle: RedisClusterHandle, port: number, stem: string): Promise<string> {
  for (let i = 0; ; i++) if ((await handle.masterOf(keys.lock(`${stem}-${i}`))) === port) return `${stem}-${i}`;
}

/** Whether `promise` settled by now. */
function settledFlag(promise: Promise<unknown>): () => boolean {
  let settled = false;
  void promise.finally(() => (settled = true));
  return () => settled;
}

test('after the first-listed master is killed, the subscribers move to a live node: confirmed again, wake-ups and cancels heard', async () => {
  const handle = cluster.handle;
  const first = handle.nodes[0]!.port;
  expect(await handle.masters()).toContain(first);
  const [replica] = await handle.replicasOf(first);
  const listener = backend(handle);
  const publisher = backend(handle);

  // Subscribed on both subscribers: a lock's wake-ups, and cancel announcements.
  const announced: string[] = [];
  offered(listener.coordinator, 'cancels').onCancelAnnounced((id) => announced.push(id));
  const beforeKey = await keyServedBy(handle, first, 'subfo-before');
  const before = offered(listener.coordinator, 'changes').waitForChange('lock', beforeKey, WAIT_MS);
  await until('the subscriptions were not confirmed at first', () => {
    const health = listener.subscriptions();
    return health.confirmed && health.channels === 2;
  });
  // They listen on the first-listed node, the one about to be killed: the wake-up channel there as its key's master.
  expect(await subscribersOn(first)).toBeGreaterThanOrEqual(2);
  expect(await channelsOn(first)).toContain(keys.lockChannel(beforeKey));

  await handle.kill(first);
  await handle.waitForMaster(replica!);

  await until(
    'the subscriptions were not confirmed again after the promotion',
    () => listener.subscriptions().confirmed,
  );
  expect(listener.subscriptions()).toMatchObject({ confirmed: true, channels: 2, unconfirmed: 0 });
  let elsewhere = 0;
  for (const port of handle.ports.filter((p) => p !== first)) elsewhere += await subscribersOn(port);
  expect(elsewhere).toBeGreaterThanOrEqual(2);

  // A release published after the promotion wakes the waiter that was registered before the kill …
  const beforeWoken = settledFlag(before);
  const owner = { owner: 'subfo-holder' };
  expect((await publisher.coordinator.lockAcquire({ key: beforeKey, holder: owner, ttlMs: 10_000 })).acquired).toBe(
    true,
  );
  await publisher.coordinator.lockRelease(beforeKey, 'subfo-holder');
  await until('the release after the promotion did not wake the earlier waiter', beforeWoken);

  // … and one registered after it.
  const after = offered(listener.coordinator, 'changes').waitForChange('lock', 'subfo-after', WAIT_MS);
  await until('the new subscription was not confirmed', () => {
    const health = listener.subscriptions();
    return health.confirmed && health.channels === 2;
  });
  const afterWoken = settledFlag(after);
  expect((await publisher.coordinator.lockAcquire({ key: 'subfo-after', holder: owner, ttlMs: 10_000 })).acquired).toBe(
    true,
  );
  await publisher.coordinator.lockRelease('subfo-after', 'subfo-holder');
  await until('a release after the promotion did not wake its waiter', afterWoken);

  // A cancel announced after the promotion reaches the listening process.
  await offered(publisher.coordinator, 'cancels').announceCancel('subfo-execution');
  await until('the cancel announcement was not heard', () => announced.includes('subfo-execution'));

  // Wake-up channels of keys on every master, the promoted replica included, each on its key's master.
  const masters = await handle.masters();
  expect(masters).toContain(replica);
  const waits = [];
  const channels = new Map<number, string>();
  for (const port of masters) {
    const key = await keyServedBy(handle, port, `subfo-on-${port}`);
    channels.set(port, keys.lockChannel(key));
    waits.push(offered(listener.coordinator, 'changes').waitForChange('lock', key, WAIT_MS));
  }
  await until("each wake-up channel was not subscribed on its key's master", async () => {
    for (const [port, channel] of channels)
      if (!(await channelsOn(port)).includes(channel)) {
        return false;
      }
    return true;
  });
}, 150_000);
