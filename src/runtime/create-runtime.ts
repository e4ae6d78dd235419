/**
 * `createRuntime`: an engine, its workers and its schedules over one {@link Backend}. The one
 * place a backend's parts are handed to the engine; the embedded engine and the Redis runtime
 * are thin adapters that build their backend and call it.
 *
 * @module
 */
import { createEngine, type Engine, type EngineOptions } from '../engine/engine.js';
import { silentLogger } from '../engine/model/logger.js';
import { RuntimeOptionError } from '../errors.js';
import type { Backend } from '../ports/backend.js';
import { systemClock } from '../ports/clock.js';
import type { BackendHealth } from '../ports/health.js';
import type { QueueInspector } from '../ports/queue-inspector.js';
import { createWorker, type Worker, type WorkerCloseOptions } from '../queue/worker.js';
import { hostWorkerName } from '../queue/worker-name.js';
import { scheduleObservers, type RuntimeMiddleware } from '../schedules/events.js';
import { Schedules } from '../schedules/service.js';
import type { ScheduleInputFn } from '../schedules/types.js';
import { consumerAfter, engineAfter } from './ready-gate.js';

/** The engine options a {@link Backend} provides, which {@link RuntimeOptions} therefore leaves out. */
export type BackendPart =
  | 'store'
  | 'coordinator'
  | 'queue'
  | 'waitList'
  | 'fanOut'
  | 'jobLeases'
  | 'interruptClaims'
  | 'events'
  | 'eventWaits'
  | 'executionStream';

/** Options of {@link createRuntime}: the engine's options but the backend's parts, and the schedules' inputs. */
export type RuntimeOptions = Omit<EngineOptions, BackendPart | 'middleware'> & {
  /** Middleware: the engine's events and work scopes, and with `onScheduleEvent` the schedules' events. */
  readonly middleware?: readonly RuntimeMiddleware[];
  /** Computed schedule inputs by name (a schedule's `inputFrom`), called with each tick's time. */
  readonly scheduleInputs?: Readonly<Record<string, ScheduleInputFn>>;
};

/** Options of {@link Runtime.startWorker}. */
export interface StartWorkerOptions {
  /** Jobs processed at once. Default 8. */
  readonly concurrency?: number;
  /** The deadline of the worker's close when the close gives none (`Worker.close`). Default: no deadline. */
  readonly shutdownTimeoutMs?: number;
}

/** An engine over a backend, its schedules, and the workers started for it. */
export interface Runtime {
  /** The engine (gated on the backend's start-up check when it has one, `Backend.ready`). */
  readonly engine: Engine;
  /** Schedules on the backend's `schedules`; their ticks are taken from the first `startWorker` on. */
  readonly schedules: Schedules;
  /** The backend's queue for operators. */
  readonly queueInspector: QueueInspector;
  /** The backend's health now, for a readiness check. */
  health(): BackendHealth;
  /** Starts a worker in this process on a consumer of the backend's queue; the first also starts taking schedule ticks. */
  startWorker(options?: StartWorkerOptions): Worker;
  /**
   * Stops taking schedule ticks, closes the workers (`worker.close(options)`), waits for the
   * wake-ups their jobs started (`engine.idle()`), then closes the backend. Calling it again
   * returns the same promise.
   */
  close(options?: WorkerCloseOptions): Promise<void>;
}

/**
 * Wires an engine over `backend`, with its schedules and its workers.
 *
 * @throws RuntimeOptionError (`runtime_option_invalid`, option `jobLeases`) when the backend is
 *   shared between processes and brings no job leases: leases composed in this process would
 *   leave its jobs unfenced against other processes' workers.
 * @example
 * ```ts
 * const runtime = createRuntime(createMemoryBackend(), { reactors: [checkout] });
 * runtime.startWorker({ concurrency: 4 });
 * await runtime.engine.start(checkout, { orderId: 'o-1' });
 * ```
 */
export function createRuntime(backend: Backend, options: RuntimeOptions = {}): Runtime {
  if (backend.shared && backend.jobLeases === undefined)
    throw new RuntimeOptionError(
      { factory: 'createRuntime', option: 'jobLeases', value: 'undefined' },
      `is required: the ${backend.name} backend is shared between processes, and job leases composed in this process would not fence its jobs`,
    );
  const { scheduleInputs = {}, ...engineOptions } = options;
  const reactors = engineOptions.reactors ?? [];
  const logger = engineOptions.logger ?? silentLogger;
  const created = createEngine({
    workerName: hostWorkerName(),
    ...engineOptions,
    store: backend.store,
    coordinator: backend.coordinator,
    queue: backend.queue,
    ...(backend.waitList === undefined ? {} : { waitList: backend.waitList }),
    ...(backend.fanOut === undefined ? {} : { fanOut: backend.fanOut }),
    ...(backend.jobLeases === undefined ? {} : { jobLeases: backend.jobLeases }),
    ...(backend.events === undefined ? {} : { events: backend.events }),
    ...(backend.eventWaits === undefined ? {} : { eventWaits: backend.eventWaits }),
    ...(backend.executionStream === undefined ? {} : { executionStream: backend.executionStream }),
    interruptClaims: backend.interruptClaims,
    reactors,
  });
  const ready = backend.ready;
  const engine = ready === undefined ? created : engineAfter(created, ready);
  const schedules = new Schedules({
    backend: backend.schedules,
    engine,
    clock: engineOptions.clock ?? systemClock,
    reactors,
    inputs: scheduleInputs,
    maxInputBytes: backend.store.maxRecordBytes, // a fixed input must fit a record
    observers: scheduleObservers(engineOptions.middleware),
    ...(engineOptions.logger === undefined ? {} : { logger: engineOptions.logger }),
  });
  const workers: Worker[] = [];
  let stopTicks: (() => Promise<void>) | undefined;
  let closing: Promise<void> | undefined;
  return {
    engine,
    schedules,
    queueInspector: backend.queueInspector,
    health: () => backend.health(),
    startWorker: (workerOptions: StartWorkerOptions = {}) => {
      const consumer = backend.consumer();
      const worker = createWorker({
        engine,
        consumer: ready === undefined ? consumer : consumerAfter(consumer, ready, logger),
        ...(workerOptions.concurrency === undefined ? {} : { concurrency: workerOptions.concurrency }),
        ...(workerOptions.shutdownTimeoutMs === undefined
          ? {}
          : { shutdownTimeoutMs: workerOptions.shutdownTimeoutMs }),
      });
      // A stopped worker is forgotten (a process that starts and stops workers keeps none of them).
      const forget = (): void => {
        const at = workers.indexOf(tracked);
        if (at >= 0) workers.splice(at, 1);
      };
      const tracked: Worker = {
        stop: () => worker.stop().finally(forget),
        close: (options) => worker.close(options).finally(forget),
      };
      workers.push(tracked);
      stopTicks ??= schedules.consume();
      return tracked;
    },
    close: (closeOptions?: WorkerCloseOptions) =>
      (closing ??= (async () => {
        // Workers first (their jobs finish), then the wake-ups those jobs started, then the backend:
        // nothing is sent on a closed connection, so nothing rejects unobserved (docs/decisions/048).
        await stopTicks?.();
        await Promise.all(workers.map((w) => w.close(closeOptions)));
        await engine.idle();
        await backend.close();
      })()),
  };
}
