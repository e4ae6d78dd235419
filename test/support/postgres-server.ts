/**
 * A throwaway PostgreSQL server for tests and benchmarks: a fresh cluster (`initdb`) in its own
 * temp directory, on its own free loopback port, never anyone else's Postgres. The binaries are
 * the machine's (`pg_config --bindir`, else the newest `/usr/lib/postgresql/<n>/bin`). Postgres
 * refuses to run as root, so a root process runs it as the `postgres` OS user; anyone else runs it
 * as themselves. Authentication is `trust`: `url` needs no password.
 *
 * {@link PostgresServerHandle.kill} and {@link PostgresServerHandle.freeze} signal the postmaster
 * and each of its backends (a whole-server crash or stall), found through `/proc`. A
 * server whose owner was killed before it could dispose of it is killed by the next start
 * (./postgres-orphans.ts).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  POSTGRES_DIR_PREFIX,
  reapPostgresOrphans,
  recordPostgresOwner,
  running,
  serverChildren,
  signalServer,
} from './postgres-orphans.js';
import { freePort } from './redis-server.js';

export interface PostgresServerOptions {
  /**
   * Whether commits are flushed to the disk: `false` (the default) runs with `fsync=off` and
   * `full_page_writes=off`. Commits still reach the operating system before they are
   * acknowledged, so killing the server (even with SIGKILL) loses nothing acknowledged; only a
   * crash of the machine could. `true` keeps Postgres' durable defaults.
   */
  readonly durable?: boolean;
  /** More server settings, passed as `-c name=value` last (e.g. `{ max_connections: '20' }`). */
  readonly settings?: Readonly<Record<string, string>>;
}

export interface PostgresServerHandle {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, no password). */
  readonly url: string;
  /** The temp directory: `data/` (the cluster), the Unix socket, `postgres.log`. */
  readonly dir: string;
  /** Fast shutdown (SIGINT: clients are disconnected, a checkpoint is written). */
  stop(): Promise<void>;
  /** SIGKILL to the postmaster and every backend: a crash (the next start replays the WAL). */
  kill(): Promise<void>;
  /** SIGSTOP to the postmaster and every backend: the server stops answering, connections stay open. */
  freeze(): void;
  /** SIGCONT to the postmaster and every backend. */
  thaw(): void;
  /** Starts the server again on the same port and data directory (stops it first if it runs). */
  restart(): Promise<void>;
  /** Kills the server and removes its directory. */
  dispose(): Promise<void>;
}

/** The directory holding `initdb` and `postgres`. */
export function postgresBinDir(): string {
  const candidates: string[] = [];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim());
  } catch {
    // no pg_config on PATH
  }
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => join(root, version, 'bin')));
  }
  const found = candidates.find((dir) => existsSync(join(dir, 'postgres')) && existsSync(join(dir, 'initdb')));
  if (found === undefined)
    throw new Error(
      `no PostgreSQL server binaries (initdb, postgres) found in ${candidates.join(', ') || root}: install Debian's postgresql package`,
    );
  return found;
}

interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

/** The `postgres` OS user when running as root (Postgres refuses root); otherwise nobody to switch to. */
function runAs(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error('running as root, and there is no postgres OS user to run the server as');
  }
}

function logTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Whether the postmaster `pid` has written `ready` into its `postmaster.pid` (line 8). */
function ready(dataDir: string, pid: number): boolean {
  try {
    const lines = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
    return Number(lines[0]) === pid && lines[7]?.trim() === 'ready';
  } catch {
    return false;
  }
}

function signal(pid: number | undefined, name: NodeJS.Signals): void {
  if (pid !== undefined) signalServer(pid, name);
}

/** Waits (a bounded while) until the processes `pids` are gone, so a restart finds the shared memory free. */
async function gone(pids: readonly number[]): Promise<void> {
  for (let i = 0; i < 200 && pids.some(running); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** Creates a cluster in a new temp directory and starts `postgres` on a free loopback port. */
export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServerHandle> {
  reapPostgresOrphans(); // servers left running by a killed earlier run
  const bin = postgresBinDir();
  const user = runAs();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), POSTGRES_DIR_PREFIX));
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  const identity = user === undefined ? {} : { uid: user.uid, gid: user.gid };
  if (user !== undefined) chownSync(dir, user.uid, user.gid);

  try {
    execFileSync(
      join(bin, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions'],
      { ...identity, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`initdb failed: ${stderr || String(error)}`, { cause: error });
  }

  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    shared_buffers: '32MB',
    max_connections: '100',
    ...(options.durable === true ? {} : { fsync: 'off', full_page_writes: 'off' }),
    ...options.settings,
  };
  let child: ChildProcess | undefined;

  const launch = async (): Promise<void> => {
    const args = ['-D', dataDir, '-p', String(port)];
    for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);
    const log = openSync(logFile, 'a');
    const proc = spawn(join(bin, 'postgres'), args, {
      ...identity,
      cwd: dir,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    child = proc;
    proc.once('error', () => undefined);
    const pid = proc.pid;
    if (pid === undefined) throw new Error(`postgres did not start: ${logTail(logFile)}`);
    recordPostgresOwner(dir, pid, port);
    const until = Date.now() + 30_000;
    while (!ready(dataDir, pid)) {
      if (proc.exitCode !== null || proc.signalCode !== null)
        throw new Error(`postgres exited while starting on port ${port}:\n${logTail(logFile)}`);
      if (Date.now() > until)
        throw new Error(`postgres was not ready on port ${port} within 30 s:\n${logTail(logFile)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const exit = async (name: NodeJS.Signals): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.pid === undefined) return;
    const pid = proc.pid;
    const backends = serverChildren(pid);
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      signal(pid, 'SIGCONT'); // a frozen server must run to stop
      if (name === 'SIGKILL') signal(pid, 'SIGKILL');
      else proc.kill(name);
      await exited;
    }
    if (name === 'SIGKILL') await gone(backends);
  };

  try {
    await launch();
  } catch (error) {
    await exit('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir,
    stop: () => exit('SIGINT'),
    kill: () => exit('SIGKILL'),
    freeze: () => signal(child?.pid, 'SIGSTOP'),
    thaw: () => signal(child?.pid, 'SIGCONT'),
    restart: async () => {
      await exit('SIGINT');
      await launch();
    },
    dispose: async () => {
      await exit('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
