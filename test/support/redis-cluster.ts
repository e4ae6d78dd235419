/**
 * A throwaway local Redis Cluster for tests and benchmarks: `masters` masters, each with
 * `replicasPerMaster` replicas, every node a `redis-server` started with `--cluster-enabled yes`
 * on free ports (client and bus port; each in its own temp directory, reaped like the single
 * servers of ./redis-server.ts when their owner dies), joined by
 * `redis-cli --cluster create … --cluster-replicas <n> --cluster-yes`, and ready once every node
 * reports `cluster_state:ok` and every replica is in sync with its master. Never anyone else's
 * Redis.
 *
 * For fault tests the handle reads the topology from `CLUSTER NODES`, SIGKILLs a node, runs a
 * manual `CLUSTER FAILOVER` on a replica, and waits until a given node is a master serving its
 * slots with the cluster state ok on every live node.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { recordOwner, reapOrphans, SERVER_DIR_PREFIX } from './redis-orphans.js';
import { freePort } from './redis-server.js';

const run = promisify(execFile);

/** `cluster-node-timeout` of a cluster without replicas (nothing to fail over to). */
const NODE_TIMEOUT_MS = 2_000;
/** `cluster-node-timeout` of a replicated cluster: a killed master's replica is promoted within a few seconds. */
const REPLICATED_NODE_TIMEOUT_MS = 1_000;
/** How long the waits of a fault (a promotion, the state ok again) may take on a loaded machine. */
const SETTLE_DEADLINE_MS = 30_000;
/**
 * A bound on a node that never starts, not a speed requirement: on a loaded machine (CI beside
 * CPU-burning processes) a new `redis-server` and every `redis-cli` spawned to ask it may take
 * tens of seconds.
 */
const START_DEADLINE_MS = 60_000;

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** How many masters (at least 3, Redis's minimum); default 3. */
  readonly masters?: number;
  /** How many replicas each master has; default 0. 1 with 3 masters gives 6 nodes. */
  readonly replicasPerMaster?: number;
}

/** One node as `CLUSTER NODES` reports it. */
export interface ClusterNodeInfo {
  readonly id: string;
  readonly port: number;
  readonly role: 'master' | 'replica';
  /** The node id of a replica's master; undefined for a master. */
  readonly masterId: string | undefined;
  /** Slot ranges a master serves, inclusive, e.g. `[[0, 5460]]`. */
  readonly slots: readonly (readonly [number, number])[];
  /** True when the reporting node marks the node failed (`fail` or `fail?`). */
  readonly failed: boolean;
}

/** A running throwaway cluster. */
export interface RedisClusterHandle {
  /** The nodes' ports, in start order. */
  readonly ports: readonly number[];
  /** `host:port` of every node, as `--redis-cluster` and ioredis's `Cluster` take them. */
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  /** The same as one comma-separated `host:port,…` string. */
  readonly spec: string;
  /** Every node as a live node's `CLUSTER NODES` reports it now. */
  topology(): Promise<ClusterNodeInfo[]>;
  /** Ports of the masters that serve slots now. */
  masters(): Promise<number[]>;
  /** Ports of the live replicas now. */
  replicas(): Promise<number[]>;
  /** Port of the master serving a slot, or the slot of a key (`CLUSTER KEYSLOT`). */
  masterOf(slotOrKey: number | string): Promise<number>;
  /** Ports of the live replicas of the master on `masterPort`. */
  replicasOf(masterPort: number): Promise<number[]>;
  /** SIGKILLs the node on `port` (its directory stays until {@link RedisClusterHandle.dispose}). */
  kill(port: number): Promise<void>;
  /**
   * A manual, graceful failover: `CLUSTER FAILOVER` on the replica on `replicaPort` (which waits
   * for the replica to catch up with its master before it takes over), then waits as
   * {@link RedisClusterHandle.waitForMaster} does.
   */
  failover(replicaPort: number): Promise<void>;
  /**
   * Waits until every live node reports `cluster_state:ok` and sees the node on `port` as a
   * master serving at least one slot.
   */
  waitForMaster(port: number, deadlineMs?: number): Promise<void>;
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

function serverArgs(port: number, busPort: number, dir: string, nodeTimeoutMs: number): string[] {
  return [
    ...['--port', String(port), '--cluster-port', String(busPort), '--bind', '127.0.0.1'],
    ...['--dir', dir, '--protected-mode', 'no', '--logfile', join(dir, 'redis.log')],
    ...['--save', '', '--appendonly', 'no'],
    ...['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')],
    ...['--cluster-node-timeout', String(nodeTimeoutMs)],
  ];
}

