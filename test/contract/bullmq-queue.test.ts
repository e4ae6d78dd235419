/**
 * The queue contract on BullMQ over a throwaway redis-server (the harness: `bullmq-queue-harness.ts`).
 */
import { useRedisServer } from '../support/use-redis-server.js';
import { BULLMQ_CAPABILITIES, bullmqBackend } from './bullmq-queue-harness.js';
import { describeQueueContract } from './queue-contract.js';

const server = useRedisServer();

describeQueueContract('bullmq', BULLMQ_CAPABILITIES, () => bullmqBackend({ kind: 'server', url: server.url }));
