import { afterAll, beforeAll } from 'vitest';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { describeStoreContract } from './store-contract.js';

let server: RedisServerHandle;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.dispose();
});

const maxRecordBytes = 4096;

describeStoreContract('redis', async () => {
  // A fresh prefix per test: each test sees an empty store.
  const backend = createRedisBackend({
    url: server.url,
    prefix: `st-${crypto.randomUUID().slice(0, 8)}`,
    maxRecordBytes,
  });
  // Expiry is the server's own (PX): time really passes.
  return {
    store: backend.store,
    maxRecordBytes,
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    close: () => backend.close(),
  };
});
