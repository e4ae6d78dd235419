/**
 * The types of work scopes: the units of work the engine brackets (a job run, a step, a
 * compensate or undo, an enqueue), how one ended, and the handle a middleware returns for one.
 * Pure types, shared by `Middleware` (`events.ts`) and the instrument (`instrument.ts`).
 *
 * @module
 */
import type { ErrorJSON } from '../../errors.js';
import type { TraceContext } from '../../ports/store.js';

interface ScopeBase {
  readonly executionId: string;
  readonly reactor: string;
}

/** A unit of work the engine brackets. */
export type WorkScope =
  | (ScopeBase & {
      readonly kind: 'run';
      readonly rootExecutionId: string;
      /** `inline`: `engine.run` in the caller; `worker`: one job; `operation`: an operator's cancel or undo. */
      readonly mode: 'inline' | 'worker' | 'operation';
      /** The job being processed (worker mode). */
      readonly job?: { readonly jobId: string; readonly delivery: number };
      /** The execution's persisted trace context (absent for a new execution). */
      readonly traceContext?: TraceContext;
      /** Traces this execution continues in spirit: a retry links to the execution it retries. */
      readonly links?: readonly TraceContext[];
    })
  | (ScopeBase & { readonly kind: 'step'; readonly step: string; readonly attempt: number })
  | (ScopeBase & { readonly kind: 'compensate' | 'undo'; readonly step: string })
  | (ScopeBase & {
      readonly kind: 'enqueue';
      readonly jobId: string;
      readonly delayMs: number;
      readonly reason: 'start' | 'retry' | 'park';
      /** The execution's persisted trace context (absent when this enqueue starts a new execution). */
      readonly traceContext?: TraceContext;
      /** Traces this execution continues in spirit: a retry links to the execution it retries. */
      readonly links?: readonly TraceContext[];
    });

/**
 * How a scope ended. `outcome` of a step: `succeeded`, `failed`, `skipped`, `halted`, `parked`
 * (lost contention in a worker; resumed by a later job), `paused` (an interrupt), `retrying` (a worker re-enqueued the
 * next attempt); of other scopes: `ok` or `failed`.
 */
export interface WorkEnd {
  readonly outcome: string;
  readonly error?: ErrorJSON;
}

/** What a middleware returns from `Middleware.enter` (`events.ts`): the open scope. */
export interface WorkHandle {
  /** Runs `work` inside the scope (e.g. with its span as the active context) and returns its value. */
  run<T>(work: () => T): T;
  /** Ends the scope. The engine calls it exactly once, also when the work throws. */
  end(end: WorkEnd): void;
  /**
   * For a `run` or `enqueue` scope of an execution without a persisted trace context: the one
   * this scope starts. The engine persists it on the execution record; every later scope of the
   * execution receives it as `traceContext`.
   */
  readonly traceContext?: TraceContext;
}
