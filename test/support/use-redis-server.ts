/**
 * One throwaway `redis-server` for the tests of a file (or of a `describe`): started before
 * them, disposed of after them. `server.url` (and `server.handle`) are read inside the tests.
 */
import { afterAll, beforeAll } from 'vitest';
import { startRedisServer, type RedisServerHandle, type RedisServerOptions } from './redis-server.js';

/** The server of the enclosing suite; its fields are available once the suite's tests run. */
export interface SuiteRedisServer {
  readonly url: string;
  readonly handle: RedisServerHandle;
}

/** Registers `beforeAll` / `afterAll` hooks that start and dispose of one server for the enclosing suite. */
export function useRedisServer(options: RedisServerOptions = {}): SuiteRedisServer {
  let server: RedisServerHandle | undefined;
  beforeAll(async () => {
    server = await startRedisServer(options);
  });
  afterAll(async () => {
    await server?.dispose();
  });
  const handle = (): RedisServerHandle => {
    if (server === undefined)
      throw new Error('the suite server is started by beforeAll: read it inside a test or hook');
    return server;
  };
  return {
    get url() {
      return handle().url;
    },
    get handle() {
      return handle();
    },
  };
}
