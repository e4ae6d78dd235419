/**
 * The Queue port over BullMQ, on any datastore BullMQ runs on (`bullmq-datastore.ts`: Redis here,
 * PostgreSQL in `bullmq-postgres.ts`), written once.
 *
 * - {@link openBullmqQueue} ({@link createBullmqQueue} on Redis): the producing side. A job is
 *   named `execution`, carries the encoded {@link ExecutionJob} (with its delay and priority as
 *   BullMQ's), and gets a few attempts with a short backoff: those cover infrastructure failures
 *   of a delivery only (the engine owns step retries).
 * - {@link openBullmqConsumer} ({@link createBullmqConsumer} on Redis): a BullMQ `Worker`. Its
 *   processor decodes nothing itself; it hands the raw payload and the delivery count to the
 *   engine's {@link JobProcessor}, turns a {@link MalformedJobError} into BullMQ's
 *   `UnrecoverableError` (failed, never retried), and lets stall detection redeliver the job of a
 *   worker that died.
 *
 * @module
 */
import { closeWorker } from './bullmq-close.js';
import { UnrecoverableError, type BulkJobOptions, type Job, type Queue, type Worker } from 'bullmq';
import { QueueUnavailableError, ReactorError } from '../errors.js';
import { DEFAULT_OUTAGE_TOLERANCE_MS } from '../storage/redis/script.js';
import {
  JOB_PRIORITY_MAX,
  type EnqueueEntry,
  type EnqueueOptions,
  type ExecutionJob,
  type JobConsumer,
  type JobPlace,
  type JobProcessor,
  type JobQueue,
} from '../ports/queue.js';
import { fromBullmqJobId, toBullmqJobId } from './job-id.js';
import { inspectBullmq, workerName } from './bullmq-inspect.js';
import type { QueueInspector } from '../ports/queue-inspector.js';
import { encodeJob } from './payload.js';
import { DEFAULT_QUEUE_NAME, EXECUTION_JOB_NAME, INFRA_ATTEMPTS, INFRA_BACKOFF_MS } from './policy.js';
import { bullmqKeepJobs, jobRetentionOf, type JobRetention, type JobRetentionOptions } from './job-retention.js';
import { redisDatastore, type BullmqConnection, type BullmqDatastore, type OpenedWorker } from './bullmq-datastore.js';

export { DEFAULT_BULLMQ_PREFIX, type BullmqConnection, type BullmqDatastore } from './bullmq-datastore.js';

/** Default lock of an active job: a dead worker's job is redelivered after about this long. */
export const DEFAULT_LOCK_DURATION_MS = 30_000;
/** Default period of the stall check. */
export const DEFAULT_STALLED_INTERVAL_MS = 15_000;
/** Default number of times one job may be recovered from a dead worker before it fails. */
export const DEFAULT_MAX_STALLED_COUNT = 3;

/** What a BullMQ job queue is told on any datastore ({@link createBullmqQueue} on Redis, `createBullmqPostgresQueue` on PostgreSQL). */
export interface BullmqQueueSettings {
  /** BullMQ queue name; default `ts-reactor`. Producers and consumers must agree. */
  readonly name?: string;
  /**
   * How long `enqueue` and `promote` ride out an outage of the datastore: a call that meets a
   * connection problem is made again (job ids are deduplicated, so adding twice adds once) until
   * this long after its first failure, then fails with `QueueUnavailableError`. Default 30 s; 0
   * fails at once.
   */
  readonly outageToleranceMs?: number;
  /**
   * How many finished jobs BullMQ keeps of each outcome, and for how long: the `removeOnComplete`
   * / `removeOnFail` of every job this queue adds (docs/limits.md, "BullMQ's finished jobs").
   * Default: completed ones for 1 hour, at most 1,000; failed ones for 7 days, at most 1,000. An
   * age or count out of range is a `RuntimeOptionError`.
   */
  readonly jobRetention?: JobRetentionOptions;
}

/** Options of {@link createBullmqQueue}: BullMQ over Redis. */
export interface BullmqQueueOptions extends BullmqQueueSettings {
  readonly connection: BullmqConnection;
  /** BullMQ key prefix; default `rx`. */
  readonly prefix?: string;
}

