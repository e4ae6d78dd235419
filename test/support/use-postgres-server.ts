/** One throwaway PostgreSQL server for the tests of a file (or of a `describe`): ./use-server.ts. */
import { startPostgresServer, type PostgresServerHandle, type PostgresServerOptions } from './postgres-server.js';
import { useServer, type SuiteServer } from './use-server.js';

/** The server of the enclosing suite; its fields are available once the suite's tests run. */
export type SuitePostgresServer = SuiteServer<PostgresServerHandle>;

/** Registers `beforeAll` / `afterAll` hooks that start and dispose of one server for the enclosing suite. */
export function usePostgresServer(options: PostgresServerOptions = {}): SuitePostgresServer {
  return useServer(() => startPostgresServer(options));
}
