import { PostgresEventLog } from '../../src/storage/postgres/event-log.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { describeEventLogContract } from './event-log-contract.js';

const server = usePostgresServer();

describeEventLogContract('postgres', async ({ ttlMs }) => {
  // A fresh schema per test (migrated by the store): each test sees no event. `second` is a pool of its own on it.
  const schema = `ev_${crypto.randomUUID().slice(0, 8)}`;
  const options = { connection: server.url, schema, ...(ttlMs === undefined ? {} : { recordTtlMs: ttlMs }) };
  const store = new PostgresStore({ ...options, migrate: true });
  await store.ready();
  const others: PostgresStore[] = [];
  return {
    log: new PostgresEventLog({ store }),
    second: async () => {
      const other = new PostgresStore(options);
      others.push(other);
      await other.ready();
      return new PostgresEventLog({ store: other });
    },
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + 20)),
    close: async () => {
      for (const other of others) await other.close();
      await store.close();
    },
  };
});
