/**
 * Reaping of throwaway PostgreSQL servers whose owner died (the shared mechanism:
 * ./server-orphans.ts), and the signals to a whole server. A server is recognised as a `postgres`
 * started with `-p <port>`; it is killed with its backends, which Postgres puts each in a session
 * of its own.
 */
import { readFileSync } from 'node:fs';
import { commandLine, listDir, reapServerOrphans, recordServerOwner, send, type ServerKind } from './server-orphans.js';

/** Name prefix of the servers' temp directories. */
export const POSTGRES_DIR_PREFIX = 'ts-reactor-postgres-';

const POSTGRES: ServerKind = {
  dirPrefix: POSTGRES_DIR_PREFIX,
  isServer: (pid, port) => {
    const command = commandLine(pid);
    return command !== undefined && command.includes('postgres') && command.includes(`\0-p\0${port}\0`);
  },
  kill: (pid) => signalServer(pid, 'SIGKILL'),
};

/** Records that this process owns the postmaster `server` (pid) listening on `port`, in its directory. */
export const recordPostgresOwner = recordServerOwner;

/** Kills the servers whose owner process is gone (postmaster and backends) and removes their directories; returns how many directories it removed. */
export function reapPostgresOrphans(root?: string): number {
  return reapServerOrphans(POSTGRES, root);
}

/** The pids of the postmaster `pid`'s children (its backends and auxiliary processes), from `/proc`. */
export function serverChildren(pid: number): number[] {
  const found: number[] = [];
  for (const name of listDir('/proc')) {
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
