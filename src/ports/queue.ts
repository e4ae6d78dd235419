/**
 * The Queue port: how executions travel to workers. Jobs carry ids and a format version only;
 * all state lives in the Store. Implementations: `queue/` over BullMQ (the only importer of
 * `bullmq`) and the embedded in-process queue over the memory backend.
 *
 * @module
 */

/** The format version of job payloads. */
export const JOB_FORMAT_VERSION = 1;

/** What a job carries: nothing but ids. */
export interface ExecutionJob {
  readonly v: typeof JOB_FORMAT_VERSION;
  readonly executionId: string;
  /** The reactor's name, to find its definition in the worker's registry. */
  readonly reactor: string;
}

/** Options of {@link JobQueue.enqueue}. */
export interface EnqueueOptions {
  /** Unique id of this job (one execution gets several jobs over its life: `<executionId>:<n>`). Enqueuing an id twice adds it once. */
  readonly jobId: string;
  /** Run no earlier than this many ms from now (less {@link EnqueueOptions.earlyMs}, where given). */
  readonly delayMs?: number;
  /**
   * The consumer accepts the job up to this many ms before its delay ends, and waits out the
   * rest itself: a queue may deliver it that early, so that the work done before the due time
   * (fetching the job, loading its record) is not paid after it. A queue may ignore it. Default 0.
   */
  readonly earlyMs?: number;
  /**
   * The job's priority, BullMQ's convention: an integer from 1 (most urgent) to
   * {@link JOB_PRIORITY_MAX}; among ready jobs, those without a priority go first, then the
   * lower numbers, first come first served within one priority. Absent: no priority.
   */
  readonly priority?: number;
}

/** The largest job priority (the least urgent): BullMQ's bound, 2^21 - 1. */
export const JOB_PRIORITY_MAX = 2_097_151;

/** One job of {@link JobQueue.enqueueMany}: what {@link JobQueue.enqueue} takes, as one value. */
export interface EnqueueEntry {
  readonly job: ExecutionJob;
  readonly options: EnqueueOptions;
}

/**
 * Where a job is, as {@link JobQueue.jobStates} reports it: `queued` (waiting, delayed or
 * prioritized, and no worker has had it yet: it will be delivered), `returned` (queued again
 * after a worker had it: its worker died or stalled and the queue took it back, or an attempt
 * failed and waits out its backoff; it will be delivered, and a worker may have run part of it),
 * `active` (a worker has it; the queue redelivers it should that worker die), `finished`
 * (completed or failed for good, and still remembered) or `missing` (never enqueued, removed, or
 * lost).
 */
export type JobPlace = 'queued' | 'returned' | 'active' | 'finished' | 'missing';

/** The producing side. */
export interface JobQueue {
  enqueue(job: ExecutionJob, options: EnqueueOptions): Promise<void>;
  /**
   * Optional: enqueues every entry, as {@link JobQueue.enqueue} would one by one (same ids, so an
   * id enqueued before, or twice in `entries`, is added once; same delays), in fewer round trips.
   * Every entry is checked first: a malformed payload or bad option refuses the call before any is
   * enqueued. Not atomic otherwise: on a later rejection (an outage) some entries may be enqueued,
   * and calling it again is safe. A fan-out map dispatches its element jobs through it; without
   * it they are enqueued one by one.
   */
  enqueueMany?(entries: readonly EnqueueEntry[]): Promise<void>;
  /** Makes a delayed job runnable now (wake-on-release); false when it is no longer delayed. */
  promote(jobId: string): Promise<boolean>;
  /**
   * Optional: where each of `jobIds` is now, in the same order. The recovery sweep asks it
   * before it re-enqueues an execution, so that one a job still carries is left alone; without
   * it the sweep leaves every execution alone.
   */
  jobStates?(jobIds: readonly string[]): Promise<readonly JobPlace[]>;
  /**
   * Optional: removes a job no worker has taken (waiting, delayed or prioritized), so it is never
   * delivered; resolves `false` when it is active, finished or unknown, and leaves it. The engine
   * discards the job of a start that ended before it ran (a superseded debounced start, a queued
   * start cancelled); without it such a job is still delivered and ends at once on the terminal
   * record. What a discarded id leaves depends on the queue: BullMQ forgets it (`missing`;
   * enqueuing the id again adds a new job), the embedded queue remembers it as `finished`
   * (enqueuing it again is a no-op); either way the discarded job is never delivered.
   */
  discard?(jobId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Delivery details the processor receives. */
export interface JobDelivery {
  readonly jobId: string;
  /** 1 on the first delivery; more when the queue redelivers (a worker died, a stall). */
  readonly delivery: number;
  /**
   * Aborted (with `WorkerShutdownError`) when the worker's shutdown deadline passes while this
   * job runs: the engine aborts the job's steps, writes nothing more and hands the execution
   * back to the queue (a new job, at once) instead of finishing it. Set by `createWorker`.
   */
  readonly signal?: AbortSignal;
}

/**
 * Processes one job. Resolving completes the job; rejecting reports an infrastructure failure
 * (the queue may redeliver it). A payload that is malformed or of another version must be
 * reported through {@link MalformedJobError} so the queue fails it without retrying.
 */
export type JobProcessor = (payload: unknown, delivery: JobDelivery) => Promise<void>;

/** The consuming side: a pool of concurrent processors. */
export interface JobConsumer {
  /** Starts taking jobs. */
  start(processor: JobProcessor, options: { readonly concurrency: number }): void;
  /**
   * Stops taking jobs; in-flight jobs finish (graceful) before it resolves, and no job of this
   * consumer is left active. A BullMQ consumer waiting for work when the stop begins may still take
   * the job its wait returns, which it then runs to the end before resolving; the embedded queue
   * takes nothing more.
   */
  stop(): Promise<void>;
}
