/**
 * `keySlot` computes a name's Redis Cluster slot as the server does: CRC16 (XMODEM) of the hash tag
 * when there is a non-empty one, else of the whole name, modulo 16,384. Checked against a real
 * cluster's `CLUSTER KEYSLOT` for names with and without tags, empty and unclosed braces, and
 * non-ASCII text.
 */
import { Cluster } from 'ioredis';
import { afterAll, expect, test } from 'vitest';
import { keySlot } from '../../src/storage/redis/key-slot.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import { useRedisCluster } from '../support/use-redis-cluster.js';

const cluster = useRedisCluster();
let connection: Cluster | undefined;
afterAll(() => connection?.disconnect());

test('the CRC16 check value: "123456789" is slot 12739 (0x31C3)', () => {
  expect(keySlot('123456789')).toBe(0x31c3);
});

test('every name gets the slot CLUSTER KEYSLOT gives, and a channel the slot of its key', async () => {
  connection = new Cluster(cluster.handle.nodes.map((n) => ({ host: n.host, port: n.port })));
  const keys = new RedisKeys('slots', 'cluster');
  const names = [
    'a',
    '{user1000}.following',
    '{user1000}.followers',
    'x{}y',
    '{}{a}',
    'abc{',
    '{a}b{c}',
    'é日本',
    keys.lockChannel('k1'),
    keys.semaphoreChannel('k2'),
    ...Array.from({ length: 50 }, (_, i) => `k${i}:{t${i % 7}}`),
  ];
  for (const name of names) expect(keySlot(name), name).toBe(Number(await connection.call('CLUSTER', 'KEYSLOT', name)));
  expect(keySlot(keys.lockChannel('k1'))).toBe(keySlot(keys.lock('k1')));
  expect(keySlot(keys.semaphoreChannel('k2'))).toBe(keySlot(keys.semaphore('k2')));
});
