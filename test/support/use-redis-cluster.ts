/**
 * One throwaway local Redis Cluster for the tests of a file (or of a `describe`): started before
 * them, disposed of after them. Its fields are read inside the tests.
 */
import { afterAll, beforeAll } from 'vitest';
import { startRedisCluster, type RedisClusterHandle, type RedisClusterOptions } from './redis-cluster.js';

/** Registers `beforeAll` / `afterAll` hooks that start and dispose of one cluster for the enclosing suite. */
export function useRedisCluster(options: RedisClusterOptions = {}): { readonly handle: RedisClusterHandle } {
  let cluster: RedisClusterHandle | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(options);
  }, 60_000);
  afterAll(async () => {
    await cluster?.dispose();
  });
  return {
    get handle() {
      if (cluster === undefined)
        throw new Error('the suite cluster is started by beforeAll: read it inside a test or hook');
      return cluster;
    },
  };
}
