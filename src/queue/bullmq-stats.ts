/**
 * What is in a BullMQ queue right now, for the metrics' gauges: its jobs by state (BullMQ's
 * `getJobCounts`) and how long the job that has waited longest to run has been runnable. Both
 * are a few Redis commands and read no job's payload beyond the one or two jobs at the heads of
 * the waiting lists.
 *
 * @module
 */
import { Cluster } from 'ioredis';
import { setUpSettled, watchDrops } from './bullmq.js';
import { redisDatastore, type BullmqDatastore } from './bullmq-datastore.js';
import { DEFAULT_QUEUE_NAME } from './policy.js';

/**
 * The job states counted, BullMQ's names (`waiting` is BullMQ's `wait` list). `paused` is BullMQ
 * 5's list of the jobs of a paused queue; BullMQ 6 keeps those in `waiting`, and its `paused` is 0.
 */
export const QUEUE_JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'paused', 'failed'] as const;

/** The states asked of BullMQ: BullMQ 5 adds `paused` itself to a count that asks for `waiting` (BullMQ 6 has no such state). */
const ASKED_STATES = QUEUE_JOB_STATES.filter(
  (state): state is Exclude<(typeof QUEUE_JOB_STATES)[number], 'paused'> => state !== 'paused',
);

/** What the reader is told on any datastore ({@link createBullmqQueueStats} on Redis, `createBullmqPostgresQueueStats` on PostgreSQL). */
export interface BullmqQueueStatsSettings {
  /** BullMQ queue name; default `ts-reactor`. */
  readonly name?: string;
  /** The time now in ms (BullMQ stamps jobs with their producer's `Date.now()`). Default `Date.now`. */
  readonly now?: () => number;
}

/** Options of {@link createBullmqQueueStats}: the queue to read on Redis, as the runtime names it. */
export interface BullmqQueueStatsOptions extends BullmqQueueStatsSettings {
  /** The Redis URL; the reader opens a connection of its own, closed by {@link BullmqQueueStats.close}. Ignored with `cluster`. */
  readonly url?: string;
  /**
   * A Redis Cluster's startup nodes instead: the reader opens a cluster connection of its own, and
   * reads BullMQ's hash-tagged keys (`{<prefix>}:<name>:…`), as a runtime on a cluster writes them.
   */
  readonly cluster?: { readonly nodes: readonly { readonly host: string; readonly port: number }[] };
  /** BullMQ key prefix; default `rx`. */
  readonly prefix?: string;
}

/** Reads what a BullMQ queue holds. */
export interface BullmqQueueStats {
  /** Jobs by state, every state of {@link QUEUE_JOB_STATES} present (0 when empty). */
  jobCounts(): Promise<Readonly<Record<string, number>>>;
  /**
   * How long, in ms, the oldest runnable job has waited: of the next job without a priority
   * (the oldest in BullMQ's waiting list) and the next prioritized one, the longer. A job that
   * was delayed counts from its due time, not from when it was added. `undefined` when none waits.
   */
  oldestWaitingMs(): Promise<number | undefined>;
  close(): Promise<void>;
}

/** A reader of the Redis queue `name` under `prefix`, on a connection of its own. */
export function createBullmqQueueStats(options: BullmqQueueStatsOptions): BullmqQueueStats {
  checkedName(options.name);
  const prefix = options.prefix ?? 'rx';
  const cluster = options.cluster === undefined ? undefined : new Cluster([...options.cluster.nodes]);
  cluster?.on('error', () => undefined); // a failed read rejects its own call
  const datastore = redisDatastore(
    cluster ?? { url: options.url ?? 'redis://127.0.0.1:6379' },
    cluster === undefined ? prefix : `{${prefix}}`,
  );
  const stats = openBullmqQueueStats(datastore, options);
  return {
    ...stats,
    async close() {
      await stats.close();
      cluster?.disconnect(); // BullMQ leaves a connection passed in open
    },
  };
}

/** A reader of the queue `name` on `datastore` (Redis or PostgreSQL), on a connection of its own. */
export function openBullmqQueueStats(datastore: BullmqDatastore, options: BullmqQueueStatsSettings): BullmqQueueStats {
  const queue = datastore.queue(checkedName(options.name));
  queue.on('error', () => undefined); // a failed read rejects its own call
  const drops = watchDrops((listener) => queue.on('ioredis:close', listener));
  const now = options.now ?? Date.now;
  return {
    async jobCounts() {
      const counts = await queue.getJobCounts(...ASKED_STATES);
      return Object.fromEntries(QUEUE_JOB_STATES.map((state) => [state, counts[state] ?? 0]));
    },
    async oldestWaitingMs() {
      const [[waiting], [prioritized]] = await Promise.all([
        queue.getJobs(['wait'], 0, 0, true),
        queue.getJobs(['prioritized'], 0, 0, true),
      ]);
      const ages = [waiting, prioritized].filter((job) => job !== undefined).map((job) => waitedMs(job, now()));
      return ages.length === 0 ? undefined : Math.max(...ages);
    },
    async close() {
      await setUpSettled(queue, drops); // as the runtime's queue closes (docs/decisions/055)
      await queue.close();
    },
  };
}

/** The queue name (default `ts-reactor`), refused when empty or with a `:`. */
function checkedName(name: string = DEFAULT_QUEUE_NAME): string {
  if (name.length === 0 || name.includes(':'))
    throw new RangeError(`queue name must be non-empty and without ':'; got ${JSON.stringify(name)}`);
  return name;
}

/** How long `job` has been runnable at `now`: since it was added, plus its delay if it had one. */
function waitedMs(job: { readonly timestamp: number; readonly delay: number }, now: number): number {
  return Math.max(0, now - (job.timestamp + (job.delay > 0 ? job.delay : 0)));
}