/** What a BullMQ consumer is told on any datastore ({@link createBullmqConsumer} on Redis, `createBullmqPostgresConsumer` on PostgreSQL). */
export interface BullmqConsumerSettings {
  /** BullMQ queue name; default `ts-reactor`. Producers and consumers must agree. */
  readonly name?: string;
  /**
   * How long a worker's lock on an active job lasts without renewal (renewed every half of it
   * while the processor runs). A job of a worker that died is redelivered roughly
   * `lockDurationMs + stalledIntervalMs` after its death. Default 30 s.
   */
  readonly lockDurationMs?: number;
  /** How often each worker checks for stalled jobs; default 15 s. */
  readonly stalledIntervalMs?: number;
  /** Recoveries of one job from dead workers before BullMQ fails it; default 3. */
  readonly maxStalledCount?: number;
  /** Called with errors of the worker itself (connection problems); default: ignored (the connections reconnect). */
  readonly onError?: (error: Error) => void;
  /** Called when a delivery fails; `final` when BullMQ will not deliver the job again. */
  readonly onFailed?: (failure: { readonly jobId: string; readonly error: Error; readonly final: boolean }) => void;
}

/** Options of {@link createBullmqConsumer}: BullMQ over Redis. */
export interface BullmqConsumerOptions extends Omit<BullmqQueueOptions, 'jobRetention'>, BullmqConsumerSettings {
  readonly name?: string;
}

/** Creates the producing side over a BullMQ `Queue` on Redis; it also answers the dashboard's queue view. */
export function createBullmqQueue(options: BullmqQueueOptions): JobQueue & QueueInspector {
  return openBullmqQueue(redisDatastore(options.connection, options.prefix), options, 'createBullmqQueue');
}

/**
 * The producing side over a BullMQ `Queue` on `datastore` (Redis or PostgreSQL); `factory` names
 * the public factory in option errors. Nothing opens before the options are checked.
 */
