/**
 * What a backend's BullMQ consumers log: a worker's infrastructure failures, each with the
 * execution it concerns. Shared by the Redis and the PostgreSQL backends.
 *
 * @module
 */
import type { Logger } from '../dsl/context.js';
import type { BullmqConsumerOptions } from './bullmq.js';

/** The `onError` / `onFailed` of a consumer logging to `logger` (the job id starts with the execution id). */
export function consumerLogging(logger: Logger): Pick<BullmqConsumerOptions, 'onError' | 'onFailed'> {
  return {
    onError: (error) => logger.error({ err: error }, 'BullMQ worker error (it reconnects)'),
    onFailed: ({ jobId, error, final }) => {
      const fields = { executionId: jobId.split(':')[0], jobId, final, err: error };
      if (final) logger.error(fields, `job ${jobId} failed for good: ${error.message}`);
      else logger.warn(fields, `job ${jobId} failed; BullMQ delivers it again: ${error.message}`);
    },
  };
}
