/**
 * Which node a cluster's subscriber connects to (docs/decisions/113): the first candidate never
 * lost, then the one lost longest ago; the candidates are the startup nodes (in any form ioredis
 * takes) and then the nodes the cluster connection knows, each once.
 */
import { Cluster } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { subscriberCandidates } from '../../src/storage/redis/connection.js';
import { NodeChoice } from '../../src/storage/redis/node-choice.js';

const a = { host: '10.0.0.1', port: 7000 };
const b = { host: '10.0.0.2', port: 7000 };
const c = { host: '10.0.0.3', port: 7000 };

describe('NodeChoice', () => {
  test('takes the first candidate while none was lost', () => {
    expect(new NodeChoice().next([a, b, c])).toEqual(a);
  });

  test('a lost node goes behind every node never lost', () => {
    const choice = new NodeChoice();
    choice.lost(a);
    expect(choice.next([a, b, c])).toEqual(b);
    choice.lost(b);
    expect(choice.next([a, b, c])).toEqual(c);
  });

  test('once every node was lost, the one lost longest ago comes first', () => {
    const choice = new NodeChoice();
    choice.lost(b);
    choice.lost(a);
    choice.lost(c);
    expect(choice.next([a, b, c])).toEqual(b);
    choice.lost(b);
    expect(choice.next([a, b, c])).toEqual(a);
  });

  test('a lost node is still taken when it is the only candidate; no candidate gives undefined', () => {
    const choice = new NodeChoice();
    choice.lost(a);
    expect(choice.next([a])).toEqual(a);
    expect(choice.next([c])).toEqual(c);
    expect(choice.next([])).toBeUndefined();
  });
});

describe('subscriberCandidates', () => {
  test('the startup nodes in every form ioredis takes, in order, each once', async () => {
    const cluster = new Cluster(
      [
        { host: '10.0.0.1', port: 7000 },
        '10.0.0.2:7000',
        'redis://10.0.0.3:7001',
        7002,
        '10.0.0.1:7000',
        { host: 'redis.internal' },
      ],
      { lazyConnect: true },
    );
    try {
      expect(subscriberCandidates(cluster)).toEqual([
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7000 },
        { host: '10.0.0.3', port: 7001 },
        { host: 'localhost', port: 7002 },
        { host: 'redis.internal', port: 6379 },
      ]);
    } finally {
      cluster.disconnect();
    }
  });
});
