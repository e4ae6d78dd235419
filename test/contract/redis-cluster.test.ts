/**
 * The backend contract suites on a local 3-master Redis Cluster, the third backend next to memory
 * and a single server: the store, the coordinator, the job leases, the fan-out ledger, the
 * operator contract and the wait lists, all on one throwaway cluster (docs/decisions/090).
 */
import { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisWaitList } from '../../src/storage/redis/wait-list.js';
import type { RedisCoordinator } from '../../src/storage/redis/coordinator.js';
import {
  CLAIM_REPAIR_MS,
  CLUSTER_SLOT_GROUPS,
  createRedisBackend,
  type RedisBackendOptions,
  type RedisKeys,
} from '../../src/storage/redis/index.js';
import { useRedisCluster } from '../support/use-redis-cluster.js';
import { realPause, subscribed } from './coordinator-contract.js';
import { describeCoordinatorContract } from './coordinator-contract.js';
import { describeEventLogContract } from './event-log-contract.js';
import { describeEventWaitsContract } from './event-waits-contract.js';
import { describeFanOutLedgerContract } from './fanout-ledger-contract.js';
import { describeJobLeaseContract } from './job-lease-contract.js';
import { describeOpsContract } from './ops-contract.js';
import { describeStoreContract } from './store-contract.js';

const cluster = useRedisCluster();

/** A backend over the suite's cluster under a fresh prefix: each test sees empty state. */
function backendOnCluster(name: string, options: RedisBackendOptions = {}) {
  return createRedisBackend({
    cluster: { nodes: cluster.handle.nodes },
    prefix: `${name}-${crypto.randomUUID().slice(0, 8)}`,
    ...options,
  });
}

const maxRecordBytes = 4096;

describeStoreContract('redis cluster', async () => {
  const backend = backendOnCluster('st', { maxRecordBytes });
  return {
    store: backend.store,
    maxRecordBytes,
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    close: () => backend.close(),
  };
});

describeCoordinatorContract('redis cluster (server time)', async () => {
  const backend = backendOnCluster('ctr');
  return {
    coordinator: backend.coordinator,
    advance: (ms) => realPause(ms + 25),
    listening: () => subscribed(backend),
    close: () => backend.close(),
  };
});

describeJobLeaseContract('redis cluster (one script each way)', async () => {
  const backend = backendOnCluster('jl');
  return {
    leases: backend.jobLeases,
    store: backend.store,
    coordinator: backend.coordinator,
    close: () => backend.close(),
  };
});

describeFanOutLedgerContract('redis cluster', async () => {
  const backend = backendOnCluster('fo');
  return { ledger: backend.fanOut, close: () => backend.close() };
});

describeEventLogContract('redis cluster', async ({ ttlMs }) => {
  // Every key of the event log shares the hash tag {events}: each transition is one script on one slot.
  const prefix = `ev-${crypto.randomUUID().slice(0, 8)}`;
  const options = {
    cluster: { nodes: cluster.handle.nodes },
    prefix,
    ...(ttlMs === undefined ? {} : { recordTtlMs: ttlMs }),
  };
  const backend = createRedisBackend(options);
  const others: { close(): Promise<void> }[] = [];
  return {
    log: backend.events,
    second: async () => {
      const other = createRedisBackend(options);
      others.push(other);
      return other.events;
    },
    pass: (ms) => realPause(ms + 25),
    close: async () => {
      for (const other of others) await other.close();
      await backend.close();
    },
  };
});

describeEventWaitsContract('redis cluster', async () => {
  // Each (event, match key) has its own hash tag: its two keys share a slot, and keys spread over the masters.
  const options = { cluster: { nodes: cluster.handle.nodes }, prefix: `ew-${crypto.randomUUID().slice(0, 8)}` };
  const backend = createRedisBackend(options);
  const others: { close(): Promise<void> }[] = [];
  return {
    waits: backend.eventWaits,
    second: async () => {
      const other = createRedisBackend(options);
      others.push(other);
      return other.eventWaits;
    },
    pass: (ms) => realPause(ms + 25),
    close: async () => {
      for (const other of others) await other.close();
      await backend.close();
    },
  };
});

describeOpsContract('redis cluster (SCAN on every master, server time)', async () => {
  const backend = backendOnCluster('ops');
  return {
    coordinator: backend.coordinator as RedisCoordinator,
    store: backend.store,
    advance: (ms) => realPause(ms + 25),
    close: () => backend.close(),
  };
});

