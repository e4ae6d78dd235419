import { createRedisBackend } from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { describeEventWaitsContract } from './event-waits-contract.js';

const server = useRedisServer();

describeEventWaitsContract('redis', async () => {
  // A fresh prefix per test: each test sees no registration. `second` is another connection on it.
  const prefix = `ew-${crypto.randomUUID().slice(0, 8)}`;
  const backend = createRedisBackend({ url: server.url, prefix });
  const others: { close(): Promise<void> }[] = [];
  return {
    waits: backend.eventWaits,
    second: async () => {
      const other = createRedisBackend({ url: server.url, prefix });
      others.push(other);
      return other.eventWaits;
    },
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + 20)),
    close: async () => {
      for (const other of others) await other.close();
      await backend.close();
    },
  };
});
