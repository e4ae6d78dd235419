import { PostgresEventWaits } from '../../src/storage/postgres/event-waits.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { describeEventWaitsContract } from './event-waits-contract.js';

const server = usePostgresServer();

describeEventWaitsContract('postgres', async () => {
  // A fresh schema per test (migrated by the store): each test sees no registration. `second` is a pool of its own on it.
  const schema = `ew_${crypto.randomUUID().slice(0, 8)}`;
  const options = { connection: server.url, schema };
  const store = new PostgresStore({ ...options, migrate: true });
  await store.ready();
  const others: PostgresStore[] = [];
  return {
    waits: new PostgresEventWaits({ store }),
    second: async () => {
      const other = new PostgresStore(options);
      others.push(other);
      await other.ready();
      return new PostgresEventWaits({ store: other });
    },
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + 20)),
    close: async () => {
      for (const other of others) await other.close();
      await store.close();
    },
  };
});
