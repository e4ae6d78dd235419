/**
 * The engine's factory of run states, as the execution and job code receives it: a state for a
 * new execution, or one rebuilt from a persisted record.
 *
 * @module
 */
import type { ExecutionRecord } from '../ports/store.js';
import type { RunState, RunStateInit } from '../run/run-state.js';

/** What a caller gives {@link NewState}; the engine supplies the rest of {@link RunStateInit}. */
export type NewStateInit = Pick<
  RunStateInit,
  'executionId' | 'rootExecutionId' | 'reactor' | 'contract' | 'input' | 'idempotencyKey' | 'retryOf' | 'parentId'
> & { readonly resume?: ExecutionRecord; readonly mode?: 'inline' | 'worker'; readonly replayOnly?: boolean };

/** Builds the run state of an execution (bound to the engine's ports, and to a job's lease in a worker). */
export type NewState = (init: NewStateInit) => RunState;
