/**
 * What `engine.run` returns: a union discriminated on `status`. Outcomes are returned, never
 * thrown.
 *
 * @module
 */
import type { FieldIssue } from '../../errors.js';
import type { ReactorEvent } from './events.js';
import type { ExecutionTags, RollbackFailure, StepRecord, WaitingFor } from '../../ports/store.js';

interface RunBase<S> {
  readonly executionId: string;
  readonly reactor: string;
  /** The tags the execution was started with (absent: none); on results read from its record and on `queued`. */
  readonly tags?: ExecutionTags;
  /** Every event of this run, in emission order. */
  readonly trace: readonly ReactorEvent[];
  /** Compensations and undos that failed during rollback (rollback went on). */
  readonly rollbackFailures: readonly RollbackFailure[];
  /** Each step's final state by path (`charge`, `pay.charge`, `items[2]`): status, attempts, result or error. */
  readonly steps: Readonly<Record<string, StepRecord>>;
  /** True when an idempotency key matched an earlier run: this is that run's result. */
  readonly replay: boolean;
  /** Phantom: the reactor's step results by name (for typed matchers). */
  readonly '~steps'?: S;
}

/** The run finished; `value` is the `returns` step's result (or every result by name). */
export interface CompletedRun<O, S = unknown> extends RunBase<S> {
  readonly status: 'completed';
  readonly value: O;
}
/** A step failed (or the input was invalid); completed steps were rolled back. */
export interface FailedRun<S = unknown> extends RunBase<S> {
  readonly status: 'failed';
  readonly error: Error;
  /** The step that failed; `undefined` when the reactor input was invalid. */
  readonly failedStep: string | undefined;
  /** Field problems when the input or a step's arguments were invalid. */
  readonly validationErrors: readonly FieldIssue[];
}
/** A step returned `halt(...)`: the run stopped, nothing was rolled back. */
export interface HaltedRun<S = unknown> extends RunBase<S> {
  readonly status: 'halted';
  /** The halting step; `undefined` when reactor-level coordination halted the run before any step (`period`, `ordered_lock_chain_failed`). */
  readonly haltedStep: string | undefined;
  readonly reason: string;
  /** The data passed to `halt(reason, data)`, or details of a coordination halt (`{ key, bucket }` for `period`). */
  readonly data?: unknown;
}
/** An idempotent replay of an execution that is still running elsewhere. */
export interface RunningRun<S = unknown> extends RunBase<S> {
  readonly status: 'running';
}

/** A background execution accepted and queued (or waiting for a retry). */
export interface QueuedRun<S = unknown> extends RunBase<S> {
  readonly status: 'queued';
  /** A delayed start's time (engine clock, ms), until its first job runs: nothing runs before it. */
  readonly startAt?: number;
}
/** A background execution parked on a busy key; it resumes when the key is released. */
export interface ParkedRun<S = unknown> extends RunBase<S> {
  readonly status: 'parked';
  readonly waitingFor: WaitingFor;
}

/**
 * Why a run is paused: at interrupts (`interrupts` lists them; `engine.resume`), or on a step
 * that failed for good under `onFailure: 'pause'` (`engine.retryStep`, `skipStep`, `rollback`;
 * docs/background.md#pause-on-failure).
 */
export type PauseCause =
  | { readonly kind: 'interrupt' }
  | { readonly kind: 'failure'; readonly step: string; readonly error: Error; readonly at: number };

/**
 * Paused at one or more interrupts (resume it with `engine.resume(executionId | { correlationId },
 * payload)`), or on a step's failure for an operator (`pausedOn.kind === 'failure'`).
 */
export interface PausedRun<S = unknown> extends RunBase<S> {
  readonly status: 'paused';
  /** What it waits for: interrupts, or an operator's action on a failed step. */
  readonly pausedOn: PauseCause;
  /**
   * The interrupt and wait-for-event steps (paths) it waits at, their correlation ids, the event
   * each wait for an event waits for, and their timeouts (engine clock, ms); empty when paused
   * on a failure.
   */
  readonly interrupts: readonly {
    readonly step: string;
    readonly correlationId?: string;
    /** The name of the event a `.waitForEvent` step waits for; absent at an interrupt. */
    readonly event?: string;
    readonly timeoutAt?: number;
  }[];
}

/** Cancelled (or undone on demand) by an operator, or past the reactor's deadline: completed work was rolled back. */
export interface CancelledRun<S = unknown> extends RunBase<S> {
  readonly status: 'cancelled';
  readonly reason: string;
  /**
   * What cancelled it when the engine did: a `DeadlineExceededError` past the reactor's
   * `deadline`, a `SupersededError` for a debounced start a later one replaced; absent for an
   * operator's cancel or undo.
   */
  readonly cause?: Error;
  /** A debounced start superseded before it ran: the execution of the later start that replaced it (which may be superseded in turn). */
  readonly supersededBy?: string;
}

/** The result of a run. Narrow on `status`. */
export type RunResult<O = unknown, S = unknown> =
  | CompletedRun<O, S>
  | FailedRun<S>
  | HaltedRun<S>
  | RunningRun<S>
  | QueuedRun<S>
  | ParkedRun<S>
  | CancelledRun<S>
  | PausedRun<S>;
