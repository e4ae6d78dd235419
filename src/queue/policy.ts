/**
 * What both queue adapters agree on: the job name, the bounded infrastructure attempts, how many
 * finished job ids the embedded queue remembers and how long the schedules' tick jobs are kept
 * (the execution jobs' retention on BullMQ is `job-retention.ts`).
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

/** Completed tick jobs of the schedules' queue kept (their outcomes read back) for this long… */
export const KEEP_COMPLETED_MS = 24 * 60 * 60 * 1000;
/** …failed ones for this long, 1,000 of each at most (`bullmq-schedules.ts`). */
export const KEEP_FAILED_MS = 7 * 24 * 60 * 60 * 1000;
/** Finished job ids the embedded queue remembers (enqueuing one of them again is a no-op). */
export const KEEP_FINISHED_COUNT = 10_000;

/** Default BullMQ queue name. */
export const DEFAULT_QUEUE_NAME = 'ts-reactor';
