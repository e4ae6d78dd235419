/**
 * Reaping of throwaway `redis-server`s whose owner died (the shared mechanism:
 * ./server-orphans.ts). A server is recognised by its title, `redis-server 127.0.0.1:<port>`.
 */
import { commandLine, reapServerOrphans, recordServerOwner, send, type ServerKind } from './server-orphans.js';

/** Name prefix of the servers' temp directories. */
export const SERVER_DIR_PREFIX = 'ts-reactor-redis-';

const REDIS: ServerKind = {
  dirPrefix: SERVER_DIR_PREFIX,
  isServer: (pid, port) => {
    const command = commandLine(pid);
    return (
      command !== undefined &&
      command.includes('redis-server') &&
      (command.includes(`:${port}`) || command.includes(`\0${port}\0`))
    );
  },
  kill: (pid) => send(pid, 'SIGKILL'),
};

/** Records that this process owns the server `server` (pid) listening on `port`, in its directory. */
export const recordOwner = recordServerOwner;

/** Stops the redis-servers whose owner process is gone and removes their directories; returns how many directories it removed. */
export function reapOrphans(root?: string): number {
  return reapServerOrphans(REDIS, root);
}