export function openBullmqQueue(
  datastore: BullmqDatastore,
  options: BullmqQueueSettings,
  factory: string,
): JobQueue & QueueInspector {
  const retention = jobRetentionOf(factory, options.jobRetention); // refused before any connection opens
  const name = queueName(options);
  const toleranceMs = options.outageToleranceMs ?? DEFAULT_OUTAGE_TOLERANCE_MS;
  if (!Number.isFinite(toleranceMs) || toleranceMs < 0)
    throw new RangeError(`outageToleranceMs must be a finite number >= 0; got ${String(toleranceMs)}`);
  const queue = datastore.queue(name);
  // Errors also surface on the calls that hit them; the listener keeps an 'error' from crashing the process.
  queue.on('error', noop);
  const drops = watchDrops((listener) => queue.on('ioredis:close', listener));
  const isOutage = (error: unknown): boolean => datastore.isOutage(error);
  let closed = false;
  const add = (job: ExecutionJob, jobId: string, delay: number, priority: number | undefined) =>
    queue.add(EXECUTION_JOB_NAME, encodeJob(job), jobOptions(jobId, delay, priority, retention));
  // Delays count from the first try, as in `enqueue`.
  const addBulk = (entries: readonly EnqueueEntry[], elapsedMs: number) =>
    queue.addBulk(
      entries.map(({ job, options: { jobId, delayMs = 0, priority } }) => ({
        name: EXECUTION_JOB_NAME,
        data: encodeJob(job),
        opts: jobOptions(jobId, Math.max(0, delayMs - elapsedMs), priority, retention),
      })),
    );
  const promote = async (jobId: string): Promise<boolean> => {
    const job = await queue.getJob(toBullmqJobId(jobId));
    if (!job) return false;
    try {
      await job.promote();
    } catch (error) {
      // Lost a race (it ran out its delay, or another releaser promoted it) or it is gone:
      // not delayed any more is a plain `false`; anything else is a real failure.
      const state = await job.getState().catch(() => 'unknown');
      if (state !== 'delayed') return false;
      throw error;
    }
    // A woken job has waited already: it goes to the delivery end of the line, before jobs not yet delivered (docs/decisions/120).
    if (!job.opts.priority) await job.changePriority({ priority: 0, lifo: true }).catch(() => undefined);
    return true;
  };

  // On Redis, this process promotes its delayed jobs on time (BullMQ's own wait is bounded by Redis's `hz`).
  // BullMQ's PostgreSQL backend moves delayed jobs itself, and a promotion racing its mover may
  // deliver a job twice: there the timers are left out.
  const onTime = datastore.kind === 'redis' ? onTimeWakes(promote) : { watch: noop, clear: noop };

  return {
    async enqueue(job: ExecutionJob, enqueueOptions: EnqueueOptions): Promise<void> {
      if (closed) throw new Error('the job queue is closed');
      const delay = checkedDelay(enqueueOptions.delayMs);
      const priority = checkedPriority(enqueueOptions.priority);
      try {
        await add(job, enqueueOptions.jobId, delay, priority);
        onTime.watch(enqueueOptions.jobId, delay, enqueueOptions.earlyMs ?? 0);
      } catch (error) {
        // Added again after an outage, a delayed job keeps its due time (the delay counts from the first try).
        const since = performance.now();
        await rideOut(
          'job-enqueue',
          error,
          isOutage,
          toleranceMs,
          () => closed,
          () => add(job, enqueueOptions.jobId, Math.max(0, delay - (performance.now() - since)), priority),
        );
      }
    },

    async enqueueMany(entries: readonly EnqueueEntry[]): Promise<void> {
      if (closed) throw new Error('the job queue is closed');
      // Every entry is checked, its payload and id included, before the first chunk is sent: a bad one adds nothing.
      for (const { job, options: entry } of entries) {
        encodeJob(job);
        toBullmqJobId(entry.jobId);
        checkedDelay(entry.delayMs);
        checkedPriority(entry.priority);
      }
      for (let from = 0; from < entries.length; from += BULK_CHUNK) {
        const chunk = entries.slice(from, from + BULK_CHUNK);
        try {
          await addBulk(chunk, 0);
        } catch (error) {
          const since = performance.now();
          await rideOut(
            'job-enqueue',
            error,
            isOutage,
            toleranceMs,
            () => closed,
            () => addBulk(chunk, performance.now() - since),
          );
        }
      }
    },

    async promote(jobId: string): Promise<boolean> {
      if (closed) throw new Error('the job queue is closed');
      try {
        return await promote(jobId);
      } catch (error) {
        return rideOut(
          'job-promote',
          error,
          isOutage,
          toleranceMs,
          () => closed,
          () => promote(jobId),
        );
      }
    },

    async discard(jobId: string): Promise<boolean> {
      if (closed) throw new Error('the job queue is closed');
      const id = toBullmqJobId(jobId);
      // BullMQ's remove answers 1 for an unknown id too, and would drop a finished job's record: ask first.
      if (placeOf(await queue.getJobState(id)) !== 'queued') return false;
      // It removes a job unless a worker holds its lock (0: taken meanwhile). An on-time promotion
      // of it then finds no job and does nothing.
      return (await queue.remove(id, { removeChildren: false })) === 1;
    },

    async jobStates(jobIds: readonly string[]): Promise<readonly JobPlace[]> {
      if (closed) throw new Error('the job queue is closed');
      return Promise.all(
        jobIds.map(async (jobId) => {
          const id = toBullmqJobId(jobId);
          const place = placeOf(await queue.getJobState(id));
          if (place !== 'queued') return place;
          // Queued again after a worker had it: a stalled job BullMQ moved back, or a failed attempt's backoff.
          const job = await queue.getJob(id);
          return job !== undefined && (job.attemptsStarted > 0 || job.attemptsMade > 0) ? 'returned' : place;
        }),
      );
    },

    inspectQueue: (inspectOptions) => inspectBullmq(queue, inspectOptions),

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      onTime.clear();
      await setUpSettled(queue, drops);
      await queue.close();
    },
  };
}

/** Delayed jobs watched at once by one queue (each a timer); past it, later ones wake at BullMQ's own precision. */
const ON_TIME_MAX_WATCHED = 100_000;
/** The most a job is promoted before its due time when its enqueuer accepts it early (`EnqueueOptions.earlyMs`). */
const ON_TIME_MAX_EARLY_MS = 1_000;
/** Longer delays are left to BullMQ alone (a timer held that long is not worth its few milliseconds). */
const ON_TIME_MAX_DELAY_MS = 15 * 60_000;

/**
 * Promotes each delayed job this process added at its due time (or up to `earlyMs` before it,
 * where its enqueuer accepts an early delivery), from a timer of this process.
 * A BullMQ worker waits for its next delayed job in a blocking Redis call whose timeout Redis
 * checks only `hz` times a second (every 100 ms by default), so a delayed job would start up to
 * that late; promoted on time, it starts within milliseconds. Best effort: a job whose adding
 * process is gone, or that BullMQ moved first, runs at BullMQ's own time (docs/decisions/084).
 */
