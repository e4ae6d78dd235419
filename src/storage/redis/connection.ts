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
import { parseClusterNodes } from './cluster-nodes.js';

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
 * nodes, so one node hears every wake-up (docs/decisions/090); when that node is lost the
 * connection reconnects to it like any other, and the channels are confirmed again once it is
 * back (decision 061).
 */
export function subscriberOf(connection: RedisConnection, options: RedisOptions): Redis {
  if (!isCluster(connection)) return connection.duplicate(options);
  const node = connection.nodes('all')[0]?.options ?? startupNode(connection);
  const address = {
    ...(node.host === undefined ? {} : { host: node.host }),
    ...(node.port === undefined ? {} : { port: node.port }),
  };
  return new Redis({ ...connection.options.redisOptions, ...address, ...options });
}

/** The startup nodes `cluster` was created with (ioredis keeps them private). */
export function startupNodesOf(cluster: Cluster): ClusterNode[] {
  return [...(cluster as unknown as { startupNodes: ClusterNode[] }).startupNodes];
}

function startupNode(cluster: Cluster): { host?: string; port?: number } {
  const first: unknown = startupNodesOf(cluster)[0];
  if (typeof first === 'object' && first !== null) return first;
  if (typeof first === 'number') return { port: first };
  if (typeof first === 'string') {
    const [node] = parseClusterNodes(first);
    return node ?? {};
  }
  return {};
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
