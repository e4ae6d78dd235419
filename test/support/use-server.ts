/**
 * One throwaway server for the tests of a file (or of a `describe`), whatever its kind: started
 * before them, disposed of after them. `server.url` (and `server.handle`) are read inside the tests.
 */
import { afterAll, beforeAll } from 'vitest';

/** What every throwaway server handle has (a single server also has a `url`). */
export interface ServerHandle {
  readonly url?: string;
  dispose(): Promise<void>;
}

/** The server of the enclosing suite; its fields are available once the suite's tests run. */
export interface SuiteServer<H extends ServerHandle> {
  /** The server's URL (a handle without one, a cluster: throws). */
  readonly url: string;
  readonly handle: H;
}

/**
 * Registers `beforeAll` / `afterAll` hooks that start (with `start`) and dispose of one server for
 * the enclosing suite; `startTimeoutMs` bounds the start when the hook's default is too short.
 */
export function useServer<H extends ServerHandle>(start: () => Promise<H>, startTimeoutMs?: number): SuiteServer<H> {
  let server: H | undefined;
  beforeAll(async () => {
    server = await start();
  }, startTimeoutMs);
  afterAll(async () => {
    await server?.dispose();
  });
  const handle = (): H => {
    if (server === undefined)
      throw new Error('the suite server is started by beforeAll: read it inside a test or hook');
    return server;
  };
  return {
    get url() {
      const { url } = handle();
      if (url === undefined) throw new Error('this suite server has no single URL');
      return url;
    },
    get handle() {
      return handle();
    },
  };
}
