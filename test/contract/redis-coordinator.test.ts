import { createRedisBackend } from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { describeCoordinatorContract, realPause, subscribed } from './coordinator-contract.js';

const server = useRedisServer();

describeCoordinatorContract('redis (server time)', async () => {
  const backend = createRedisBackend({ url: server.url, prefix: `ctr-${crypto.randomUUID().slice(0, 8)}` });
  return {
    coordinator: backend.coordinator,
    // Real time: sleep a little longer than asked so a deadline is surely behind us.
    advance: (ms) => realPause(ms + 25),
    listening: () => subscribed(backend),
    close: () => backend.close(),
  };
});
