/**
 * The schedules of the Redis runtime over BullMQ's job schedulers: one job scheduler per
 * schedule on the queue `<name>-schedules`, its template carrying the schedule's definition (so
 * Redis holds the definition and nothing else), each tick a job whose processing hands the tick
 * over. BullMQ keeps one pending job per scheduler and creates each next one when a worker takes
 * the current one, so one worker gets each tick; a tick's idempotency key makes a redelivery
 * (a stalled job) harmless.
 *
 * @module
 */
import { closeWorker } from './bullmq-close.js';
import type { Job, JobSchedulerJson, Queue, RepeatOptions } from 'bullmq';
import type { ScheduleBackend, TickHandler } from '../ports/schedules.js';
import type { ScheduleDefinition, ScheduleFailure } from '../schedules/types.js';
import { setUpSettled, watchDrops, type DropWatch } from './bullmq.js';
import { redisDatastore, type BullmqConnection, type BullmqDatastore } from './bullmq-datastore.js';
import { DEFAULT_QUEUE_NAME, KEEP_COMPLETED_MS, KEEP_FAILED_MS } from './policy.js';

/** The name of a schedule tick job. */
export const SCHEDULE_TICK_JOB = 'schedule-tick';

/** What the schedules are told on any datastore ({@link createBullmqSchedules} on Redis, `createBullmqPostgresSchedules` on PostgreSQL). */
export interface BullmqSchedulesSettings {
  /** The runtime's BullMQ queue name (default `ts-reactor`); the ticks go to `<name>-schedules`. */
  readonly name?: string;
  /** Ticks handled at once by one consumer. Default 4. */
  readonly concurrency?: number;
}

/** Options of {@link createBullmqSchedules}: BullMQ over Redis. */
export interface BullmqSchedulesOptions extends BullmqSchedulesSettings {
  readonly connection: BullmqConnection;
  /** BullMQ key prefix; default `rx`. */
  readonly prefix?: string;
}

interface TickData {
  readonly v: 1;
  readonly definition: ScheduleDefinition;
}

/** A tick job's return value: the tick's failure, when it started nothing. */
interface TickOutcome {
  readonly v: 1;
  readonly failed?: ScheduleFailure;
}

/** Completed tick jobs read for the schedules' latest outcomes (BullMQ keeps at most 1,000). */
const OUTCOMES_READ = 1_000;

/** The name of the tick queue of the runtime queue `name`. */
export function scheduleQueueName(name: string = DEFAULT_QUEUE_NAME): string {
  return `${name}-schedules`;
}

/** A {@link ScheduleBackend} on BullMQ job schedulers over Redis. */
export function createBullmqSchedules(options: BullmqSchedulesOptions): ScheduleBackend {
  return openBullmqSchedules(redisDatastore(options.connection, options.prefix), options);
}

/** A {@link ScheduleBackend} on BullMQ job schedulers on `datastore` (Redis or PostgreSQL). */
export function openBullmqSchedules(datastore: BullmqDatastore, options: BullmqSchedulesSettings): ScheduleBackend {
  const name = scheduleQueueName(options.name);
  let queue: Queue<TickData> | undefined;
  let drops: DropWatch | undefined;
  const open = (): Queue<TickData> => {
    if (queue) return queue;
    const created = datastore.queue<TickData>(name);
    created.on('error', () => undefined); // errors surface on the calls that hit them
    drops = watchDrops((listener) => created.on('ioredis:close', listener));
    return (queue = created);
  };
  return {
    put: async (definition, firstTick) => {
      await open().upsertJobScheduler(definition.id, repeatOf(definition, firstTick), {
        name: SCHEDULE_TICK_JOB,
        data: { v: 1, definition },
        opts: {
          removeOnComplete: { age: KEEP_COMPLETED_MS / 1000, count: 1_000 },
          removeOnFail: { age: KEEP_FAILED_MS / 1000, count: 1_000 },
        },
      });
    },
    get: async (id) => definitionOf(await open().getJobScheduler(id)),
    list: async () =>
      (await open().getJobSchedulers(0, -1, true))
        .map(definitionOf)
        .filter((d): d is ScheduleDefinition => d !== undefined),
    remove: (id) => open().removeJobScheduler(id),
    failures: async () => latestFailures(await open().getCompleted(0, OUTCOMES_READ - 1)),
    consume: (handler) => consumeTicks(datastore, name, options.concurrency ?? 4, handler),
    close: async () => {
      if (!queue) return;
      await setUpSettled(queue, drops); // decision 055
      await queue.close();
    },
  };
}

