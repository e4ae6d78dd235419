/**
 * The engine's factory of run states, as the execution and job code receives it: a state for a
 * new execution, or one rebuilt from a persisted record.
 *
 * @module
 */
import type { ExecutionRecord } from '../../ports/store.js';
import type { RunState, RunStateInit } from '../run/run-state.js';

/** What a caller gives {@link NewState}; the engine supplies the rest of {@link RunStateInit}. */
export type NewStateInit = Pick<
  RunStateInit,
  | 'executionId'
  | 'rootExecutionId'
  | 'reactor'
  | 'contract'
  | 'input'
  | 'idempotencyKey'
  | 'retryOf'
  | 'parentId'
  | 'definition'
  | 'tags'
> & { readonly resume?: ExecutionRecord; readonly mode?: 'inline' | 'worker'; readonly replayOnly?: boolean };

/** Builds the run state of an execution (bound to the engine's ports, and to a job's lease in a worker). */
export type NewState = (init: NewStateInit) => RunState;

/**
 * The init of a state that replays a persisted execution without running any step body (its
 * rollback: a cancel, an interrupt's failure, a fan-out map's undo): the record's ids, input
 * and idempotency key, resumed from the record, in worker mode.
 */
export function replayInit(
  reactor: { readonly name: string; readonly contract: RunStateInit['contract'] },
  record: ExecutionRecord,
): NewStateInit {
  return {
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: reactor.name,
    contract: reactor.contract,
    input: record.input as Record<string, unknown>,
    idempotencyKey: record.idempotencyKey,
    resume: record,
    mode: 'worker',
    replayOnly: true,
  };
}
