import type { QueueInspector } from './ports/queue-inspector.js';
import type { Engine, EngineOptions } from './engine/engine.js';
import type { WorkerCloseOptions } from './queue/worker.js';
import { createRuntime } from './runtime/create-runtime.js';
import type { MemorySchedules } from './schedules/memory.js';
import type { Schedules } from './schedules/service.js';
import type { RuntimeMiddleware } from './schedules/events.js';
import type { ScheduleInputFn } from './schedules/types.js';
import { createMemoryBackend } from './storage/memory/backend.js';
import { checkedRecordTtl, refuseTtlBesideStore } from './storage/record-ttl.js';

/** Options of {@link createEmbeddedEngine}: an engine's options, with the store optional. */
export type EmbeddedEngineOptions = Omit<EngineOptions, 'store' | 'queue' | 'waitList' | 'middleware'> &
  Partial<Pick<EngineOptions, 'store'>> & {
    /** Middleware: the engine's events and work scopes, and with `onScheduleEvent` the schedules' events. */
    readonly middleware?: readonly RuntimeMiddleware[];
    /** Background jobs processed at once by the in-process worker pool. Default 8. */
    readonly workerConcurrency?: number;
    /** Where schedules live: pass one `MemorySchedules` to several engines to share it. Default: this engine's own. */
    readonly schedules?: MemorySchedules;
    /** Computed schedule inputs by name (a schedule's `inputFrom`), called with each tick's time. */
    readonly scheduleInputs?: Readonly<Record<string, ScheduleInputFn>>;
    /**
     * How long an execution record is kept after its last write, in ms (docs/operations.md,
     * "Retention"): a positive integer, or `Infinity` to keep every record for the life of the
     * process. Default 24 h. Anything else, or a `recordTtlMs` beside a `store` of your own (set
     * it on that store), is a `RuntimeOptionError`.
     */
    readonly recordTtlMs?: number;
  };

/** An engine on the embedded default, with its in-process background worker pool. */
export interface EmbeddedEngine extends Engine {
  /** Resolves when no background job is queued, delayed or running. */
  drain(): Promise<void>;
  /** Start reactors on a cron expression or at an interval; the ticks are timers on the engine clock (docs/time.md, "Schedules"). */
  readonly schedules: Schedules;
  /** The embedded pool's queue for operators: jobs by state, delayed and active jobs, the pool as its one worker (the dashboard reads it). */
  readonly queueInspector: QueueInspector;
  /**
   * Stops the worker pool: in-flight jobs finish, then the wake-ups they started. With
   * `timeoutMs`, jobs still running after that long have their steps' `ctx.signal` aborted with
   * `WorkerShutdownError` and their executions handed back (persisted as they were at their last
   * checkpoint, a job queued again); the close resolves once those steps returned, or after a
   * grace of `graceMs` (default 1 s) without the ones that ignore their signal.
   */
  close(options?: WorkerCloseOptions): Promise<void>;
}

/**
 * An engine on the embedded default: everything in this process, on the memory backend (store,
 * coordinator, queue and wait lists) — background execution included, with the same statuses,
 * park/wake and retry semantics as on Redis and BullMQ. No Redis needed. It is `createRuntime`
 * over `createMemoryBackend`, with one worker started (`workerConcurrency`).
 *
 * @example
 * ```ts
 * const engine = createEmbeddedEngine();
 * const result = await engine.run(checkout, { orderId: 'o-1' });
 * ```
 */
export function createEmbeddedEngine(options: EmbeddedEngineOptions = {}): EmbeddedEngine {
  const {
    workerConcurrency,
    schedules: board,
    recordTtlMs: askedTtl,
    store,
    coordinator,
    fanOut,
    jobLeases,
    interruptClaims,
    ...runtimeOptions
  } = options;
  const recordTtlMs = checkedRecordTtl('createEmbeddedEngine', askedTtl);
  refuseTtlBesideStore('createEmbeddedEngine', recordTtlMs, store);
  const backend = createMemoryBackend({
    clock: options.clock,
    store,
    coordinator,
    fanOut,
    jobLeases,
    interruptClaims,
    schedules: board,
    recordTtlMs,
  });
  const runtime = createRuntime(backend, runtimeOptions);
  runtime.startWorker({ concurrency: workerConcurrency ?? 8 });
  return Object.assign(runtime.engine, {
    drain: () => backend.drain(),
    schedules: runtime.schedules,
    queueInspector: runtime.queueInspector,
    close: (closeOptions?: WorkerCloseOptions) => runtime.close(closeOptions),
  });
}
