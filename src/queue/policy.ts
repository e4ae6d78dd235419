/**
 * What both queue adapters agree on: the job name, the bounded infrastructure attempts and how
 * long finished jobs are remembered (which is also how long a job id stays deduplicated).
 *
 * @module
 */

/** Name of every job ts-reactor enqueues. */
export const EXECUTION_JOB_NAME = 'execution';

/**
 * Deliveries of one job when its processor rejects (an infrastructure failure: the store was
 * unreachable, the worker lost its connection). Step failures never reach the queue: the engine
 * owns retries and re-enqueues a new job with its own delay.
 */
export const INFRA_ATTEMPTS = 3;

/** First backoff between infrastructure attempts, doubled each time. */
export const INFRA_BACKOFF_MS = 250;

/** Completed jobs kept (and their ids deduplicated) for this long… */
export const KEEP_COMPLETED_MS = 24 * 60 * 60 * 1000;
/** Failed jobs kept for inspection for this long… */
export const KEEP_FAILED_MS = 7 * 24 * 60 * 60 * 1000;
/** …and at most this many of each outcome. */
export const KEEP_FINISHED_COUNT = 10_000;

/** Default BullMQ queue name. */
export const DEFAULT_QUEUE_NAME = 'ts-reactor';
