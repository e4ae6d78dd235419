/**
 * The event types of the one event stream: every run, step, retry, compensation, undo, halt and
 * skip is a typed event. Pure types, so the ports (a record's `trace`) and every layer above can
 * name them; the runtime side (`EventHub`, `Middleware`) lives in `model/events.ts`.
 *
 * @module
 */
import type {
  ErrorJSON,
  FailureAction,
  FailureActionRefusal,
  FieldIssue,
  PrimitiveName,
  ResumeRefusal,
} from '../errors.js';

interface Base {
  readonly executionId: string;
  readonly rootExecutionId: string;
  readonly reactor: string;
  /** Engine clock time, ms. */
  readonly at: number;
}
interface StepBase extends Base {
  /** Step path: `charge`, `payment.charge` (compose), `items[3]` (map element). */
  readonly step: string;
}

/** An event about one element of a fan-out map; `step` is the map step. */
interface MapBase extends StepBase {
  readonly index: number;
}

interface CoordinationBase extends Base {
  readonly primitive: PrimitiveName;
  readonly key: string;
  /** The declaring step; absent for a reactor-level declaration. */
  readonly step?: string;
}

/** Every event the engine emits. Discriminated on `type`. */
export type ReactorEvent =
  | (Base & { readonly type: 'run.started'; readonly input: unknown })
  | (Base & { readonly type: 'run.completed' })
  | (Base & { readonly type: 'run.failed'; readonly step: string | undefined; readonly error: ErrorJSON })
  | (Base & { readonly type: 'run.halted'; readonly step: string | undefined; readonly reason: string })
  | (Base & { readonly type: 'run.rolling_back'; readonly step: string | undefined })
  | (Base & { readonly type: 'run.replayed'; readonly idempotencyKey: string })
  | (Base & { readonly type: 'run.cancelled'; readonly reason: string })
  /** The reactor's `deadline` passed (`deadlineAt`, engine clock, ms): the run was rolled back and ends `cancelled`, just after this event. */
  | (Base & { readonly type: 'run.deadline_exceeded'; readonly deadlineAt: number; readonly deadlineMs: number })
  /** A later debounced start with the same key (`supersededBy`) superseded this one before it ran: it ends `cancelled`, just after this event. */
  | (Base & { readonly type: 'run.superseded'; readonly supersededBy: string; readonly debounceKey: string })
  | (Base & {
      readonly type: 'run.queued';
      readonly jobId: string;
      readonly delayMs: number;
      readonly reason: 'start' | 'retry' | 'park' | 'busy' | 'resume';
    })
  /** An operator retried this execution: `retryExecutionId` is the new, linked execution. */
  | (Base & { readonly type: 'run.retried'; readonly retryExecutionId: string })
  /**
   * A worker met the execution without the definition its record names (`fingerprint`, and the
   * author's `version`): it ran nothing and left the job for a worker that has it, due again in
   * `delayMs` (docs/decisions/082). Nothing else about the execution changed.
   */
  | (Base & {
      readonly type: 'run.version_unavailable';
      readonly fingerprint: string;
      readonly version?: string;
      readonly jobId: string;
      readonly delayMs: number;
      readonly workerId: string;
    })
  | (Base & { readonly type: 'run.resumed'; readonly jobId: string; readonly delivery: number })
  /**
   * This worker's job of the execution stopped without writing its outcome: `lease_lost` (another
   * worker holds the execution now), `worker_shutdown` (handed back to the queue) or
   * `store_unavailable` (delivered again once the store answers). Nothing was rolled back.
   */
  | (Base & {
      readonly type: 'run.stopped';
      readonly reason: 'lease_lost' | 'worker_shutdown' | 'store_unavailable';
      readonly message: string;
    })
  /**
   * The recovery sweep found the execution stranded — no worker or inline run holds its liveness
   * lease and no job of the queue carries it (`reason`: `no_job` for a pending, parked or running
   * execution whose job is gone; `inline_lost` for an inline run whose process stopped) — and
   * re-enqueued it as `jobId` (`action: 'requeued'`), or ended it `aborted` (an inline run whose
   * reactor the sweeping worker does not know). `status` is the status it was found in, by the
   * name users see (`queued` for a record stored `pending`, decision 107); `count` how many times
   * the sweep has recovered it so far.
   */
  | (Base & {
      readonly type: 'run.recovered';
      readonly reason: 'no_job' | 'inline_lost';
      readonly action: 'requeued' | 'aborted';
      readonly status: 'queued' | 'parked' | 'running' | 'rolling_back';
      readonly count: number;
      readonly jobId?: string;
    })
  | (Base & {
      readonly type: 'run.parked';
      readonly primitive: PrimitiveName;
      readonly key: string;
      /** The contention attempt this park spent (every refused admission in a worker is one). */
      readonly attempt: number;
      readonly jobId: string;
      /** The contended step; absent for reactor-level contention. */ readonly step?: string;
      /**
       * Set on a park again behind the same live holder (a fallback job that found the key still
       * held by the holder the park recorded): how many such re-parks followed the first park.
       * Each spent a contention attempt; the trace keeps one entry for them all, at the first
       * park's time, with the newest `attempt` and `jobId` (docs/decisions/097).
       */
      readonly repeats?: number;
    })
  | (Base & {
      readonly type: 'run.woken';
      readonly primitive: PrimitiveName | 'async' | 'map' | 'sleep';
      readonly key: string;
      readonly jobId: string;
      /** The step it parked at; absent for reactor-level contention. */ readonly step?: string;
    })
  | (StepBase & { readonly type: 'step.started'; readonly attempt: number })
  | (StepBase & { readonly type: 'step.succeeded'; readonly attempt: number })
  /**
   * The step's body reported progress (`ctx.progress(data)`) in `attempt`: `data` is the reported
   * value as JSON gives it back. Published to listeners and to `engine.watch`, never kept in the
   * trace; the newest report of each step is kept on the record (`ExecutionRecord.progress`).
   */
  | (StepBase & { readonly type: 'step.progress'; readonly attempt: number; readonly data: unknown })
  | (StepBase & {
      readonly type: 'step.failed';
      readonly attempt: number;
      readonly error: ErrorJSON;
      readonly started: boolean;
    })
  | (StepBase & {
      readonly type: 'step.retrying';
      readonly attempt: number;
      readonly delayMs: number;
      readonly error: ErrorJSON;
    })
  /**
   * An attempt ran past the step's `timeout` (`timeoutMs`): its `ctx.signal` was aborted and the
   * attempt failed with `step_timed_out`. `ignoredSignal` is true when the body had not settled
   * when the attempt was failed (one event-loop turn after the abort): it ignores its signal and
   * may still be running; whatever it returns later is ignored.
   */
  | (StepBase & {
      readonly type: 'step.timed_out';
      readonly attempt: number;
      readonly timeoutMs: number;
      readonly ignoredSignal: boolean;
    })
  /**
   * A job of a redelivered execution found an attempt of this step its lost worker may have run
   * (docs/decisions/098): `worker_lost` — its start was on the record (durable mode) and it never
   * settled; `may_have_run` — the worker wrote no starts (a checkpoint interval) and the step could
   * have started since the last checkpoint; `interrupted` — a job a worker's shutdown handed back
   * had started it (durable mode) and stopped it (docs/decisions/118). Either way the attempt is
   * counted and the step is compensated on rollback as a step whose body ran. `worker`: the lost
   * or stopped worker, where known.
   */
  | (StepBase & {
      readonly type: 'step.attempt_lost';
      readonly attempt: number;
      readonly outcome: 'worker_lost' | 'may_have_run' | 'interrupted';
      readonly worker?: string;
    })
  /** A sleep step started: it wakes at `wakeAt` (engine clock, ms); in a worker the execution parks until then. */
  | (StepBase & { readonly type: 'step.sleeping'; readonly wakeAt: number })
  /** A sleep step woke (`early`: an operator's `engine.wake` before `wakeAt`); `step.succeeded` follows. */
  | (StepBase & { readonly type: 'step.woke'; readonly wakeAt: number; readonly early: boolean })
  | (StepBase & { readonly type: 'step.skipped'; readonly reason: string })
  | (StepBase & { readonly type: 'step.halted'; readonly reason: string })
  | (StepBase & { readonly type: 'step.compensated' })
  | (StepBase & {
      readonly type: 'step.compensate_failed';
      readonly reason: 'raised' | 'returned_failure' | 'coordination_unavailable';
      readonly message: string;
      readonly key?: string;
    })
  | (StepBase & { readonly type: 'step.undone' })
  | (StepBase & {
      readonly type: 'step.undo_failed';
      readonly reason: 'raised' | 'returned_failure' | 'coordination_unavailable';
      readonly message: string;
      readonly key?: string;
    })
  | (MapBase & { readonly type: 'map.element_dispatched'; readonly jobId: string })
  | (MapBase & {
      readonly type: 'map.element_retrying';
      readonly attempt: number;
      readonly delayMs: number;
      readonly jobId: string;
    })
  | (MapBase & { readonly type: 'map.element_completed' })
  | (MapBase & {
      readonly type: 'map.element_parked';
      readonly primitive: PrimitiveName;
      readonly key: string;
      readonly attempt: number;
      readonly jobId: string;
    })
  | (MapBase & { readonly type: 'map.element_failed'; readonly error: ErrorJSON })
  | (MapBase & { readonly type: 'map.element_skipped'; readonly reason: 'not_started' | 'skipped' | 'halted' })
  | (MapBase & { readonly type: 'map.rollback_dispatched'; readonly jobId: string })
  | (MapBase & { readonly type: 'map.element_undone' })
  | (MapBase & { readonly type: 'map.element_undo_failed'; readonly message: string })
  | (StepBase & {
      readonly type: 'map.parked';
      readonly phase: 'collect' | 'rollback';
      readonly jobId: string;
      readonly settled: number;
      readonly total: number;
    })
  | (StepBase & {
      readonly type: 'map.collected';
      readonly completed: number;
      readonly failed: number;
      readonly skipped: number;
      readonly notStarted: number;
    })
  | (CoordinationBase & {
      readonly type: 'coordination.acquired';
      readonly token?: string;
      readonly nesting?: number;
      /** A semaphore's limit, a rate limit's (first window's) limit, as evaluated for this admission. */
      readonly limit?: number;
      readonly nonce?: number;
      readonly bucket?: string;
    })
  | (CoordinationBase & {
      readonly type: 'coordination.released';
      readonly nesting?: number;
      /** The key went straight to a waiter of this process (docs/decisions/037). */ readonly handedOver?: true;
      /** A rate limit's charge given back: a later rate limit of the same admission refused (docs/decisions/085). */
      readonly refunded?: true;
    })
  | (CoordinationBase & { readonly type: 'coordination.waiting'; readonly holder?: string })
  | (CoordinationBase & {
      readonly type: 'coordination.contended';
      readonly waitedMs: number;
      readonly holder?: string;
    })
  | (CoordinationBase & {
      readonly type: 'coordination.denied';
      readonly reason: 'period' | 'rate_limited' | 'ordered_lock_chain_failed' | 'ordered_lock_stale';
      readonly bucket?: string;
      readonly retryAfterMs?: number;
      /** A rate limit's full window: its limit (as evaluated for this admission) and length. */
      readonly limit?: number;
      readonly periodMs?: number;
    })
  | (CoordinationBase & { readonly type: 'coordination.extended' })
  | (CoordinationBase & { readonly type: 'coordination.lost' })
  | (Base & {
      readonly type: 'run.paused';
      readonly interrupts: readonly {
        readonly step: string;
        readonly correlationId?: string;
        /** The event a `.waitForEvent` step waits for (its name); absent at an interrupt. */
        readonly event?: string;
        readonly timeoutAt?: number;
      }[];
    })
  /** A step failed for good under `onFailure: 'pause'`: the execution is `paused` for an operator, nothing rolled back. */
  | (StepBase & { readonly type: 'run.paused_on_failure'; readonly error: ErrorJSON })
  /** An operator's action on an execution paused on a step's failure was accepted (docs/background.md#pause-on-failure). */
  | (StepBase & {
      readonly type: 'failure.retried';
      readonly argsReplaced: boolean;
      readonly mode: 'inline' | 'background';
    })
  | (StepBase & { readonly type: 'failure.skipped'; readonly mode: 'inline' | 'background' })
  | (StepBase & { readonly type: 'failure.rolled_back' })
  /** An operator's action on a failed step was refused (wrong status, claimed by another action, not skippable, invalid value); nothing changed. */
  | (StepBase & {
      readonly type: 'failure.action_refused';
      readonly action: FailureAction;
      readonly reason: FailureActionRefusal;
      readonly message: string;
    })
  /** A fork of `sourceId` started here: the listed steps' results were reused from it, the rest runs from `fromStep`. */
  | (Base & {
      readonly type: 'run.forked';
      readonly sourceId: string;
      readonly fromStep: string;
      readonly reused: readonly string[];
      readonly inputReplaced: boolean;
    })
  | (StepBase & { readonly type: 'interrupt.paused'; readonly correlationId?: string; readonly timeoutAt?: number })
  | (StepBase & { readonly type: 'interrupt.resumed'; readonly mode: 'inline' | 'background' })
  | (StepBase & { readonly type: 'interrupt.rejected'; readonly reason: ResumeRefusal; readonly message: string })
  | (StepBase & {
      readonly type: 'interrupt.payload_invalid';
      readonly attempt: number;
      readonly maxAttempts: number;
      readonly issues: readonly FieldIssue[];
    })
  /** A `.waitForEvent` step registered its wait and parks until a matching event (`matchKey`: its `matchOn` values as JSON, `''` without). */
  | (StepBase & {
      readonly type: 'wait.paused';
      readonly event: string;
      readonly matchKey: string;
      readonly timeoutAt?: number;
    })
  /** A sent event resumed a `.waitForEvent` step (`eventId`); the run continues `mode`. */
  | (StepBase & {
      readonly type: 'wait.resumed';
      readonly event: string;
      readonly eventId: string;
      readonly mode: 'inline' | 'background';
    })
  /** A `.waitForEvent` step's timeout passed first: `fail` rolls the run back, `value` completes the step with its `onTimeout` value. */
  | (StepBase & {
      readonly type: 'wait.timed_out';
      readonly event: string;
      readonly timeoutAt: number;
      readonly onTimeout: 'fail' | 'value';
    })
  | (StepBase & {
      readonly type: 'interrupt.timed_out';
      readonly strategy: 'lazy' | 'active';
      readonly timeoutAt: number;
    })
  /**
   * Not an event of the run but an entry of its trace: the oldest entries a bounded trace let go
   * of (`createEngine({ maxTraceEntries })`, default 1,000; docs/decisions/073). It stands where
   * they stood, after the trace's first entry, and absorbs later folds, so `dropped` counts every
   * entry folded so far and `byType` how many of each type (its values add up to `dropped`).
   * `from` and `to` are the times of the first and last folded entries; `at` equals `to`. It is
   * never published to subscribers, who saw each folded event when it happened.
   */
  | (Base & {
      readonly type: 'trace.summarized';
      readonly dropped: number;
      readonly byType: Readonly<Record<string, number>>;
      readonly from: number;
      readonly to: number;
    })
  | AsyncEvent;

