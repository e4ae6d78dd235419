/** One throwaway `redis-server` for the tests of a file (or of a `describe`): ./use-server.ts. */
import { startRedisServer, type RedisServerHandle, type RedisServerOptions } from './redis-server.js';
import { useServer, type SuiteServer } from './use-server.js';

/** The server of the enclosing suite; its fields are available once the suite's tests run. */
export type SuiteRedisServer = SuiteServer<RedisServerHandle>;

/** Registers `beforeAll` / `afterAll` hooks that start and dispose of one server for the enclosing suite. */
export function useRedisServer(options: RedisServerOptions = {}): SuiteRedisServer {
  return useServer(() => startRedisServer(options));
}
