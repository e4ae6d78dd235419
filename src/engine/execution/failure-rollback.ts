/**
 * Rolling back an execution paused on a step's failure, as the automatic path would have
 * (docs/decisions/100): the failed step is compensated when its body started, the completed
 * steps are undone newest first, and the run ends `failed` with the step's original error.
 * Rebuilt from the record (no forward body runs); called under the execution's liveness lock.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { validateContract } from '../../dsl/contract.js';
import { errorFromJSON } from '../../errors.js';
import { runFrame, undoAll } from '../graph/scheduler.js';
import type { RunResult } from '../model/results.js';
import { resolveArgs } from '../model/resolve-args.js';
import type { ExecutionRecord, FailurePause } from '../../ports/store.js';
import { stepContext } from '../run/hooks.js';
import { runGuardedRollback } from '../run/rollback-guard.js';
import type { RunState } from '../run/run-state.js';
import { finish, type CoordinationDeps } from './execute.js';
import { replayInit, type NewState } from './new-state.js';

/** What an operator's rollback of a failure pause needs. */
export interface FailureRollbackDeps {
  readonly newState: NewState;
  readonly coordination: Pick<CoordinationDeps, 'coordinator'>;
}

/** Compensates, undoes newest first and ends the execution `failed` with the error it paused on. */
export async function rollbackFailurePause(
  deps: FailureRollbackDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  pause: FailurePause,
): Promise<RunResult> {
  const state = deps.newState(replayInit(reactor, record));
  state.emit({ type: 'failure.rolled_back', step: pause.step });
  const replay = await runFrame(state, { def: reactor, input: state.input, prefix: '', signal: neverAborted() });
  state.emit({ type: 'run.rolling_back', step: pause.step });
  await state.checkpoint('rolling_back');
  await compensatePaused(state, reactor, pause);
  if (replay.status === 'completed') await undoAll(replay.completed, state);
  const ordered = record.background?.ordered;
  const spec = reactor.coordination.find((c) => c.kind === 'ordered_lock');
  if (ordered && deps.coordination.coordinator)
    // A paused run kept its ordered position (its holds were released as `yielded`): it ends failed now.
    await deps.coordination.coordinator
      .orderedComplete({ ...ordered, failed: true, strict: spec?.kind === 'ordered_lock' && spec.strict })
      .catch(() => undefined);
  return finish(state, { status: 'failed', step: pause.step, error: errorFromJSON(pause.error), validation: [] });
}

/**
 * Runs the `compensate` of the step a run paused on, when its body started (an attempt ran) and
 * it has one, with the arguments it ran with; never throws (a failure is a rollback failure).
 */
export async function compensatePaused(
  state: RunState,
  reactor: AnyReactorDefinition,
  pause: FailurePause,
): Promise<void> {
  await compensateStarted(state, reactor, pause.step, errorFromJSON(pause.error));
}

/**
 * Runs the `compensate` of the top-level step `step` when its body started (an attempt ran, or a
 * lost worker's attempt may have) and it has one, with the arguments it ran with and `error`;
 * never throws (a failure is a rollback failure).
 */
export async function compensateStarted(
  state: RunState,
  reactor: AnyReactorDefinition,
  step: string,
  error: Error,
): Promise<void> {
  const node = reactor.byName.get(step);
  const recorded = state.stepRecord(step);
  if (node?.kind !== 'step' || recorded === undefined || recorded.attempts === 0) return;
  const compensate = node.hooks.compensate as ((e: Error, a: unknown, c: unknown) => unknown) | undefined;
  if (!compensate) return;
  let args: unknown;
  try {
    args = await argsOf(state, node, step);
  } catch {
    return; // its arguments no longer resolve: its body cannot have run with them
  }
  const place = { path: step, reactor: reactor.name, signal: neverAborted() };
  await runGuardedRollback(state, node, place, args, 'compensate', () =>
    compensate(error, args, stepContext(state, place, recorded.attempts)),
  );
}

/** The arguments a top-level step ran with: an operator's, else resolved from the input and the recorded results. */
async function argsOf(
  state: RunState,
  node: Extract<ReturnType<AnyReactorDefinition['byName']['get']>, { kind: 'step' }>,
  path: string,
): Promise<unknown> {
  const given = state.stepArgs[path];
  if (given !== undefined) return given;
  const results = new Map<string, unknown>();
  for (const [step, r] of Object.entries(state.steps))
    if (r.status === 'completed' || r.status === 'skipped') results.set(step, r.result);
  const args = resolveArgs(
    node.args,
    { input: state.input, results },
    path,
    node.contract ? Object.keys(node.contract.fields) : undefined,
  );
  if (!node.contract) return args;
  const valid = await validateContract(node.contract, args);
  return valid.ok ? valid.value : args;
}

function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
