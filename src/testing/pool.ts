/**
 * The test engine's background pool: the embedded default's in-process queue, wait lists and
 * worker, on the test's manual clock. Async units, child reactors and background runs execute
 * in it; `drain()` waits for all of it deterministically.
 *
 * @module
 */
import type { Engine } from '../engine/engine.js';
import type { Clock } from '../ports/clock.js';
import { createMemoryQueue, type MemoryJobQueue, type MemoryWaitList } from '../queue/memory.js';
import { createWorker, type Worker } from '../queue/worker.js';

/** An in-process queue and worker pool for a test engine. */
export interface TestPool {
  readonly queue: MemoryJobQueue;
  readonly waitList: MemoryWaitList;
  /** Starts the pool's worker for `engine` (once the engine exists). */
  start(engine: Engine): void;
  /** Resolves once no job is ready, delayed or running. */
  drain(): Promise<void>;
  /** Stops the worker (in-flight jobs finish). */
  close(): Promise<void>;
}

/** Creates the pool; every delay of its queue goes through `clock`. */
export function createTestPool(clock: Clock, concurrency = 8): TestPool {
  const memory = createMemoryQueue({ clock });
  let worker: Worker | undefined;
  return {
    queue: memory.queue,
    waitList: memory.waitList,
    start: (engine) => {
      worker ??= createWorker({ engine, consumer: memory.consumer, concurrency });
    },
    drain: () => memory.drain(),
    close: async () => worker?.stop(),
  };
}
