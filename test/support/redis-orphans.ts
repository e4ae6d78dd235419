/**
 * Reaping of throwaway servers whose owner died. A test or benchmark process killed before it
 * could dispose of its `redis-server` (SIGKILL, a timeout) leaves the server running and its
 * temp directory behind. Each server's directory records its owner's pid, the server's pid and
 * port; the next {@link reapOrphans} (run by every `startRedisServer`) stops the servers whose
 * owner is gone and removes their directories. A server is only signalled after `/proc` confirms
 * the pid is still a `redis-server` on that port, so a reused pid is never hit.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Name prefix of the servers' temp directories. */
export const SERVER_DIR_PREFIX = 'ts-reactor-redis-';
const OWNER_FILE = 'owner.json';

interface Ownership {
  readonly owner: number;
  readonly server: number;
  readonly port: number;
}

/** Records that this process owns the server `server` (pid) listening on `port`, in its directory. */
export function recordOwner(dir: string, server: number, port: number): void {
  const ownership: Ownership = { owner: process.pid, server, port };
  writeFileSync(join(dir, OWNER_FILE), JSON.stringify(ownership));
}

/** Stops the servers whose owner process is gone and removes their directories; returns how many directories it removed. */
export function reapOrphans(root: string = tmpdir()): number {
  let reaped = 0;
  for (const name of safeList(root)) {
    if (!name.startsWith(SERVER_DIR_PREFIX)) continue;
    const dir = join(root, name);
    const ownership = readOwnership(dir);
    if (ownership === undefined || alive(ownership.owner)) continue;
    if (isServer(ownership.server, ownership.port)) signal(ownership.server);
    rmSync(dir, { recursive: true, force: true });
    reaped++;
  }
  return reaped;
}

function safeList(root: string): string[] {
  try {
    return readdirSync(root);
  } catch {
    return [];
  }
}

function readOwnership(dir: string): Ownership | undefined {
  try {
    const value = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as Partial<Ownership>;
    if (typeof value.owner !== 'number' || typeof value.server !== 'number' || typeof value.port !== 'number')
      return undefined;
    return value as Ownership;
  } catch {
    return undefined; // not ours, or still starting up
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether `pid` is still a redis-server on `port` (its title reads `redis-server 127.0.0.1:<port>`). */
function isServer(pid: number, port: number): boolean {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return command.includes('redis-server') && (command.includes(`:${port}`) || command.includes(`\0${port}\0`));
  } catch {
    return false;
  }
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone in between
  }
}
