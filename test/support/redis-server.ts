/**
 * A throwaway `redis-server` for tests and benchmarks: its own free port and temp directory,
 * never anyone else's Redis. It can be stopped, killed, paused (SIGSTOP), resumed and restarted
 * on the same port, with or without persistence. A server whose owner was killed before it could
 * dispose of it is stopped by the next start (./redis-orphans.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordOwner, reapOrphans, SERVER_DIR_PREFIX } from './redis-orphans.js';

export interface RedisServerOptions {
  /**
   * What the server persists; default `'none'` (no AOF, no RDB snapshots).
   * - `'aof'`: append-only file with `appendfsync always` (every acknowledged write survives a crash);
   * - `'aof-everysec'`: append-only file with `appendfsync everysec` (a crash loses up to ~1 s);
   * - `'rdb'`: RDB snapshots only (`save 60 1`): a clean stop keeps the data, a crash loses the
   *   writes since the last snapshot.
   */
  readonly persistence?: 'none' | 'aof' | 'aof-everysec' | 'rdb';
  /** More `redis-server` arguments, appended last (e.g. `['--rename-command', 'CONFIG', '']`). */
  readonly extraArgs?: readonly string[];
}

function persistenceArgs(persistence: NonNullable<RedisServerOptions['persistence']>): string[] {
  switch (persistence) {
    case 'aof':
      return ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
    case 'aof-everysec':
      return ['--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec'];
    case 'rdb':
      return ['--save', '60 1', '--appendonly', 'no'];
    case 'none':
      return ['--save', '', '--appendonly', 'no'];
  }
}

export interface RedisServerHandle {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** Graceful shutdown (SIGTERM: with AOF the log is kept, with RDB a snapshot is written). */
  stop(): Promise<void>;
  /** SIGKILL. */
  kill(): Promise<void>;
  /** SIGSTOP: the server stops answering, connections stay open. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Starts the server again on the same port and directory. */
  restart(): Promise<void>;
  /** Stops the server and removes its directory. */
  dispose(): Promise<void>;
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`redis-server did not listen on ${port} within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts a new `redis-server` (binary from PATH) on a free port. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerHandle> {
  reapOrphans(); // servers left running by a killed earlier run
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), SERVER_DIR_PREFIX));
  const persistence = options.persistence ?? 'none';
  let child: ChildProcess | undefined;

  const launch = async (): Promise<void> => {
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--protected-mode',
      'no',
      '--logfile',
      join(dir, 'redis.log'),
    ];
    args.push(...persistenceArgs(persistence), ...(options.extraArgs ?? []));
    child = spawn('redis-server', args, { stdio: 'ignore' });
    child.once('error', () => undefined);
    if (child.pid !== undefined) recordOwner(dir, child.pid, port);
    await waitForPort(port, 10_000);
  };
  const exit = async (signal: NodeJS.Signals): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    if (signal !== 'SIGKILL') proc.kill('SIGCONT');
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill(signal);
    });
  };

  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    stop: () => exit('SIGTERM'),
    kill: () => exit('SIGKILL'),
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    restart: async () => {
      await exit('SIGTERM');
      await launch();
    },
    dispose: async () => {
      await exit('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
