/**
 * What the background path (a worker's jobs, a start onto the queue) needs from the engine, and
 * its tunables.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import type { CancelTargets } from '../execution/cancels.js';
import type { CoordinationDeps } from '../execution/execute.js';
import type { NewState } from '../execution/new-state.js';
import type { EventHub } from '../model/events.js';
import type { Instrument } from '../model/instrument.js';
import type { Clock } from '../../ports/clock.js';
import type { FanOutLedger } from '../../ports/fanout.js';
import type { EventWaits } from '../../ports/event-waits.js';
import type { JobLeases } from '../../ports/job-lease.js';
import type { JobQueue } from '../../ports/queue.js';
import type { WaitList } from '../../ports/wait-list.js';
import type { Store } from '../../ports/store.js';
import type { JobBinding } from '../run/run-state.js';

/** Work a job leaves to do once the execution's liveness lock is released (a self-wake, a dispatch); none: nothing. */
export type After = (() => Promise<void>) | undefined;

/** Tunables of background execution. */
export interface BackgroundOptions {
  /** Contention attempts before a parked execution fails (ordered-lock waits are never capped). Default 100. */
  readonly contentionCap?: number;
  /** Delay of a parked execution's fallback job, in case no release wakes it. Default 5 s. */
  readonly parkFallbackMs?: number;
  /** TTL of the per-execution liveness lock that keeps two workers off one execution. Default 30 s. */
  readonly livenessTtlMs?: number;
  /**
   * How often each worker tries to run the recovery sweep (one worker at a time sweeps): it
   * re-enqueues executions that no lease and no job carry any more, and resumes or aborts inline
   * runs whose process stopped (docs/decisions/066). Default 2 × `livenessTtlMs`, or 0 on a
   * coordinator that lives in this process only (the memory backend: a process that dies takes
   * its executions with it); 0 turns the timer off (`engine.sweep()` still sweeps once).
   */
  readonly sweepIntervalMs?: number;
  /**
   * How long a worker waits out lock / semaphore / ordered-lock contention on the key's release
   * notification before it parks the execution (a declaration's own `wait` is the in-process budget).
   * A short wait hands a busy key over in well under a millisecond; parking frees the job slot.
   * Default 250 ms; 0 parks at once.
   */
  readonly workerWaitMs?: number;
  /**
   * How long a job waits (on the release notification) for another process's job of the same
   * execution to let go of the execution's liveness lock before it defers itself. A wake-up that
   * reaches a second worker while the first is still writing its park checkpoint is then handled
   * in milliseconds instead of after the park fallback. Default 1 s; 0 defers at once.
   */
  readonly livenessWaitMs?: number;
  /** How long an in-process reader of an `asyncStep` / `asyncReactor` result waits before `AsyncWaitTimeoutError`. Default 30 s. */
  readonly asyncWaitMs?: number;
  /** How long a worker reader may stay parked on an async unit, from its dispatch. Default 1 h. */
  readonly asyncParkTimeoutMs?: number;
}

/** What the background path needs from the engine. */
export interface BackgroundDeps {
  readonly store: Store;
  readonly queue: JobQueue;
  readonly waitList: WaitList | undefined;
  readonly clock: Clock;
  readonly coordination: CoordinationDeps;
  readonly options: Required<BackgroundOptions>;
  readonly workerId: string;
  /** Cancels announced by other processes (decision 053); without it a worker reads the cancel marker only. */
  readonly cancels?: CancelTargets;
  /** Brackets job runs and enqueues in middleware scopes (spans). Default: none. */
  readonly instrument?: Instrument;
  /** Ledgers of fan-out maps; without it a fan-out map fails in a worker (`fan_out_unavailable`). */
  readonly fanOut?: FanOutLedger | undefined;
  /** The event-wait index: a `.waitForEvent` step's timeout drops its registration there. */
  readonly eventWaits?: EventWaits | undefined;
  /** The lease bindings of the jobs this process runs now, by execution id: states of those executions write under them (decision 064). */
  readonly liveJobs?: Map<string, JobBinding>;
  /** Liveness lease + record read, terminal write + release: one call each (set whenever there is a coordinator). */
  readonly jobLeases?: JobLeases | undefined;
  /** Builds the run state of an execution of this engine (bound to the job's lease while one runs). */
  readonly newState: NewState;
  /** Every registered definition by fingerprint: a job runs on the one its record names (decision 082). Without it: the job's reactor only. */
  readonly versions?: ReadonlyMap<string, AnyReactorDefinition>;
  /** Where events of a job that runs no state go (`run.version_unavailable`). */
  readonly hub?: EventHub;
}