async function launch(nodeTimeoutMs: number): Promise<Node> {
  const port = await freePort();
  // The bus port is chosen too: the default (port + 10000) may be taken, or past 65535.
  let busPort = await freePort();
  while (busPort === port) busPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), SERVER_DIR_PREFIX));
  const child = spawn('redis-server', serverArgs(port, busPort, dir, nodeTimeoutMs), { stdio: 'ignore' });
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

const alive = (node: Node): boolean => node.child.exitCode === null && node.child.signalCode === null;

async function stop(node: Node): Promise<void> {
  const { child } = node;
  if (alive(node))
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
}

async function kill(node: Node): Promise<void> {
  await stop(node);
  rmSync(node.dir, { recursive: true, force: true });
}

/** Parses one line of `CLUSTER NODES`: `<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot>…`. */
function parseNodeLine(line: string): ClusterNodeInfo {
  const [id = '', address = '', flagText = '', master = '-', , , , , ...slotText] = line.trim().split(/\s+/);
  const flags = flagText.split(',');
  const port = Number(address.split('@')[0]!.split(':').pop());
  const slots = slotText
    .filter((s) => !s.startsWith('['))
    .map((s) => {
      const [from, to = from] = s.split('-').map(Number);
      return [from!, to!] as const;
    });
  const role = flags.includes('master') ? 'master' : 'replica';
  return {
    id,
    port,
    role,
    masterId: role === 'replica' && master !== '-' ? master : undefined,
    slots,
    failed: flags.includes('fail') || flags.includes('fail?'),
  };
}

/** `CLUSTER NODES` of the node on `port`, parsed. */
async function nodesSeenBy(port: number): Promise<ClusterNodeInfo[]> {
  const text = await cli(port, 'CLUSTER', 'NODES');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(parseNodeLine);
}

const servesSlot = (info: ClusterNodeInfo, slot: number): boolean =>
  info.slots.some(([from, to]) => slot >= from && slot <= to);

/** True when a replica reports its replication link up and no sync in progress. */
async function inSync(port: number): Promise<boolean> {
  const info = await cli(port, 'INFO', 'replication');
  return info.includes('master_link_status:up') && info.includes('master_sync_in_progress:0');
}

/** True when the node on `port` sees every node, `replicas` of them replicas with a master, and state ok. */
async function settledAt(port: number, size: number, replicas: number): Promise<boolean> {
  if (!(await cli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
  const seen = await nodesSeenBy(port);
  const withMaster = seen.filter((n) => n.role === 'replica' && n.masterId !== undefined);
  return seen.length === size && withMaster.length === replicas;
}

async function waitUntilFormed(nodes: readonly Node[], replicas: number): Promise<void> {
  for (const node of nodes)
    await until(
      `node ${node.port} did not report cluster_state:ok with every node and replica`,
      () => settledAt(node.port, nodes.length, replicas),
      20_000,
    );
  const seen = await nodesSeenBy(nodes[0]!.port);
  for (const replica of seen.filter((n) => n.role === 'replica'))
    await until(`replica ${replica.port} did not sync with its master`, () => inSync(replica.port), 20_000);
}

async function create(nodes: readonly Node[], replicasPerMaster: number): Promise<void> {
  for (const node of nodes)
    await until(
      `node ${node.port} did not answer PING`,
      async () => (await cli(node.port, 'PING')).trim() === 'PONG',
      START_DEADLINE_MS,
    );
  const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
  const replicas = String(replicasPerMaster);
  await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', replicas, '--cluster-yes'], {
    timeout: START_DEADLINE_MS,
  });
}

