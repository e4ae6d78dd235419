/**
 * `ts-reactor/bullmq`: durable background execution on Redis and BullMQ, in any number of
 * worker processes.
 *
 * @example
 * ```ts
 * import { createRedisRuntime } from 'ts-reactor/bullmq';
 * const runtime = createRedisRuntime({ url: process.env.REDIS_URL!, reactors: [checkout] });
 * const queued = await runtime.engine.start(checkout, { orderId: 'o-1' });
 * const worker = runtime.startWorker({ concurrency: 8 });   // in a worker process
 * ```
 *
 * @module
 */
import type { AnyReactorDefinition } from './dsl/definition.js';
import { createEngine, type Engine, type EngineOptions } from './engine/engine.js';
import { createBullmqConsumer, createBullmqQueue, type BullmqConsumerOptions } from './queue/bullmq.js';
import { RedisWaitList } from './queue/redis-wait-list.js';
import { createWorker, type Worker } from './queue/worker.js';
import { createRedisBackend } from './storage/redis/index.js';
import type { Logger } from './dsl/context.js';

export * from './queue/bullmq.js';
export { RedisWaitList } from './queue/redis-wait-list.js';
export { createWorker, type Worker, type WorkerOptions } from './queue/worker.js';
export { decodeJob, encodeJob } from './queue/payload.js';

/** Options of {@link createRedisRuntime}. */
export interface RedisRuntimeOptions extends Partial<Omit<EngineOptions, 'store' | 'coordinator' | 'queue' | 'waitList' | 'fanOut' | 'jobLeases'>> {
  readonly url: string;
  /** Key prefix of the store, coordinator, wait lists and queue. Default `rx`. */
  readonly prefix?: string;
  readonly reactors?: readonly AnyReactorDefinition[];
  /** BullMQ queue name. Default `ts-reactor`. */
  readonly queueName?: string;
  /** Worker lock / stall detection tunables (how fast a dead worker's job is redelivered). */
  readonly stall?: Pick<BullmqConsumerOptions, 'lockDurationMs' | 'stalledIntervalMs' | 'maxStalledCount'>;
  /**
   * Hand a released lock straight to a waiter of this process (docs/decisions/037, 060), and queue
   * this process for grants of locks released by other processes (docs/decisions/059). Default
   * true; `false` frees the key at every release and takes no grants.
   */
  readonly lockHandOff?: boolean;
}

/** An engine over Redis + BullMQ, and a way to start workers for it. */
export interface RedisRuntime {
  readonly engine: Engine;
  /** Starts a worker in this process. */
  startWorker(options?: { readonly concurrency?: number }): Worker;
  /**
   * Stops the workers started here (their in-flight jobs finish), waits for the wake-ups they
   * started ({@link Engine.idle}), then closes every connection. Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/** Wires the Redis store and coordinator, the BullMQ queue and the Redis wait lists into one engine. */
export function createRedisRuntime(options: RedisRuntimeOptions): RedisRuntime {
  const { url, prefix, queueName, stall, lockHandOff, reactors = [], ...engineOptions } = options;
  const backend = createRedisBackend({ url, ...(prefix === undefined ? {} : { prefix }), ...(lockHandOff === undefined ? {} : { lockHandOff }) });
  const names = { ...(queueName === undefined ? {} : { name: queueName }), ...(prefix === undefined ? {} : { prefix }) };
  // BullMQ gets connections of its own: its many scripts would otherwise ride along every store transaction.
  const queue = createBullmqQueue({ connection: { url }, ...names });
  const waitList = new RedisWaitList({ redis: backend.redis, ...(prefix === undefined ? {} : { prefix }) });
  const engine = createEngine({ ...engineOptions, store: backend.store, coordinator: backend.coordinator, jobLeases: backend.jobLeases, queue, waitList, fanOut: backend.fanOut, reactors });
  const workers: Worker[] = [];
  let closing: Promise<void> | undefined;
  return {
    engine,
    startWorker: (workerOptions = {}) => {
      const consumer = createBullmqConsumer({ connection: { url }, ...names, ...stall, ...(engineOptions.logger ? consumerLogging(engineOptions.logger) : {}) });
      const worker = createWorker({ engine, consumer, ...(workerOptions.concurrency === undefined ? {} : { concurrency: workerOptions.concurrency }) });
      workers.push(worker);
      return worker;
    },
    close: () =>
      (closing ??= (async () => {
        // Workers first (their jobs finish), then the wake-ups those jobs started, then the connections:
        // nothing is sent on a closed connection, so nothing rejects unobserved (docs/decisions/048).
        await Promise.all(workers.map((w) => w.stop()));
        await engine.idle();
        await queue.close();
        await backend.close();
      })()),
  };
}

/** Infrastructure failures of a worker, logged with the execution they concern (the job id starts with it). */
function consumerLogging(logger: Logger): Pick<BullmqConsumerOptions, 'onError' | 'onFailed'> {
  return {
    onError: (error) => logger.error({ err: error }, 'BullMQ worker error (it reconnects)'),
    onFailed: ({ jobId, error, final }) => {
      const fields = { executionId: jobId.split(':')[0], jobId, final, err: error };
      if (final) logger.error(fields, `job ${jobId} failed for good: ${error.message}`);
      else logger.warn(fields, `job ${jobId} failed; BullMQ delivers it again: ${error.message}`);
    },
  };
}
