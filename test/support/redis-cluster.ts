/**
 * A throwaway local Redis Cluster for tests and benchmarks: `masters` `redis-server`s started
 * with `--cluster-enabled yes` on free ports (each in its own temp directory, reaped like the
 * single servers of ./redis-server.ts when their owner dies), joined by
 * `redis-cli --cluster create … --cluster-replicas 0 --cluster-yes`, and ready once every node
 * reports `cluster_state:ok`. Never anyone else's Redis.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { recordOwner, reapOrphans, SERVER_DIR_PREFIX } from './redis-orphans.js';
import { freePort } from './redis-server.js';

const run = promisify(execFile);

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** How many masters (at least 3, Redis's minimum); default 3. */
  readonly masters?: number;
}

/** A running throwaway cluster. */
export interface RedisClusterHandle {
  /** The nodes' ports, in start order. */
  readonly ports: readonly number[];
  /** `host:port` of every node, as `--redis-cluster` and ioredis's `Cluster` take them. */
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  /** The same as one comma-separated `host:port,…` string. */
  readonly spec: string;
  /** Kills every node and removes their directories. */
  dispose(): Promise<void>;
}

interface Node {
  readonly port: number;
  readonly dir: string;
  readonly child: ChildProcess;
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args], { timeout: 10_000 });
  return stdout;
}

async function launch(): Promise<Node> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), SERVER_DIR_PREFIX));
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
    '--save',
    '',
    '--appendonly',
    'no',
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    join(dir, 'nodes.conf'),
    '--cluster-node-timeout',
    '2000',
  ];
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  child.once('error', () => undefined);
  if (child.pid !== undefined) recordOwner(dir, child.pid, port);
  return { port, dir, child };
}

async function until(what: string, check: () => Promise<boolean>, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`redis cluster: ${what} within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function kill(node: Node): Promise<void> {
  const { child } = node;
  if (child.exitCode === null && child.signalCode === null)
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  rmSync(node.dir, { recursive: true, force: true });
}

/** Starts a local cluster of `masters` masters (no replicas) and waits until its state is ok. */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisClusterHandle> {
  reapOrphans();
  const masters = options.masters ?? 3;
  if (masters < 3) throw new RangeError(`a Redis Cluster needs at least 3 masters; got ${masters}`);
  const nodes: Node[] = [];
  try {
    for (let i = 0; i < masters; i++) nodes.push(await launch());
    for (const node of nodes)
      await until(
        `node ${node.port} did not answer PING`,
        async () => (await cli(node.port, 'PING')).trim() === 'PONG',
        10_000,
      );
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], {
      timeout: 30_000,
    });
    for (const node of nodes)
      await until(
        `node ${node.port} did not report cluster_state:ok`,
        async () => (await cli(node.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
        20_000,
      );
  } catch (error) {
    await Promise.all(nodes.map(kill));
    throw error;
  }
  const list = nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  return {
    ports: nodes.map((n) => n.port),
    nodes: list,
    spec: list.map((n) => `${n.host}:${n.port}`).join(','),
    dispose: async () => {
      await Promise.all(nodes.map(kill));
    },
  };
}
