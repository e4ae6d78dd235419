import { PostgresStore } from '../../src/storage/postgres/store.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { describeStoreContract } from './store-contract.js';

const server = usePostgresServer();
const maxRecordBytes = 4096;

describeStoreContract('postgres', async () => {
  // A fresh schema per test (migrated by the store): each test sees an empty store.
  const store = new PostgresStore({
    connection: server.url,
    schema: `st_${crypto.randomUUID().slice(0, 8)}`,
    migrate: true,
    maxRecordBytes,
  });
  await store.ready();
  // Expiry is the database's clock: time really passes.
  return {
    store,
    maxRecordBytes,
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    close: () => store.close(),
  };
});
