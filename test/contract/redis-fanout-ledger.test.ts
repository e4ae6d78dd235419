import { createRedisBackend } from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { describeFanOutLedgerContract } from './fanout-ledger-contract.js';

const server = useRedisServer();

describeFanOutLedgerContract('redis', async () => {
  // A fresh prefix per test: each test sees no ledger.
  const backend = createRedisBackend({ url: server.url, prefix: `fo-${crypto.randomUUID().slice(0, 8)}` });
  return { ledger: backend.fanOut, close: () => backend.close() };
});
