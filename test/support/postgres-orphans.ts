/**
 * Reaping of throwaway PostgreSQL servers whose owner died. A test or benchmark process killed
 * before it could dispose of its server leaves the postmaster (and its backends) running and the
 * temp directory behind. Each server's directory records its owner's pid, the postmaster's pid
 * and port; the next {@link reapPostgresOrphans} (run by every `startPostgresServer`) kills
 * every server whose owner is gone (postmaster and backends) and removes its directory. A server is only
 * signalled after `/proc` confirms the pid is still a `postgres` on that port, so a reused pid is
 * never hit.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Name prefix of the servers' temp directories. */
export const POSTGRES_DIR_PREFIX = 'ts-reactor-postgres-';
const OWNER_FILE = 'owner.json';

interface Ownership {
  readonly owner: number;
  readonly server: number;
  readonly port: number;
}

/** Records that this process owns the postmaster `server` (pid) listening on `port`, in its directory. */
export function recordPostgresOwner(dir: string, server: number, port: number): void {
  const ownership: Ownership = { owner: process.pid, server, port };
  writeFileSync(join(dir, OWNER_FILE), JSON.stringify(ownership));
}

/** Kills the servers whose owner process is gone and removes their directories; returns how many directories it removed. */
export function reapPostgresOrphans(root: string = tmpdir()): number {
  let reaped = 0;
  for (const name of safeList(root)) {
    if (!name.startsWith(POSTGRES_DIR_PREFIX)) continue;
    const dir = join(root, name);
    const ownership = readOwnership(dir);
    if (ownership === undefined || alive(ownership.owner)) continue;
    if (isPostmaster(ownership.server, ownership.port)) signalServer(ownership.server, 'SIGKILL');
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

/** Whether `pid` is still a postmaster started with `-p <port>` (its command line, NUL-separated). */
function isPostmaster(pid: number, port: number): boolean {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return command.includes('postgres') && command.includes(`\0-p\0${port}\0`);
  } catch {
    return false;
  }
}

/** The pids of the postmaster `pid`'s children (its backends and auxiliary processes), from `/proc`. */
export function serverChildren(pid: number): number[] {
  const found: number[] = [];
  for (const name of safeList('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // `pid (comm) state ppid ...`: comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(name));
    } catch {
      // exited in between
    }
  }
  return found;
}

/** Whether `pid` is a live process (not gone, not a zombie). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

function send(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone in between
  }
}

/**
 * Sends `signal` to the postmaster `pid` and to each of its children. Postgres puts every child in
 * a session of its own, so a process-group signal would miss them. For SIGSTOP and SIGKILL the
 * postmaster is stopped first, so it forks nothing new while its children are signalled; for
 * SIGCONT the postmaster is resumed last.
 */
export function signalServer(pid: number, signal: NodeJS.Signals): void {
  if (signal === 'SIGCONT') {
    for (const child of serverChildren(pid)) send(child, signal);
    send(pid, signal);
    return;
  }
  send(pid, 'SIGSTOP');
  for (const child of serverChildren(pid)) send(child, signal);
  send(pid, signal);
  if (signal !== 'SIGSTOP' && signal !== 'SIGKILL') send(pid, 'SIGCONT');
}
