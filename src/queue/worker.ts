/**
 * The worker: takes jobs from a consumer and hands each, decoded, to the engine. A malformed or
 * foreign payload is refused with `MalformedJobError` (the queue fails it without retrying).
 *
 * @module
 */
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { Engine } from '../engine/engine.js';
import type { JobConsumer } from '../engine/ports/queue.js';
import { decodeJob } from './payload.js';

/** Options of {@link createWorker}. */
export interface WorkerOptions {
  readonly engine: Engine;
  readonly consumer: JobConsumer;
  /** Reactors this worker processes (by name). */
  readonly reactors?: readonly AnyReactorDefinition[];
  /** Jobs processed at once. Default 8. */
  readonly concurrency?: number;
}

/** A running worker. */
export interface Worker {
  /** Stops taking jobs; resolves when in-flight jobs have finished (graceful shutdown). */
  stop(): Promise<void>;
}

/**
 * Starts a worker.
 *
 * @example
 * ```ts
 * const worker = createWorker({ engine, consumer, reactors: [checkout], concurrency: 8 });
 * process.once('SIGTERM', () => void worker.stop());
 * ```
 */
export function createWorker(options: WorkerOptions): Worker {
  options.engine.register(...(options.reactors ?? []));
  options.consumer.start(async (payload, delivery) => options.engine.process(decodeJob(payload), delivery), { concurrency: options.concurrency ?? 8 });
  return { stop: () => options.consumer.stop() };
}
