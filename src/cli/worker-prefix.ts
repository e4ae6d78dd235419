/**
 * Whether any key exists under a key prefix: a worker (or an operations command) started with
 * another prefix than its app's finds nothing to do, and says so.
 *
 * @module
 */
import type { Cluster, Redis } from 'ioredis';

/** SCAN rounds at most, per node: a keyspace larger than this is not worth scanning for a hint. */
const MAX_ROUNDS = 50;

/**
 * True when a key named `<prefix>:…` exists (on any master of a cluster), false when none does,
 * `undefined` when the keyspace is too large to tell within a few SCAN rounds.
 */
export async function prefixHasKeys(redis: Redis | Cluster, prefix: string): Promise<boolean | undefined> {
  // Loaded here, not at the top: the command line's entry must load without ioredis (a PostgreSQL or memory-only install).
  const { isCluster, scanTargets } = await import('../storage/redis/connection.js');
  if (isCluster(redis)) await clusterReady(redis);
  let unknown = false;
  for (const node of scanTargets(redis)) {
    const found = await nodeHasKeys(node, `${escapeGlob(prefix)}:*`);
    if (found === true) return true;
    if (found === undefined) unknown = true;
  }
  return unknown ? undefined : false;
}

async function nodeHasKeys(node: Pick<Redis, 'scan'>, pattern: string): Promise<boolean | undefined> {
  let cursor = '0';
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
    if (keys.length > 0) return true;
    if (next === '0') return false;
    cursor = next;
  }
  return undefined;
}

/** Resolves once `cluster` knows its masters (connecting it when lazy). */
async function clusterReady(cluster: Cluster): Promise<void> {
  if (cluster.status === 'ready') return;
  if (cluster.status === 'wait') await cluster.connect();
  else
    await new Promise<void>((resolve, reject) => {
      cluster.once('ready', resolve);
      cluster.once('end', () => reject(new Error('the cluster connection ended')));
    });
}

/** `text` with Redis glob characters escaped, so that it matches only itself. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