/**
 * Events of async units (`asyncStep` bodies in their own job, `asyncReactor` children). The
 * dispatcher's trace gets `dispatched`, `refused` and `waiting`; the unit's own trace (its
 * `executionId` is the unit's id) gets `retrying`, `parked`, `completed`, `failed`, `discarded`.
 */
export type AsyncEvent =
  | (StepBase & {
      readonly type: 'async.dispatched';
      readonly unitId: string;
      readonly kind: 'step' | 'reactor';
      readonly jobId: string;
    })
  /**
   * The execution is being cancelled (an operator, a cascade from its own parent, its deadline):
   * the unfinished `asyncReactor` child it dispatched at `step` was cancelled first, and rolled back
   * (`status` `cancelled`), or had ended meanwhile (its own status), or did not end within the
   * wait (`status` `timed_out`, the parent's rollback went on).
   */
  | (StepBase & {
      readonly type: 'async.child_cancelled';
      readonly childId: string;
      readonly status: string;
    })
  | (StepBase & {
      readonly type: 'async.refused';
      readonly primitive: 'lock' | 'semaphore';
      readonly key: string;
      readonly holder: string;
    })
  | (StepBase & { readonly type: 'async.waiting'; readonly unitId: string; readonly mode: 'wait' | 'park' })
  | (StepBase & {
      readonly type: 'async.retrying';
      readonly unitId: string;
      readonly attempt: number;
      readonly delayMs: number;
      readonly error: ErrorJSON;
    })
  | (StepBase & {
      readonly type: 'async.parked';
      readonly unitId: string;
      readonly primitive: PrimitiveName;
      readonly key: string;
      readonly attempt: number;
    })
  | (StepBase & { readonly type: 'async.completed'; readonly unitId: string })
  | (StepBase & { readonly type: 'async.failed'; readonly unitId: string; readonly error: ErrorJSON })
  | (StepBase & {
      readonly type: 'async.discarded';
      readonly unitId: string;
      readonly started: boolean;
      readonly dispatcherStatus: string;
    });

/** The `type` of every event. */
export type ReactorEventType = ReactorEvent['type'];
/** The event of one type. */
export type EventOf<T extends ReactorEventType> = Extract<ReactorEvent, { readonly type: T }>;