function onTimeWakes(promote: (jobId: string) => Promise<boolean>): {
  watch(jobId: string, delayMs: number, earlyMs: number): void;
  clear(): void;
} {
  const timers = new Set<NodeJS.Timeout>();
  return {
    watch(jobId, delayMs, earlyMs) {
      if (delayMs <= 0 || delayMs > ON_TIME_MAX_DELAY_MS || timers.size >= ON_TIME_MAX_WATCHED) return;
      const lead = Math.min(Math.max(0, earlyMs), ON_TIME_MAX_EARLY_MS);
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          void promote(jobId).catch(noop);
        },
        Math.max(0, Math.ceil(delayMs - lead)),
      );
      timer.unref();
      timers.add(timer);
    },
    clear() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}

/** Jobs per `addBulk` call of `enqueueMany` (one ioredis pipeline, one socket write each): large enough to save round trips, small enough not to stall Redis. */
const BULK_CHUNK = 1_000;

/** The BullMQ options of every execution job: its id, its delay and priority, the infrastructure attempts and retention. */
function jobOptions(
  jobId: string,
  delay: number,
  priority: number | undefined,
  retention: JobRetention,
): BulkJobOptions {
  return {
    jobId: toBullmqJobId(jobId),
    ...(delay > 0 ? { delay: Math.ceil(delay) } : {}),
    ...(priority === undefined ? {} : { priority }),
    attempts: INFRA_ATTEMPTS,
    backoff: { type: 'exponential', delay: INFRA_BACKOFF_MS },
    removeOnComplete: bullmqKeepJobs(retention.completed),
    removeOnFail: bullmqKeepJobs(retention.failed),
  };
}

/** A job's `delayMs` (default 0), refused unless finite and ≥ 0. */
function checkedDelay(delayMs: number | undefined): number {
  const delay = delayMs ?? 0;
  if (!Number.isFinite(delay) || delay < 0)
    throw new RangeError(`delayMs must be a finite number ≥ 0; got ${String(delay)}`);
  return delay;
}

/** A job's `priority`, refused unless an integer in 1..{@link JOB_PRIORITY_MAX} (BullMQ's own bound). */
function checkedPriority(priority: number | undefined): number | undefined {
  if (priority !== undefined && (!Number.isSafeInteger(priority) || priority < 1 || priority > JOB_PRIORITY_MAX))
    throw new RangeError(`priority must be an integer from 1 to ${JOB_PRIORITY_MAX}; got ${String(priority)}`);
  return priority;
}

/** Creates the consuming side over a BullMQ `Worker` on Redis, started by {@link JobConsumer.start}. */
export function createBullmqConsumer(options: BullmqConsumerOptions): JobConsumer {
  return openBullmqConsumer(redisDatastore(options.connection, options.prefix), options);
}

/** The consuming side over a BullMQ `Worker` on `datastore` (Redis or PostgreSQL), started by {@link JobConsumer.start}. */
export function openBullmqConsumer(datastore: BullmqDatastore, options: BullmqConsumerSettings): JobConsumer {
  const name = queueName(options);
  const lockDuration = positiveInteger('lockDurationMs', options.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS);
  const stalledInterval = positiveInteger(
    'stalledIntervalMs',
    options.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS,
  );
  const maxStalledCount = positiveInteger('maxStalledCount', options.maxStalledCount ?? DEFAULT_MAX_STALLED_COUNT);
  const onError = options.onError ?? (() => undefined);
  let opened: OpenedWorker<unknown> | undefined;
  let stopping: Promise<void> | undefined;
  let drops: DropWatch | undefined;

  return {
    start(processor: JobProcessor, startOptions: { readonly concurrency: number }): void {
      if (opened) throw new Error('the consumer is already started');
      if (stopping) throw new Error('the consumer is stopped');
      const concurrency = positiveInteger('concurrency', startOptions.concurrency);
      const current = datastore.worker(name, (job: Job) => deliver(job, processor), {
        concurrency,
        name: workerName(concurrency),
        lockDuration,
        stalledInterval,
        maxStalledCount,
        autorun: false,
      });
      const created = current.worker;
      created.on('error', onError);
      drops = watchDrops((listener) => created.on('ioredis:close', listener));
      if (options.onFailed) {
        const onFailed = options.onFailed;
        created.on('failed', (job: Job | undefined, error: Error) => {
          if (!job?.id) return;
          const final = error instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
          onFailed({ jobId: fromBullmqJobId(job.id), error, final });
        });
      }
      opened = current;
      created.run().catch(onError);
    },

    stop(): Promise<void> {
      stopping ??= (async () => {
        const current = opened;
        if (!current) return;
        await setUpSettled(current.worker, drops);
        await closeWorker(current.worker);
        await current.release();
      })();
      return stopping;
    },
  };
}

