/**
 * The Redis execution stream appends with one `stream-append` script (docs/decisions/158): one
 * call for every execution of a batch on one server, one per execution on a cluster (their
 * streams are on different slots). Each stream keeps its events in order, expires with the
 * records' TTL, and a malformed call is refused whole.
 */
import { Cluster, Redis } from 'ioredis';
import { afterEach, describe, expect, test } from 'vitest';
import type { ReactorEvent } from '../../src/index.js';
import { RedisExecutionStream } from '../../src/storage/redis/execution-stream.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import { runScript } from '../../src/storage/redis/script.js';
import { scripts } from '../../src/storage/redis/scripts.js';
import { useRedisCluster } from '../support/use-redis-cluster.js';
import { useRedisServer } from '../support/use-redis-server.js';

function event(executionId: string, n: number): ReactorEvent {
  return {
    type: 'run.resumed',
    executionId,
    rootExecutionId: executionId,
    reactor: 'r',
    at: n,
  } as unknown as ReactorEvent;
}

const TTL_MS = 60_000;
const connections: (Redis | Cluster)[] = [];
afterEach(() => {
  for (const c of connections.splice(0)) c.disconnect();
});

async function appendAndRead(redis: Redis | Cluster, keys: RedisKeys): Promise<void> {
  const stream = new RedisExecutionStream({ redis, keys, ttlMs: TTL_MS });
  const ids = ['e1', 'e2', 'e3', 'e4'];
  await stream.append(
    ids.map((id, i) => ({ executionId: id, events: [0, 1, 2].slice(0, i + 1).map((n) => event(id, n)) })),
  );
  await stream.append([{ executionId: 'e1', events: [event('e1', 9)] }]);
  for (const [i, id] of ids.entries()) {
    const entries = await stream.read(id, undefined, { blockMs: 0, limit: 10 });
    const expected = [0, 1, 2].slice(0, i + 1);
    if (id === 'e1') expected.push(9);
    expect(entries.map((e) => e.event.at)).toEqual(expected);
    const ttl = await redis.pttl(keys.executionStream(id));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(TTL_MS);
  }
  await stream.close();
}

describe('one server', () => {
  const server = useRedisServer();

  test('one append writes every execution of the batch, in order, with the TTL', async () => {
    const redis = new Redis(server.url);
    connections.push(redis);
    await appendAndRead(redis, new RedisKeys('st'));
  });

  test('a call whose counts do not match its events is refused and appends nothing', async () => {
    const redis = new Redis(server.url);
    connections.push(redis);
    const keys = new RedisKeys('bad');
    const a = keys.executionStream('a');
    const b = keys.executionStream('b');
    await expect(runScript(redis, scripts.streamAppend, [a, b], [100, TTL_MS, 1, '{}', 2, '{}'])).rejects.toMatchObject(
      {
        code: 'script_failed',
        details: { script: 'stream-append', reason: 'RX_ARG' },
      },
    );
    await expect(runScript(redis, scripts.streamAppend, [a], [100, 0, 1, '{}'])).rejects.toMatchObject({
      code: 'script_failed',
      details: { script: 'stream-append', reason: 'RX_ARG' },
    });
    expect(await redis.exists(a, b)).toBe(0);
  });
});

describe('a cluster', () => {
  const cluster = useRedisCluster();

  test('executions on different slots are appended one call each', async () => {
    const redis = new Cluster([...cluster.handle.nodes]);
    connections.push(redis);
    await appendAndRead(redis, new RedisKeys('stc', 'cluster'));
  });
});
