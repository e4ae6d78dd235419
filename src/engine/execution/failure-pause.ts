/**
 * Pausing an execution on a step's failure (`onFailure: 'pause'`, docs/decisions/100): the
 * `paused` record with `pausedOn: { kind: 'failure' }` and its result. Its holds were released by
 * the driver as for a yield, and no job is left for it: it waits for an operator's action
 * (`engine.retryStep`, `skipStep`, `rollback`, or a cancel), only the reactor's deadline job,
 * when it has one, still comes.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { errorFromJSON, errorToJSON } from '../../errors.js';
import type { FailureWait } from '../model/suspension.js';
import type { PauseCause, PausedRun } from '../model/results.js';
import type { ExecutionRecord, FailurePause } from '../../ports/store.js';
import { errorSummary, type RunState } from '../run/run-state.js';
import { scheduleDeadlineOnPause } from './deadline.js';

/** Persists the execution `paused` on `failure` (with its trace) and returns the paused result. */
export async function pauseOnFailure(
  state: RunState,
  reactor: AnyReactorDefinition,
  failure: Pick<FailureWait, 'step' | 'error'>,
): Promise<PausedRun> {
  const pausedOn: FailurePause = {
    kind: 'failure',
    step: failure.step,
    error: errorToJSON(failure.error),
    at: state.clock.now(),
  };
  state.emit({ type: 'run.paused_on_failure', step: failure.step, error: errorSummary(failure.error) });
  await state.checkpoint('paused', { pausedOn }, { withTrace: true });
  await scheduleDeadlineOnPause(state, reactor); // the reactor's deadline still ends it (decision 081)
  return {
    status: 'paused',
    executionId: state.executionId,
    reactor: state.reactor,
    trace: state.trace,
    steps: state.steps,
    rollbackFailures: state.rollbackFailures,
    replay: false,
    pausedOn: { kind: 'failure', step: failure.step, error: failure.error, at: pausedOn.at },
    interrupts: [],
  };
}

/** Why a paused record waits, as a result shows it. */
export function pauseCauseOf(record: ExecutionRecord): PauseCause {
  const on = record.pausedOn;
  return on ? { kind: 'failure', step: on.step, error: errorFromJSON(on.error), at: on.at } : { kind: 'interrupt' };
}

/** The failure a record is paused on, if it is `paused` on one. */
export function failurePauseOf(record: ExecutionRecord | undefined): FailurePause | undefined {
  return record?.status === 'paused' ? record.pausedOn : undefined;
}
