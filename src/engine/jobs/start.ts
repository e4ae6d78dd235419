/**
 * Accepting a run onto the queue: a background start (validated input, an ordered-lock position
 * taken at acceptance, a pending record, the first job), or an inline run handed to a worker at
 * its hand-off point.
 *
 * @module
 */
import { computeKey } from '../../coordination/scope.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { finish } from '../execution/execute.js';
import { enqueueTraced } from '../execution/next-job.js';
import { FIRST_JOB } from '../model/background.js';
import type { RunResult } from '../model/results.js';
import type { TraceContext } from '../ports/store.js';
import type { RunState } from '../run/run-state.js';
import type { BackgroundDeps } from './deps.js';

/** Accepts a run in the background: validated input, a pending record, the first job. */
export async function startBackground(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  executionId: string,
  input: Record<string, unknown>,
  idempotencyKey: string | undefined,
  retryOf?: string,
  links?: readonly TraceContext[],
): Promise<RunResult> {
  const state = deps.newState({
    executionId,
    rootExecutionId: executionId,
    reactor: reactor.name,
    contract: reactor.contract,
    input,
    idempotencyKey,
    retryOf,
    mode: 'worker',
    definition: reactor,
  });
  state.traceLinks = links;
  const ordered = reactor.coordination.find((s) => s.kind === 'ordered_lock');
  if (ordered) {
    // The position is taken when the run is accepted, so executions pass in acceptance order.
    try {
      const key = computeKey(ordered, input, { reactor: reactor.name, step: undefined });
      const ticket = await deps.coordination.coordinator!.orderedTicket(key);
      state.background = { ...FIRST_JOB, ordered: { key, nonce: ticket.nonce, epoch: ticket.epoch } };
    } catch (error) {
      return finish(state, { status: 'failed', step: undefined, error: error as Error, validation: [] });
    }
  }
  return handOffToWorker(deps, state);
}

/**
 * Persists an execution as pending and enqueues its first job: a background start, or an inline
 * run at its hand-off point (its completed steps stay done).
 */
export async function handOffToWorker(deps: BackgroundDeps, state: RunState): Promise<RunResult> {
  state.background ??= { ...FIRST_JOB };
  const jobId = `${state.executionId}:1`;
  state.emit({ type: 'run.queued', jobId, delayMs: 0, reason: 'start' });
  await enqueueTraced(deps, state, { jobId, delayMs: 0, reason: 'start' }, 'pending');
  return {
    status: 'queued',
    executionId: state.executionId,
    reactor: state.reactor,
    trace: state.trace,
    steps: state.steps,
    rollbackFailures: state.rollbackFailures,
    replay: false,
  };
}
