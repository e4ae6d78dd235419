/**
 * The connections the Redis side works over: one ioredis `Redis` (a single server) or an ioredis
 * `Cluster` (docs/decisions/090). Everything that differs between the two is here: which key
 * layout goes with a connection, how a subscriber connection is made, and which nodes a SCAN
 * must visit.
 *
 * @module
 */
import { Redis, type Cluster, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { KeyLayout } from './keys.js';
import { topologyConnector, type NodeAddress } from './node-choice.js';

export { parseClusterNodes } from './cluster-nodes.js';

/** A command connection: a single server's `Redis`, or a `Cluster`. */
export type RedisConnection = Redis | Cluster;

/** The nodes of a Redis Cluster to start from (any of its nodes; the rest are discovered), and ioredis `Cluster` options. */
export interface RedisClusterTarget {
  /** Startup nodes: `{ host, port }` objects, `host:port` strings or ports. */
  readonly nodes: readonly ClusterNode[];
  /** ioredis `Cluster` options (the backend sets its own connection options in `redisOptions`). */
  readonly options?: ClusterOptions;
}

/** Whether `connection` is an ioredis `Cluster`. */
export function isCluster(connection: RedisConnection): connection is Cluster {
  return connection.isCluster;
}

/** The key layout that goes with `connection`: `cluster` on a `Cluster`, else `single`. */
export function layoutOf(connection: RedisConnection): KeyLayout {
  return isCluster(connection) ? 'cluster' : 'single';
}

/**
 * A new connection for SUBSCRIBE, with `options` on top of the command connection's. On a cluster
 * it is a plain connection to one of its nodes: a cluster forwards every `PUBLISH` to all its
 * nodes, so one node hears every wake-up (docs/decisions/090). It follows the topology
 * (decision 113): each (re)connect goes to the first node it has not lost — the startup nodes,
 * then the nodes the cluster connection knows now — so when its node dies it comes back on a live
 * one at its next attempt, and its channels are confirmed again there (decision 061).
 */
export function subscriberOf(connection: RedisConnection, options: RedisOptions): Redis {
  if (!isCluster(connection)) return connection.duplicate(options);
  const Connector = topologyConnector(() => subscriberCandidates(connection));
  return new Redis({ ...connection.options.redisOptions, ...options, Connector });
}

/**
 * The nodes a cluster's subscriber may connect to, in order: the startup nodes, then the nodes
 * `cluster` knows now (masters and replicas of its last slot map), each once.
 */
export function subscriberCandidates(cluster: Cluster): NodeAddress[] {
  const known = cluster.nodes('all').map((node) => ({ host: node.options.host, port: node.options.port }));
  const seen = new Set<string>();
  const candidates: NodeAddress[] = [];
  for (const node of [...startupNodesOf(cluster).map(addressOf), ...known]) {
    if (node.host === undefined || node.port === undefined) continue;
    const key = `${node.host}:${node.port}`;
    if (seen.has(key)) continue;
    seen.add(key);
    candidates.push({ host: node.host, port: node.port });
  }
  return candidates;
}

/** The startup nodes `cluster` was created with (ioredis keeps them private). */
export function startupNodesOf(cluster: Cluster): ClusterNode[] {
  return [...(cluster as unknown as { startupNodes: ClusterNode[] }).startupNodes];
}

/** A startup node as an address: ioredis takes `{ host, port }`, a `redis://` URL, `host:port` or a port (host `localhost`). */
function addressOf(node: ClusterNode): { host?: string; port?: number } {
  if (typeof node === 'number') return { host: 'localhost', port: node };
  if (typeof node === 'object') return { host: node.host ?? 'localhost', port: node.port ?? 6379 };
  if (/^\d+$/.test(node)) return { host: 'localhost', port: Number(node) };
  if (node.includes('://')) {
    const url = URL.canParse(node) ? new URL(node) : undefined;
    return url === undefined ? {} : { host: url.hostname, port: url.port === '' ? 6379 : Number(url.port) };
  }
  const at = node.lastIndexOf(':');
  return at > 0 ? { host: node.slice(0, at), port: Number(node.slice(at + 1)) } : { host: node, port: 6379 };
}

/** The connections a SCAN must visit to see every key: the masters of a cluster, or the one server. */
export function scanTargets(connection: RedisConnection): Redis[] {
  return isCluster(connection) ? connection.nodes('master') : [connection];
}

/**
 * A duplicate of `connection` for a BullMQ worker's blocking commands: a `Redis` without retries
 * per request; a `Cluster` with its own options (create it with `maxRetriesPerRequest: null` in
 * its `redisOptions`, as `createRedisRuntime` does).
 */
export function duplicateBlocking(connection: RedisConnection): RedisConnection {
  return isCluster(connection) ? connection.duplicate() : connection.duplicate({ maxRetriesPerRequest: null });
}

/** Quits a connection politely when it is up, or drops it at once when it is not. */
export async function quit(connection: RedisConnection): Promise<void> {
  if (connection.status === 'end') return;
  if (connection.status !== 'ready') return connection.disconnect();
  try {
    await connection.quit();
  } catch {
    connection.disconnect();
  }
}