/** The handle's fault and topology methods over the started nodes. */
function faults(nodes: readonly Node[]): Omit<RedisClusterHandle, 'ports' | 'nodes' | 'spec' | 'dispose'> {
  const live = (): Node[] => nodes.filter(alive);
  const anyLive = (): number => {
    const node = live()[0];
    if (node === undefined) throw new Error('redis cluster: no node is running');
    return node.port;
  };
  const topology = async (): Promise<ClusterNodeInfo[]> => nodesSeenBy(anyLive());
  const liveReplica = (n: ClusterNodeInfo): boolean =>
    n.role === 'replica' && !n.failed && live().some((x) => x.port === n.port);
  const masterOf = async (slotOrKey: number | string): Promise<number> => {
    const slot =
      typeof slotOrKey === 'number'
        ? slotOrKey
        : Number((await cli(anyLive(), 'CLUSTER', 'KEYSLOT', slotOrKey)).trim());
    const master = (await topology()).find((n) => n.role === 'master' && !n.failed && servesSlot(n, slot));
    if (master === undefined) throw new Error(`redis cluster: no live master serves slot ${slot}`);
    return master.port;
  };
  const waitForMaster = async (port: number, deadlineMs = SETTLE_DEADLINE_MS): Promise<void> => {
    const ok = async (at: number): Promise<boolean> => {
      if (!(await cli(at, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
      const self = (await nodesSeenBy(at)).find((n) => n.port === port);
      return self !== undefined && self.role === 'master' && !self.failed && self.slots.length > 0;
    };
    await until(
      `node ${port} did not become a master serving slots, with cluster_state:ok everywhere`,
      async () => (await Promise.all(live().map((n) => ok(n.port)))).every(Boolean),
      deadlineMs,
    );
  };
  return {
    topology,
    masterOf,
    waitForMaster,
    masters: async () =>
      (await topology()).filter((n) => n.role === 'master' && !n.failed && n.slots.length > 0).map((n) => n.port),
    replicas: async () => (await topology()).filter(liveReplica).map((n) => n.port),
    replicasOf: async (masterPort) => {
      const seen = await topology();
      const master = seen.find((n) => n.port === masterPort);
      return seen.filter((n) => liveReplica(n) && n.masterId === master?.id).map((n) => n.port);
    },
    kill: async (port) => {
      const node = nodes.find((n) => n.port === port);
      if (node === undefined) throw new Error(`redis cluster: no node on port ${port}`);
      await stop(node);
    },
    failover: async (replicaPort) => {
      const reply = (await cli(replicaPort, 'CLUSTER', 'FAILOVER')).trim();
      if (reply !== 'OK') throw new Error(`redis cluster: CLUSTER FAILOVER on ${replicaPort} answered ${reply}`);
      await waitForMaster(replicaPort);
    },
  };
}

/**
 * Starts a local cluster of `masters` masters with `replicasPerMaster` replicas each, and waits
 * until its state is ok and every replica is in sync. A replicated cluster's nodes time out
 * after 1 s (`cluster-node-timeout`), so a killed master's replica is promoted within seconds.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisClusterHandle> {
  reapOrphans();
  const masters = options.masters ?? 3;
  const replicasPerMaster = options.replicasPerMaster ?? 0;
  if (masters < 3) throw new RangeError(`a Redis Cluster needs at least 3 masters; got ${masters}`);
  if (!Number.isInteger(replicasPerMaster) || replicasPerMaster < 0)
    throw new RangeError(`replicasPerMaster must be an integer ≥ 0; got ${replicasPerMaster}`);
  const timeout = replicasPerMaster > 0 ? REPLICATED_NODE_TIMEOUT_MS : NODE_TIMEOUT_MS;
  const nodes: Node[] = [];
  try {
    for (let i = 0; i < masters * (1 + replicasPerMaster); i++) nodes.push(await launch(timeout));
    await create(nodes, replicasPerMaster);
    await waitUntilFormed(nodes, masters * replicasPerMaster);
  } catch (error) {
    await Promise.all(nodes.map(kill));
    throw error;
  }
  const list = nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  return {
    ports: nodes.map((n) => n.port),
    nodes: list,
    spec: list.map((n) => `${n.host}:${n.port}`).join(','),
    ...faults(nodes),
    dispose: async () => {
      await Promise.all(nodes.map(kill));
    },
  };
}
