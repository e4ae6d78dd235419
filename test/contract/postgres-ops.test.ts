import { PostgresCoordinator } from '../../src/storage/postgres/coordinator.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { realPause } from './coordinator-contract.js';
import { describeOpsContract } from './ops-contract.js';

const server = usePostgresServer();

// The store's part of the contract (time ranges, search) and the inspector's part, both on
// PostgreSQL (database time), the coordinator sharing the store's pool and schema.
describeOpsContract('postgres (database time)', async () => {
  const schema = `ops_${crypto.randomUUID().slice(0, 8)}`;
  const store = new PostgresStore({ connection: server.url, schema, migrate: true });
  await store.ready();
  const coordinator = new PostgresCoordinator({ connection: store.pool, schema });
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
