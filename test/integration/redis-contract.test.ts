/**
 * The Coordinator contract suite against the Redis coordinator on a throwaway redis-server,
 * with real time (the harness's `advance` sleeps).
 */
import { afterAll, beforeAll } from 'vitest';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { describeCoordinatorContract, realPause } from '../contract/coordinator-contract.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

let server: RedisServerHandle;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.dispose();
});

describeCoordinatorContract('redis', async () => {
  const backend = createRedisBackend({ url: server.url, prefix: `rxc${crypto.randomUUID().slice(0, 8)}` });
  return {
    coordinator: backend.coordinator,
    advance: (ms) => realPause(ms),
    close: () => backend.close(),
  };
});
