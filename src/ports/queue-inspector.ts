/**
 * The QueueInspector port: what operators see of the job queue and its workers (the dashboard's
 * queue view, the `ts-reactor_queue_*` gauges). Implemented by the BullMQ queue (its job counts,
 * jobs and `getWorkers`) and by the embedded in-process queue.
 *
 * @module
 */

/** One job as the queue view shows it. */
export interface QueueJobView {
  /** The engine's job id (`<executionId>:<n>`). */
  readonly jobId: string;
  readonly executionId: string;
  readonly reactor: string;
  /** When it was added (ms since the epoch). */
  readonly addedAt?: number;
  /** A delayed job: when it becomes runnable (ms since the epoch). */
  readonly dueAt?: number;
  /** An active job: when its current delivery started (ms since the epoch). */
  readonly startedAt?: number;
  /** How many deliveries started so far. */
  readonly deliveries?: number;
  readonly priority?: number;
}

/** One worker taking jobs from the queue. */
export interface QueueWorkerView {
  /** The worker's name: host and process id, where the queue knows them. */
  readonly name: string;
  /** How many jobs it runs at once, where known. */
  readonly concurrency?: number;
  /** Its network address (BullMQ: the Redis client's `addr`). */
  readonly address?: string;
  /** How long it has been connected, in ms, where known. */
  readonly ageMs?: number;
}

/** The queue now. */
export interface QueueSnapshot {
  /** The queue's name (BullMQ's queue name; `embedded` for the in-process queue). */
  readonly name: string;
  /** Jobs by state: `waiting`, `prioritized`, `delayed`, `active`, `completed`, `failed` (BullMQ's names). */
  readonly counts: Readonly<Record<string, number>>;
  /** When the oldest job waiting to be taken (waiting or prioritized) was added (ms since the epoch). */
  readonly oldestWaitingAt?: number;
  /** The delayed jobs that are due first (at most `limit`). */
  readonly delayed: readonly QueueJobView[];
  /** The active jobs (at most `limit`). */
  readonly active: readonly QueueJobView[];
  /** The oldest waiting jobs (at most `limit`). */
  readonly waiting: readonly QueueJobView[];
  /** The workers online. */
  readonly workers: readonly QueueWorkerView[];
  /** When this was read (ms since the epoch). */
  readonly at: number;
}

/** Reads the queue for operators. */
export interface QueueInspector {
  /** The counts, the first `limit` (default 20) delayed, active and waiting jobs, and the workers. */
  inspectQueue(options?: { readonly limit?: number }): Promise<QueueSnapshot>;
}

/** True when `value` implements {@link QueueInspector}. */
export function isQueueInspector(value: unknown): value is QueueInspector {
  return (
    typeof value === 'object' && value !== null && typeof (value as Partial<QueueInspector>).inspectQueue === 'function'
  );
}
