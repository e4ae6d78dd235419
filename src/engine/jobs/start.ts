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
import { FIRST_JOB, type StartPlan } from '../model/background.js';
import type { RunResult } from '../model/results.js';
import type { BackgroundState, TraceContext } from '../../ports/store.js';
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
  plan: StartPlan = { delayMs: 0 },
): Promise<RunResult> {
  const state = startState(deps, reactor, { executionId, input, idempotencyKey, retryOf, links, plan });
  const ordered = reactor.coordination.find((s) => s.kind === 'ordered_lock');
  if (ordered) {
    // The position is taken when the run is accepted, so executions pass in acceptance order.
    try {
      const key = computeKey(ordered, input, { reactor: reactor.name, step: undefined });
      const ticket = await deps.coordination.coordinator!.orderedTicket(key);
      state.setBackground({
        ...(state.background ?? FIRST_JOB),
        ordered: { key, nonce: ticket.nonce, epoch: ticket.epoch },
      });
    } catch (error) {
      return finish(state, { status: 'failed', step: undefined, error: error as Error, validation: [] });
    }
  }
  return handOffToWorker(deps, state, plan.delayMs);
}

/** What {@link startState} builds a background start from. */
export interface StartInit {
  readonly executionId: string;
  readonly input: Record<string, unknown>;
  readonly idempotencyKey?: string | undefined;
  readonly retryOf?: string | undefined;
  readonly links?: readonly TraceContext[] | undefined;
  readonly plan: StartPlan;
}

/** The run state of a background start, with its first background state (see {@link plannedJob}); nothing written. */
export function startState(deps: BackgroundDeps, reactor: AnyReactorDefinition, init: StartInit): RunState {
  const { executionId, input, idempotencyKey, retryOf } = init;
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
    tags: init.plan.tags,
  });
  state.linkTraces(init.links);
  state.setBackground(plannedJob(init.plan));
  return state;
}

/**
 * The first background state of a start planned as `plan`: its priority, and for a start delayed
 * into the future its `startAt`, which is also when its first job is due (`retryAt`: an early
 * delivery waits for it, the recovery sweep leaves it to its delayed job).
 */
export function plannedJob(plan: StartPlan): BackgroundState {
  return {
    ...FIRST_JOB,
    ...(plan.startAt === undefined ? {} : { startAt: plan.startAt, retryAt: plan.startAt }),
    ...(plan.priority === undefined ? {} : { priority: plan.priority }),
  };
}

/**
 * Persists an execution as pending and enqueues its first job: a background start, or an inline
 * run at its hand-off point (its completed steps stay done).
 */
export async function handOffToWorker(deps: BackgroundDeps, state: RunState, delayMs = 0): Promise<RunResult> {
  if (state.background === undefined) state.setBackground({ ...FIRST_JOB });
  const jobId = `${state.executionId}:1`;
  state.emit({ type: 'run.queued', jobId, delayMs, reason: 'start' });
  await enqueueTraced(deps, state, { jobId, delayMs, reason: 'start' }, 'pending');
  return queuedResult(state);
}

/** The `queued` result of an execution just handed to the queue (with a delayed start's `startAt`). */
export function queuedResult(state: RunState): RunResult {
  const startAt = state.background?.startAt;
  return {
    status: 'queued',
    ...(startAt === undefined ? {} : { startAt }),
    executionId: state.executionId,
    reactor: state.reactor,
    ...(state.tags === undefined ? {} : { tags: state.tags }),
    trace: state.trace,
    steps: state.steps,
    rollbackFailures: state.rollbackFailures,
    replay: false,
  };
}
