/**
 * The worker: takes jobs from a consumer and hands each, decoded, to the engine. A malformed or
 * foreign payload is refused with `MalformedJobError` (the queue fails it without retrying).
 * Its close may carry a deadline: in-flight jobs still running then are stopped and handed back
 * to the queue (docs/decisions/069).
 *
 * @module
 */
import { setMaxListeners } from 'node:events';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { Engine } from '../engine/engine.js';
import type { JobConsumer } from '../ports/queue.js';
import { WorkerShutdownError } from '../errors.js';
import { decodeJob } from './payload.js';

/** How long {@link Worker.close} waits, after its deadline, for interrupted steps to return. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 1_000;

/** Options of {@link createWorker}. */
export interface WorkerOptions {
  readonly engine: Engine;
  readonly consumer: JobConsumer;
  /** Reactors this worker processes (by name). */
  readonly reactors?: readonly AnyReactorDefinition[];
  /** Jobs processed at once. Default 8. */
  readonly concurrency?: number;
  /**
   * The deadline {@link Worker.close} applies when it is given none: how long in-flight jobs may
   * go on once the close began before their steps are interrupted and their executions handed
   * back. Default: none (a close waits for in-flight jobs however long they take).
   */
  readonly shutdownTimeoutMs?: number;
}

/** Options of {@link Worker.close}. */
export interface WorkerCloseOptions {
  /**
   * How long in-flight jobs may go on after the close began. When it passes, each running step's
   * `ctx.signal` is aborted with `WorkerShutdownError` (code `worker_shutdown`); the step is
   * interrupted, not failed (no retry is counted, nothing is rolled back or recorded), and its
   * execution is handed back to the queue at once, to resume on another worker, where the
   * interrupted step runs again. Default: the worker's `shutdownTimeoutMs`, else no deadline.
   */
  readonly timeoutMs?: number;
  /**
   * After the deadline, how long to wait for interrupted step bodies to return before the close
   * resolves without them (see {@link WorkerCloseReport.abandoned}). Default 1 s.
   */
  readonly graceMs?: number;
}

/** What {@link Worker.close} did. */
export interface WorkerCloseReport {
  /** Jobs still running at the deadline, whose steps were interrupted (0 without a deadline, or when every job finished in time). */
  readonly interrupted: number;
  /**
   * Jobs still running when the grace after the deadline ran out: a step body that ignores its
   * `ctx.signal`. The worker does not wait for them; their executions' liveness leases are not
   * released while the body may still run, so exit the process: the leases then lapse and the
   * executions resume elsewhere (BullMQ's stall detection redelivers their jobs).
   */
  readonly abandoned: number;
}

/** A running worker. */
export interface Worker {
  /** Stops taking jobs; resolves when in-flight jobs have finished (graceful shutdown, no deadline). */
  stop(): Promise<void>;
  /**
   * Stops taking jobs and resolves once in-flight jobs have finished — or, with a deadline
   * (`timeoutMs`, or the worker's `shutdownTimeoutMs`), once they have been interrupted and handed
   * back. The first call decides; calling it again (or `stop`) returns the same promise.
   *
   * @example
   * ```ts
   * process.once('SIGTERM', () => void worker.close({ timeoutMs: 20_000 }).then(() => process.exit(0)));
   * ```
   */
  close(options?: WorkerCloseOptions): Promise<WorkerCloseReport>;
}

/**
 * Starts a worker.
 *
 * @example
 * ```ts
 * const worker = createWorker({ engine, consumer, reactors: [checkout], concurrency: 8, shutdownTimeoutMs: 20_000 });
 * process.once('SIGTERM', () => void worker.close());
 * ```
 */
export function createWorker(options: WorkerOptions): Worker {
  const defaultTimeout =
    options.shutdownTimeoutMs === undefined ? undefined : duration('shutdownTimeoutMs', options.shutdownTimeoutMs);
  const shutdown = new AbortController();
  setMaxListeners(0, shutdown.signal); // every in-flight job listens to it: as many as the concurrency
  const inFlight = new Set<Promise<void>>();
  options.engine.register(...(options.reactors ?? []));
  options.consumer.start(
    (payload, delivery) => {
      const job = options.engine.process(decodeJob(payload), { ...delivery, signal: shutdown.signal });
      inFlight.add(job);
      void job.then(
        () => inFlight.delete(job),
        () => inFlight.delete(job),
      );
      return job;
    },
    { concurrency: options.concurrency ?? 8 },
  );
  // Every worker takes part in the recovery sweep, one at a time across workers (docs/decisions/066).
  const stopSweeps = options.engine.startSweeps();
  let closing: Promise<WorkerCloseReport> | undefined;
  const begin = (timeoutMs: number | undefined, graceMs: number): Promise<WorkerCloseReport> => {
    stopSweeps();
    const stopped = options.consumer.stop();
    return (async () => {
      if (timeoutMs === undefined) {
        await stopped;
        return { interrupted: 0, abandoned: 0 };
      }
      if (await within(stopped, timeoutMs)) return { interrupted: 0, abandoned: 0 };
      const interrupted = inFlight.size;
      shutdown.abort(new WorkerShutdownError(timeoutMs));
      if (await within(stopped, graceMs)) return { interrupted, abandoned: 0 };
      return { interrupted, abandoned: inFlight.size };
    })();
  };
  return {
    stop: () => (closing ??= begin(undefined, 0)).then(() => undefined),
    close: (closeOptions = {}) => {
      if (closing) return closing;
      const timeoutMs =
        closeOptions.timeoutMs === undefined ? defaultTimeout : duration('timeoutMs', closeOptions.timeoutMs);
      return (closing = begin(timeoutMs, duration('graceMs', closeOptions.graceMs ?? DEFAULT_SHUTDOWN_GRACE_MS)));
    },
  };
}

/** True when `work` settles within `ms` (its rejection is the caller's). */
async function within(work: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true as const), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function duration(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0)
    throw new RangeError(`${name} must be a finite number of ms ≥ 0; got ${String(value)}`);
  return value;
}
