import { afterAll, beforeAll } from 'vitest';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { describeFanOutLedgerContract } from './fanout-ledger-contract.js';

let server: RedisServerHandle;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.dispose();
});

describeFanOutLedgerContract('redis', async () => {
  // A fresh prefix per test: each test sees no ledger.
  const backend = createRedisBackend({ url: server.url, prefix: `fo-${crypto.randomUUID().slice(0, 8)}` });
  return { ledger: backend.fanOut, close: () => backend.close() };
});
