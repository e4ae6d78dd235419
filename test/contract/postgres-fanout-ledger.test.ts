import { PostgresFanOutLedger } from '../../src/storage/postgres/fanout.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { describeFanOutLedgerContract } from './fanout-ledger-contract.js';

const server = usePostgresServer();

describeFanOutLedgerContract('postgres', async () => {
  // A fresh schema per test (migrated by the store): each test sees no ledger.
  const store = new PostgresStore({
    connection: server.url,
    schema: `fo_${crypto.randomUUID().slice(0, 8)}`,
    migrate: true,
  });
  await store.ready();
  return { ledger: new PostgresFanOutLedger({ store }), close: () => store.close() };
});
