/**
 * Where BullMQ keeps a queue: the one thing the BullMQ adapters (`bullmq.ts`,
 * `bullmq-schedules.ts`) take as a parameter to run on Redis or on PostgreSQL. A datastore opens
 * BullMQ `Queue` and `Worker` objects with its connection, and tells an outage from any other
 * error. Everything else (the job model, priorities, delays, promotion, dedupe, discard, stall
 * redelivery) is BullMQ's datastore-agnostic API, the same on both.
 *
 * This module holds the interface and the Redis datastore; the PostgreSQL one is in
 * `bullmq-postgres.ts`.
 *
 * @module
 */
import { Queue, Worker, type ConnectionOptions, type Processor, type WorkerOptions } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { coalesceWrites } from '../storage/redis/coalesce.js';
import { duplicateBlocking } from '../storage/redis/connection.js';
import { isConnectionFailure } from '../storage/redis/script.js';
import { commandClientOf } from './bullmq-internals.js';

/**
 * How to reach Redis: a URL (the adapter creates and closes its connections) or an existing
 * ioredis connection — a `Redis`, or a `Cluster` (then give the queue a hash-tagged `prefix`,
 * e.g. `{rx}`, so each queue's keys share one slot) — never closed by the adapter; a consumer
 * duplicates it for its own use (a `Cluster` keeps its own options: create it with
 * `maxRetriesPerRequest: null` in its `redisOptions`).
 */
export type BullmqConnection = { readonly url: string } | Redis | Cluster;

/** A worker's settings, as the adapters choose them; the datastore adds its connection (and Redis its key prefix). */
export type BullmqWorkerSettings = Omit<WorkerOptions, 'connection' | 'prefix'>;

/** A worker a datastore opened, with what it opened for it alone. */
export interface OpenedWorker<D> {
  readonly worker: Worker<D>;
  /** Closes what the datastore opened for this worker (a duplicated connection); call it after the worker closed. */
  release(): Promise<void>;
}

/** A datastore BullMQ runs on: Redis (BullMQ 5 or 6) or PostgreSQL (BullMQ 6). */
export interface BullmqDatastore {
  /** Which one, for messages and for the few places their behaviour differs. */
  readonly kind: 'redis' | 'postgres';
  /** A BullMQ queue named `name` on this datastore; the caller closes it. */
  queue<D = unknown>(name: string): Queue<D>;
  /** A BullMQ worker on the queue `name`, not yet running unless `settings.autorun` says so. */
  worker<D = unknown>(name: string, processor: Processor<D>, settings: BullmqWorkerSettings): OpenedWorker<D>;
  /** Whether `error` says the datastore could not be reached (the call may be made again), rather than refused the call. */
  isOutage(error: unknown): boolean;
}

/** The default BullMQ key prefix on Redis (BullMQ's own keys are `<prefix>:<name>:…`). */
export const DEFAULT_BULLMQ_PREFIX = 'rx';

/** BullMQ over Redis: `connection` under the key prefix `prefix` (default `rx`). */
export function redisDatastore(connection: BullmqConnection, prefix: string = DEFAULT_BULLMQ_PREFIX): BullmqDatastore {
  return {
    kind: 'redis',
    queue<D>(name: string): Queue<D> {
      const queue = new Queue<D>(name, { connection: connectionOptions(connection, false), prefix });
      coalesceCommands(queue);
      return queue;
    },
    worker<D>(name: string, processor: Processor<D>, settings: BullmqWorkerSettings): OpenedWorker<D> {
      // A Worker blocks on its connections, which BullMQ wants without per-request retries:
      // a passed-in connection is duplicated with that setting (and closed on release).
      const own = isRedis(connection) ? duplicateBlocking(connection) : undefined;
      const worker = new Worker<D>(name, processor, {
        ...settings,
        connection: own ?? connectionOptions(connection, true),
        prefix,
      });
      coalesceCommands(worker);
      return {
        worker,
        release: async () => {
          if (own) await own.quit().then(noop, () => own.disconnect());
        },
      };
    },
    isOutage: isConnectionFailure,
  };
}

/**
 * Makes a BullMQ object's command connection send the commands of one tick in one socket write,
 * as the backend's own connection does (decision 041): a worker finishing several jobs at once
 * writes each `moveToFinished` separately otherwise. Not for a cluster connection (one socket
 * per node), nor the worker's blocking connection (one command at a time).
 */
function coalesceCommands(owner: Queue | Worker): void {
  commandClientOf(owner)?.then((client) => {
    if (!(client as Redis | Cluster).isCluster) coalesceWrites(client as Redis);
  }, noop);
}

/**
 * Connection options for BullMQ; `blocking` connections (a Worker's) must not limit retries per
 * request. Both reconnect at least every second ({@link reconnectDelay}), so a queue and its
 * workers are back within a second of Redis.
 */
function connectionOptions(connection: BullmqConnection, blocking: boolean): ConnectionOptions {
  if (isRedis(connection)) return connection;
  return blocking
    ? { url: connection.url, maxRetriesPerRequest: null, retryStrategy: reconnectDelay }
    : { url: connection.url, retryStrategy: reconnectDelay };
}

/** Delay before reconnect attempt `times`: 100 ms more each time, at most 1 s (BullMQ's own grows to 20 s). */
function reconnectDelay(times: number): number {
  return Math.min(times * 100, 1000);
}

function isRedis(connection: BullmqConnection): connection is Redis | Cluster {
  return typeof (connection as Partial<Redis>).duplicate === 'function';
}

function noop(): void {
  // nothing to do
}
