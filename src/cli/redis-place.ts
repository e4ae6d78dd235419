/**
 * Where a command's Redis is: one server (`--redis <url>`) or a Redis Cluster
 * (`--redis-cluster host:port,…`), and the connections a command opens there for itself (the
 * readiness PING, the gauges' reads, the prefix check).
 *
 * @module
 */
import type { Cluster, Redis } from 'ioredis';
import { parseClusterNodes } from '../storage/redis/cluster-nodes.js';
import { loadIoredis } from './redis-check.js';

/** A cluster's startup node. */
export interface ClusterNode {
  readonly host: string;
  readonly port: number;
}

/** One server's URL, or a cluster's nodes (then `url` is its first node's, for the first PING and the messages). */
export interface RedisPlace {
  readonly url: string;
  readonly cluster?: readonly ClusterNode[] | undefined;
}

/** `--redis-cluster`'s nodes, refused next to `--redis`; undefined without it. @throws Error naming the flag */
export function readClusterNodes(raw: string | undefined, redis: string | undefined): ClusterNode[] | undefined {
  if (raw === undefined) return undefined;
  if (redis !== undefined) throw new Error('--redis-cluster and --redis: give one of them');
  try {
    return parseClusterNodes(raw);
  } catch (error) {
    throw new Error(`--redis-cluster: ${(error as Error).message}`);
  }
}

/** The URL of a cluster's first node (what is pinged first). */
export function firstNodeUrl(nodes: readonly ClusterNode[]): string {
  return `redis://${nodes[0]!.host}:${nodes[0]!.port}`;
}

/** The connection options of `createRedisRuntime` / `createRedisBackend` for `place`. */
export function placeOptions(place: RedisPlace): { url: string } | { cluster: { nodes: ClusterNode[] } } {
  return place.cluster === undefined ? { url: place.url } : { cluster: { nodes: [...place.cluster] } };
}

/** A connection of the command's own at `place` (one request retry; errors left to the calls). Disconnect it when done. */
export async function openConnection(place: RedisPlace, lazy = false): Promise<Redis | Cluster> {
  const { Redis, Cluster } = await loadIoredis();
  const options = { maxRetriesPerRequest: 1, lazyConnect: lazy };
  const connection =
    place.cluster === undefined
      ? new Redis(place.url, options)
      : new Cluster([...place.cluster], { lazyConnect: lazy, redisOptions: { maxRetriesPerRequest: 1 } });
  connection.on('error', () => undefined);
  return connection;
}
