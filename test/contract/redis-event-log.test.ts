import { createRedisBackend } from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { describeEventLogContract } from './event-log-contract.js';

const server = useRedisServer();

describeEventLogContract('redis', async ({ ttlMs }) => {
  // A fresh prefix per test: each test sees no event. `second` is another connection on it.
  const prefix = `ev-${crypto.randomUUID().slice(0, 8)}`;
  const options = { url: server.url, prefix, ...(ttlMs === undefined ? {} : { recordTtlMs: ttlMs }) };
  const backend = createRedisBackend(options);
  const others: { close(): Promise<void> }[] = [];
  return {
    log: backend.events,
    second: async () => {
      const other = createRedisBackend(options);
      others.push(other);
      return other.events;
    },
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + 20)),
    close: async () => {
      for (const other of others) await other.close();
      await backend.close();
    },
  };
});
