/** One throwaway local Redis Cluster for the tests of a file (or of a `describe`): ./use-server.ts. */
import { startRedisCluster, type RedisClusterHandle, type RedisClusterOptions } from './redis-cluster.js';
import { useServer } from './use-server.js';

/**
 * Registers `beforeAll` / `afterAll` hooks that start and dispose of one cluster for the enclosing
 * suite. The start's bound covers six node starts and the cluster's forming on a loaded machine.
 */
export function useRedisCluster(options: RedisClusterOptions = {}): { readonly handle: RedisClusterHandle } {
  return useServer(() => startRedisCluster(options), 300_000);
}
