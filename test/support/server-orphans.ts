/**
 * Reaping of throwaway servers whose owner died, for every kind of server the tests start. A test
 * or benchmark process killed before it could dispose of its server (SIGKILL, a timeout) leaves
 * the server running and its temp directory behind. Each server's directory records its owner's
 * pid, the server's pid and port ({@link recordServerOwner}); {@link reapServerOrphans}, run by
 * every start, stops the servers whose owner is gone and removes their directories. A server is
 * only signalled after its kind's `isServer` confirms (through `/proc`) that the pid is still that
 * server on that port, so a reused pid is never hit.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const OWNER_FILE = 'owner.json';

/** What a server's directory records about it. */
export interface ServerOwnership {
  readonly owner: number;
  readonly server: number;
  readonly port: number;
}

/** One kind of throwaway server: how its directories are named, recognised and their servers stopped. */
export interface ServerKind {
  /** Name prefix of the servers' temp directories. */
  readonly dirPrefix: string;
  /** Whether `pid` is still this kind of server on `port`. */
  isServer(pid: number, port: number): boolean;
  /** Stops the server `pid` (and whatever it runs) for good. */
  kill(pid: number): void;
}

/** Records that this process owns the server `server` (pid) listening on `port`, in its directory. */
export function recordServerOwner(dir: string, server: number, port: number): void {
  const ownership: ServerOwnership = { owner: process.pid, server, port };
  writeFileSync(join(dir, OWNER_FILE), JSON.stringify(ownership));
}

/** Stops the servers of `kind` whose owner process is gone and removes their directories; returns how many directories it removed. */
export function reapServerOrphans(kind: ServerKind, root: string = tmpdir()): number {
  let reaped = 0;
  for (const name of listDir(root)) {
    if (!name.startsWith(kind.dirPrefix)) continue;
    const dir = join(root, name);
    const ownership = readOwnership(dir);
    if (ownership === undefined || alive(ownership.owner)) continue;
    if (kind.isServer(ownership.server, ownership.port)) kind.kill(ownership.server);
    rmSync(dir, { recursive: true, force: true });
    reaped++;
  }
  return reaped;
}

/** The entries of `dir`, or none when it cannot be read. */
export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The command line of `pid` (NUL-separated), or undefined when it is gone. */
export function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
}

/** Sends `signal` to `pid`, ignoring a process gone in between. */
export function send(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone in between
  }
}

function readOwnership(dir: string): ServerOwnership | undefined {
  try {
    const value = JSON.parse(readFileSync(join(dir, OWNER_FILE), 'utf8')) as Partial<ServerOwnership>;
    if (typeof value.owner !== 'number' || typeof value.server !== 'number' || typeof value.port !== 'number')
      return undefined;
    return value as ServerOwnership;
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