/** BullMQ's repeat options of a definition: an interval from its first tick, or a cron pattern in its zone. */
function repeatOf(definition: ScheduleDefinition, firstTick: number | undefined): Omit<RepeatOptions, 'key'> {
  const end = definition.endAt === undefined ? {} : { endDate: definition.endAt - 1 };
  if (definition.everyMs !== undefined)
    return { every: definition.everyMs, ...(firstTick === undefined ? {} : { startDate: firstTick }), ...end };
  const start = definition.startAt === undefined ? {} : { startDate: definition.startAt };
  return { pattern: definition.cron!.pattern, tz: definition.cron!.tz, ...start, ...end };
}

function definitionOf(json: JobSchedulerJson<TickData> | undefined): ScheduleDefinition | undefined {
  const data = json?.template?.data;
  return data?.v === 1 && typeof data.definition?.id === 'string' ? data.definition : undefined;
}

/** A BullMQ worker on the tick queue: each job's tick (its scheduled time) goes to `handler`. */
function consumeTicks(
  datastore: BullmqDatastore,
  name: string,
  concurrency: number,
  handler: TickHandler,
): () => Promise<void> {
  // A worker's connections of its own: a connection passed in is duplicated, never closed.
  const { worker, release } = datastore.worker<TickData>(
    name,
    async (job: Job<TickData>) => {
      const definition = job.data?.definition;
      const tick = tickOf(job);
      if (job.data?.v !== 1 || !definition || tick === undefined) return; // not a tick of this version: dropped
      const failed = await handler(definition, tick);
      return { v: 1, ...(failed === undefined ? {} : { failed }) } satisfies TickOutcome;
    },
    { concurrency },
  );
  worker.on('error', () => undefined); // it reconnects; the calls that fail say so
  const drops = watchDrops((listener) => worker.on('ioredis:close', listener));
  return async () => {
    // Closed only once BullMQ's set-up of its connections is over (or cannot finish): nothing rejects unobserved (decision 055).
    await setUpSettled(worker, drops);
    await closeWorker(worker); // ends even if its blocking connection is between reconnection attempts
    await release();
  };
}

/** A tick job's scheduled time: its `prevMillis`, else the millis its id ends with (`repeat:<id>:<millis>`). */
function tickOf(job: Job<TickData>): number | undefined {
  const prev = (job.opts as { prevMillis?: number }).prevMillis;
  if (typeof prev === 'number' && Number.isFinite(prev)) return prev;
  const millis = Number(job.id?.split(':').pop());
  return Number.isFinite(millis) ? millis : undefined;
}

/** Of completed tick jobs, each schedule's newest: its failure, when that tick failed. */
function latestFailures(jobs: readonly Job<TickData>[]): ReadonlyMap<string, ScheduleFailure> {
  const newest = new Map<string, Job<TickData>>();
  for (const job of jobs) {
    const id = job.data?.definition?.id;
    if (typeof id !== 'string') continue;
    const seen = newest.get(id);
    if (seen === undefined || (job.finishedOn ?? 0) > (seen.finishedOn ?? 0)) newest.set(id, job);
  }
  const failures = new Map<string, ScheduleFailure>();
  for (const [id, job] of newest) {
    const outcome = job.returnvalue as TickOutcome | null | undefined;
    if (outcome?.v === 1 && outcome.failed !== undefined) failures.set(id, outcome.failed);
  }
  return failures;
}
