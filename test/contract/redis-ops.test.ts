import type { RedisCoordinator } from '../../src/storage/redis/coordinator.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { realPause } from './coordinator-contract.js';
import { describeOpsContract } from './ops-contract.js';

const server = useRedisServer();

describeOpsContract('redis (SCAN, server time)', async () => {
  const backend = createRedisBackend({ url: server.url, prefix: `ops-${crypto.randomUUID().slice(0, 8)}` });
  return {
    coordinator: backend.coordinator as RedisCoordinator,
    store: backend.store,
    advance: (ms) => realPause(ms + 25),
    close: () => backend.close(),
  };
});