/**
 * The drops of a BullMQ object's command connection, as {@link watchDrops} follows them: whether
 * it has dropped (it retries), and `onNext`, which calls back at its next drop (returns the
 * unsubscribe).
 */
export interface DropWatch {
  readonly dropped: () => boolean;
  readonly onNext: (callback: () => void) => () => void;
}

/** Follows the drops `listen` reports (BullMQ's `ioredis:close`: the command connection closed, and ioredis retries it). */
export function watchDrops(listen: (listener: () => void) => void): DropWatch {
  let dropped = false;
  const waiting = new Set<() => void>();
  listen(() => {
    dropped = true;
    for (const callback of [...waiting]) callback();
  });
  return {
    dropped: () => dropped,
    onNext: (callback) => {
      waiting.add(callback);
      return () => waiting.delete(callback);
    },
  };
}

/**
 * Resolves once BullMQ has finished setting up `target`'s connections (connect, then an INFO
 * version check), or once its connection has dropped (Redis unreachable: the set-up cannot
 * finish now, and waiting could last the whole outage). BullMQ 5 closing a connection while
 * that INFO is unanswered drops the reply, and its set-up then reports "Connection is closed."
 * on an emitter whose listeners the close removed: an unobserved rejection. Closed after its
 * set-up, a connection has no such command left (docs/decisions/055).
 */
export async function setUpSettled(target: Queue | Worker, drops: DropWatch | undefined): Promise<void> {
  if (drops?.dropped() === true) return;
  let unsubscribe = noop;
  const dropped = new Promise<void>((resolve) => (unsubscribe = drops?.onNext(resolve) ?? noop));
  try {
    await Promise.race([target.waitUntilReady().then(noop, noop), dropped]);
  } finally {
    unsubscribe();
  }
}

function noop(): void {
  // nothing to do
}

/**
 * A BullMQ job state as a {@link JobPlace}: `paused` / `waiting-children` count as queued (they
 * will be delivered). Whether a queued job is `returned` takes the job itself (`jobStates`).
 */
function placeOf(state: string): JobPlace {
  if (state === 'active') return 'active';
  if (state === 'completed' || state === 'failed') return 'finished';
  if (state === 'unknown') return 'missing';
  return 'queued';
}

/** Runs one delivery of `job` through the engine's processor. */
async function deliver(job: Job, processor: JobProcessor): Promise<void> {
  if (job.id === undefined) throw new UnrecoverableError('job without an id');
  // `attemptsStarted` counts every move to active, including the one of a stalled job taken
  // over from a dead worker; `attemptsMade` only counts failed attempts.
  const delivery = job.attemptsStarted > 0 ? job.attemptsStarted : job.attemptsMade + 1;
  try {
    await processor(job.data as unknown, { jobId: fromBullmqJobId(job.id), delivery });
  } catch (error) {
    if (ReactorError.is(error) && error.code === 'job_malformed') {
      const terminal = new UnrecoverableError(error.message);
      terminal.cause = error;
      throw terminal;
    }
    throw error;
  }
}

function queueName(options: { readonly name?: string }): string {
  const name = options.name ?? DEFAULT_QUEUE_NAME;
  if (name.length === 0 || name.includes(':'))
    throw new RangeError(`queue name must be non-empty and without ':'; got ${JSON.stringify(name)}`);
  return name;
}

/**
 * The slow path of a queue call that failed with `first`: on an outage (`isOutage`), `again` is
 * called with backoff until `toleranceMs` after the first failure, then the call fails with
 * {@link QueueUnavailableError}; any other error is thrown as it is.
 */
async function rideOut<R>(
  operation: string,
  first: unknown,
  isOutage: (error: unknown) => boolean,
  toleranceMs: number,
  closed: () => boolean,
  again: () => Promise<R>,
): Promise<R> {
  const since = performance.now();
  let error = first;
  for (let attempt = 0; ; attempt++) {
    if (!isOutage(error)) throw error;
    const waitedMs = performance.now() - since;
    if (closed() || waitedMs >= toleranceMs)
      throw new QueueUnavailableError(operation, error, waitedMs >= 1 ? Math.round(waitedMs) : undefined);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(50 * 2 ** Math.min(attempt, 4), 500, toleranceMs - waitedMs)),
    );
    try {
      return await again();
    } catch (failed) {
      error = failed;
    }
  }
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer; got ${String(value)}`);
  return value;
}