describe('wait lists on a redis cluster', () => {
  it('shift first come, first served, keep one entry per waiter, and remove', async () => {
    const redis = new Cluster([...cluster.handle.nodes]);
    try {
      const list = new RedisWaitList({ redis, prefix: `wl-${crypto.randomUUID().slice(0, 8)}` });
      for (const id of ['a:1', 'b:1', 'a:1', 'c:1']) await list.add('orders-1', id);
      await list.add('orders-2', 'z:1');
      expect(await list.list('orders-1')).toEqual(['a:1', 'b:1', 'c:1']);
      await list.remove('orders-1', 'b:1');
      expect(await list.shift('orders-1')).toBe('a:1');
      expect(await list.shift('orders-1')).toBe('c:1');
      expect(await list.shift('orders-1')).toBeUndefined();
      expect(await list.list('orders-2')).toEqual(['z:1']);
    } finally {
      await redis.quit();
    }
  });
});

describe('the cluster key layout (docs/decisions/090, 091)', () => {
  it("puts an execution's record, map parts, index entries, liveness lock and cancel marker in one slot", async () => {
    const backend = backendOnCluster('lay');
    try {
      const keys = (backend.store as unknown as { keys: RedisKeys }).keys;
      expect(keys.layout).toBe('cluster');
      const names = [
        keys.execution('e-1'),
        keys.executionMapPart('e-1', 'items'),
        ...keys.executionIndexesOf('e-1', 'checkout', 'running'),
        ...keys.executionTagIndexesOf('e-1', { orderId: '42', 'region.eu': 'fr{1}' }),
        ...keys.executionStatusIndexesBesides('e-1', 'running'),
        keys.lock('execution:e-1'),
        keys.lockFence('execution:e-1'),
        keys.lockChannel('execution:e-1'),
        keys.period('cancel:e-1', 'requested'),
      ];
      const slots = await Promise.all(names.map((name) => backend.redis.call('CLUSTER', 'KEYSLOT', name)));
      expect(new Set(slots).size).toBe(1);
      expect(keys.executionIndexShards({ status: 'running' })).toHaveLength(CLUSTER_SLOT_GROUPS);
      // A coordination key keeps its own slot, shared with its bookkeeping.
      const lock = await Promise.all(
        [keys.lock('orders-1'), keys.lockFence('orders-1'), keys.lockChannel('orders-1')].map((name) =>
          backend.redis.call('CLUSTER', 'KEYSLOT', name),
        ),
      );
      expect(new Set(lock).size).toBe(1);
    } finally {
      await backend.close();
    }
  });

  it('lists an execution liveness lock held in its slot group under its own key', async () => {
    const backend = backendOnCluster('insp');
    try {
      await backend.jobLeases.enterJob({
        lease: { key: 'execution:e-7', holder: { owner: 'w1', executionId: 'e-7' }, ttlMs: 30_000 },
        executionId: 'e-7',
        cancel: { key: 'cancel:e-7', bucket: 'requested' },
      });
      const held = await (backend.coordinator as RedisCoordinator).inspectKeys('lock', { pattern: 'execution:*' });
      expect(held.map((k) => k.key)).toEqual(['execution:e-7']);
    } finally {
      await backend.close();
    }
  });

  it('takes over an idempotency claim whose winner never wrote its record, once the claim is old enough', async () => {
    const recordTtlMs = 60_000;
    const backend = backendOnCluster('idem', { recordTtlMs });
    try {
      const keys = (backend.store as unknown as { keys: RedisKeys }).keys;
      // A winner that died between its claim and its record, CLAIM_REPAIR_MS + 1 s ago.
      await backend.redis.set(keys.idempotency('pay', 'k-1'), 'dead-1', 'PX', recordTtlMs - CLAIM_REPAIR_MS - 1000);
      // A fresh claim without a record (its winner is about to write it) is left alone.
      await backend.redis.set(keys.idempotency('pay', 'k-2'), 'live-1', 'PX', recordTtlMs - 100);
      expect(await backend.store.claimIdempotency('pay', 'k-1', 'new-1')).toEqual({ claimed: true });
      expect(await backend.store.claimIdempotency('pay', 'k-1', 'new-2')).toEqual({
        claimed: false,
        executionId: 'new-1',
      });
      expect(await backend.store.claimIdempotency('pay', 'k-2', 'new-3')).toEqual({
        claimed: false,
        executionId: 'live-1',
      });
    } finally {
      await backend.close();
    }
  });
});
