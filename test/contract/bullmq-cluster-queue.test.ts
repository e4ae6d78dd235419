/**
 * The queue contract on BullMQ over a throwaway local 3-master Redis Cluster, the queue's keys in
 * one slot under a hash-tagged prefix (the harness: `bullmq-queue-harness.ts`).
 */
import { useRedisCluster } from '../support/use-redis-cluster.js';
import { BULLMQ_CAPABILITIES, bullmqBackend } from './bullmq-queue-harness.js';
import { describeQueueContract } from './queue-contract.js';

const cluster = useRedisCluster();

describeQueueContract('bullmq on a redis cluster', BULLMQ_CAPABILITIES, () =>
  bullmqBackend({ kind: 'cluster', nodes: cluster.handle.nodes }),
);
