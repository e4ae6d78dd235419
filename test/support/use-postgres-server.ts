/**
 * One throwaway PostgreSQL server for the tests of a file (or of a `describe`): started before
 * them, disposed of after them. `server.url` (and `server.handle`) are read inside the tests.
 */
import { afterAll, beforeAll } from 'vitest';
import { startPostgresServer, type PostgresServerHandle, type PostgresServerOptions } from './postgres-server.js';

/** The server of the enclosing suite; its fields are available once the suite's tests run. */
export interface SuitePostgresServer {
  readonly url: string;
  readonly handle: PostgresServerHandle;
}

/** Registers `beforeAll` / `afterAll` hooks that start and dispose of one server for the enclosing suite. */
export function usePostgresServer(options: PostgresServerOptions = {}): SuitePostgresServer {
  let server: PostgresServerHandle | undefined;
  beforeAll(async () => {
    server = await startPostgresServer(options);
  });
  afterAll(async () => {
    await server?.dispose();
  });
  const handle = (): PostgresServerHandle => {
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
