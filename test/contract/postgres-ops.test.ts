import { MemoryCoordinator } from '../../src/storage/memory/coordinator.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { realPause } from './coordinator-contract.js';
import { describeOpsContract } from './ops-contract.js';

const server = usePostgresServer();

// The store's part of the contract (time ranges, search) on PostgreSQL; the inspector's part on
// the memory coordinator, on the real clock, until a PostgreSQL coordinator takes its place.
describeOpsContract('postgres store (database time)', async () => {
  const store = new PostgresStore({
    connection: server.url,
    schema: `ops_${crypto.randomUUID().slice(0, 8)}`,
    migrate: true,
  });
  await store.ready();
  const coordinator = new MemoryCoordinator();
  return {
    coordinator,
    store,
    advance: (ms) => realPause(ms + 25),
    close: async () => {
      await coordinator.close();
      await store.close();
    },
  };
});
