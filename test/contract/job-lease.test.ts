import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RECORD_VERSION, type ExecutionRecord } from '../../src/ports/store.js';
import { composeJobLeases } from '../../src/engine/jobs/job-lease.js';
import { MemoryCoordinator } from '../../src/storage/memory/coordinator.js';
import { MemoryStore } from '../../src/storage/memory/store.js';
import { PostgresCoordinator } from '../../src/storage/postgres/coordinator.js';
import { PostgresJobLeases } from '../../src/storage/postgres/job-leases.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { describeJobLeaseContract } from './job-lease-contract.js';

const server = useRedisServer();
const postgres = usePostgresServer();

/** A store, its job leases and a coordinator over one pool, in a fresh schema (migrated by the store). */
async function postgresHarness(): Promise<{ store: PostgresStore; coordinator: PostgresCoordinator }> {
  const store = new PostgresStore({
    connection: postgres.url,
    schema: `jl_${crypto.randomUUID().slice(0, 8)}`,
    migrate: true,
  });
  await store.ready();
  return { store, coordinator: new PostgresCoordinator({ connection: store.pool, schema: store.names.schema }) };
}

describeJobLeaseContract('memory (composed)', async () => {
  const store = new MemoryStore();
  const coordinator = new MemoryCoordinator();
  return { leases: composeJobLeases(store, coordinator), store, coordinator, close: async () => undefined };
});

describeJobLeaseContract('redis (one script each way)', async () => {
  const backend = createRedisBackend({ url: server.url, prefix: `jl-${crypto.randomUUID().slice(0, 8)}` });
  return {
    leases: backend.jobLeases,
    store: backend.store,
    coordinator: backend.coordinator,
    close: () => backend.close(),
  };
});

describeJobLeaseContract('redis (composed)', async () => {
  const backend = createRedisBackend({ url: server.url, prefix: `jc-${crypto.randomUUID().slice(0, 8)}` });
  return {
    leases: composeJobLeases(backend.store, backend.coordinator),
    store: backend.store,
    coordinator: backend.coordinator,
    close: () => backend.close(),
  };
});

describeJobLeaseContract('postgres (one function each way)', async () => {
  const { store, coordinator } = await postgresHarness();
  return {
    leases: new PostgresJobLeases(store),
    store,
    coordinator,
    close: async () => {
      await coordinator.close();
      await store.close();
    },
  };
});

describeJobLeaseContract('postgres (composed)', async () => {
  const { store, coordinator } = await postgresHarness();
  return {
    leases: composeJobLeases(store, coordinator),
    store,
    coordinator,
    close: async () => {
      await coordinator.close();
      await store.close();
    },
  };
});

describe('JobLeases on Redis: the release in job-leave', () => {
  it('publishes on the lock channel once the key is free, as lock-release does', async () => {
    const backend = createRedisBackend({ url: server.url, prefix: `jp-${crypto.randomUUID().slice(0, 8)}` });
    const listener = new Redis(server.url);
    try {
      const keys = (backend.coordinator as unknown as { keys: { lockChannel(key: string): string } }).keys;
      await listener.subscribe(keys.lockChannel('execution:e1'));
      const message = new Promise<string>((resolve) =>
        listener.once('message', (_channel: string, body: string) => resolve(body)),
      );
      await backend.jobLeases.enterJob({
        lease: { key: 'execution:e1', holder: { owner: 'w1', executionId: 'e1' }, ttlMs: 30_000 },
        executionId: 'e1',
        cancel: { key: 'cancel:e1', bucket: 'requested' },
      });
      await backend.jobLeases.saveAndRelease(
        {
          v: RECORD_VERSION,
          id: 'e1',
          rootId: 'e1',
          reactor: 'R',
          status: 'completed',
          input: {},
          steps: {},
          rollbackFailures: [],
          createdAt: 1,
          updatedAt: 2,
        },
        'execution:e1',
        'w1',
      );
      expect(await message).toBe('released');
    } finally {
      listener.disconnect();
      await backend.close();
    }
  });
});

describe('JobLeases on Postgres: what the functions carry besides the contract', () => {
  const record = (status: 'running' | 'completed'): ExecutionRecord => ({
    v: RECORD_VERSION,
    id: 'e1',
    rootId: 'e1',
    reactor: 'R',
    status,
    input: {},
    steps: {},
    rollbackFailures: [],
    createdAt: 1,
    updatedAt: 2,
  });
  const enter = (owner: string) => ({
    lease: { key: 'execution:e1', holder: { owner, executionId: 'e1' }, ttlMs: 30_000 },
    executionId: 'e1',
    cancel: { key: 'cancel:e1', bucket: 'requested' },
  });

  it("saveFenced writes a large map's element states beside the record; enterJob reads them back", async () => {
    const { store, coordinator } = await postgresHarness();
    const leases = new PostgresJobLeases(store);
    try {
      await leases.enterJob(enter('w1'));
      const states = { v: 1 as const, rev: 3, size: 2, status: 'cC', results: [7, null] };
      await leases.saveFenced({ ...record('running'), mapStates: { 'steps.m': states } }, 'execution:e1', 'w1');
      await leases.saveAndRelease({ ...record('running'), mapStates: { 'steps.m': states } }, 'execution:e1', 'w1');
      const next = await leases.enterJob(enter('w2'));
      expect(next.acquired && next.record?.mapStates).toEqual({ 'steps.m': states });
      expect(next.acquired && next.record?.mapParts).toEqual(['steps.m']);
    } finally {
      await coordinator.close();
      await store.close();
    }
  });

  it("saveAndRelease wakes the lock's waiters in other processes, as lockRelease does", async () => {
    const { store, coordinator } = await postgresHarness();
    const leases = new PostgresJobLeases(store);
    try {
      await coordinator.listening();
      await leases.enterJob(enter('w1'));
      const woken = coordinator.waitForChange('lock', 'execution:e1', 60_000);
      await leases.saveAndRelease(record('completed'), 'execution:e1', 'w1');
      await woken; // a NOTIFY, not the minute's timeout
      expect(await coordinator.lockState('execution:e1')).toBeUndefined();
    } finally {
      await coordinator.close();
      await store.close();
    }
  });
});
