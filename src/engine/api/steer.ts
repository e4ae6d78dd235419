/**
 * An operator's actions on an execution paused on a step's failure (`onFailure: 'pause'`,
 * docs/decisions/100): `engine.retryStep` runs the failed step again and continues,
 * `engine.skipStep` continues with a supplied result, `engine.rollback` rolls back as the
 * automatic path would. Each is refused with a `FailureActionError` unless the execution is
 * paused on a failure; each claims the pause (one action wins a double click), then writes under
 * the execution's liveness lock, and continues where the execution ran: in a worker when it ran
 * in the background and the engine has a queue, else in this process.
 *
 * @module
 */
import type { AnyReactorDefinition, StepNode } from '../../dsl/definition.js';
import { validateContract } from '../../dsl/contract.js';
import {
  ExecutionNotFoundError,
  FailureActionError,
  ReactorError,
  type FailureAction,
  type FailureActionRefusal,
  type FieldIssue,
} from '../../errors.js';
import { rollbackFailurePause } from '../execution/failure-rollback.js';
import { continueInline, prepareWorker, withLiveness, type Announce } from '../execution/interrupt/continue.js';
import { InlineLease, type InlineLeaseDeps } from '../execution/inline-lease.js';
import type { RunResult } from '../model/results.js';
import { versionFor } from '../model/versions.js';
import { statusName, type ExecutionRecord, type FailurePause } from '../../ports/store.js';
import type { ResumeDeps } from './interrupt/resume.js';

/** How long a won claim on a pause stops other actions before the record says what happened. */
export const FAILURE_CLAIM_TTL_MS = 60_000;

/** Options of `engine.retryStep`. */
export interface RetryStepOptions {
  /** Arguments the step runs with instead of its own (validated against its contract when it has one). */
  readonly args?: Readonly<Record<string, unknown>>;
}

/** Options of `engine.skipStep`: the step's result the run continues with. */
export interface SkipStepOptions<V = unknown> {
  readonly value: V;
}

/** What the actions need: resuming's deps (store, claims, liveness, continuing). */
export type SteerDeps = ResumeDeps & {
  /** The inline liveness lease an action's continuation in this process takes (none: unleased, as an embedded engine's). */
  readonly inlineLeases?: InlineLeaseDeps;
};

interface Paused {
  readonly record: ExecutionRecord;
  readonly reactor: AnyReactorDefinition;
  readonly pause: FailurePause;
  readonly node: StepNode;
}

/**
 * `engine.retryStep`: the failed step runs again as its next attempt (with `args` when given);
 * completed steps are not re-run. Its retry policy goes on from the attempts already made: a
 * step that used them all gets this one attempt, and pauses again if it fails.
 */
export async function retryStep(
  deps: SteerDeps,
  executionId: string,
  options: RetryStepOptions = {},
): Promise<RunResult> {
  const found = await locate(deps, executionId, 'retryStep');
  const { pause, node } = found;
  let args = options.args;
  if (args !== undefined) {
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      throw refuse(deps, found, 'retryStep', 'invalid_args', 'args must be an object of argument values', [
        { path: '', message: 'expected an object' },
      ]);
    if (node.contract) {
      const valid = await validateContract(node.contract, args);
      if (!valid.ok)
        throw refuse(deps, found, 'retryStep', 'invalid_args', `invalid arguments for "${pause.step}"`, valid.issues);
      args = valid.value;
    }
  }
  const replaced = args !== undefined;
  return act(
    deps,
    found,
    'retryStep',
    (fresh) => ({
      ...fresh,
      // The step goes on with its next attempt (counted after the ones that failed): one more run, no fresh budget.
      steps: { ...fresh.steps, [pause.step]: { ...fresh.steps[pause.step]!, status: 'retrying' } },
      ...(replaced ? { stepArgs: { ...fresh.stepArgs, [pause.step]: args } } : {}),
    }),
    (state, mode) => state.emit({ type: 'failure.retried', step: pause.step, argsReplaced: replaced, mode }),
  );
}

/** `engine.skipStep`: the failed step counts as skipped with `value` as its result, where it is `skippable`. */
export async function skipStep(deps: SteerDeps, executionId: string, options: SkipStepOptions): Promise<RunResult> {
  const found = await locate(deps, executionId, 'skipStep');
  const { pause, node } = found;
  if (!node.skip)
    throw refuse(
      deps,
      found,
      'skipStep',
      'not_skippable',
      `step "${pause.step}" is not skippable (declare skippable on it)`,
    );
  let value: unknown = options.value;
  const schema = node.skip.schema;
  if (schema) {
    const outcome = await schema['~standard'].validate(value);
    if (outcome.issues)
      throw refuse(
        deps,
        found,
        'skipStep',
        'invalid_value',
        `the value does not satisfy the skippable schema of "${pause.step}"`,
        outcome.issues.map((i) => ({ path: pathOf(i.path), message: i.message })),
      );
    value = outcome.value;
  }
  return act(
    deps,
    found,
    'skipStep',
    (fresh) => {
      const attempts = fresh.steps[pause.step]?.attempts ?? 0;
      return { ...fresh, steps: { ...fresh.steps, [pause.step]: { status: 'skipped', attempts, result: value } } };
    },
    (state, mode) => state.emit({ type: 'failure.skipped', step: pause.step, mode }),
  );
}

/** `engine.rollback`: compensates the failed step, undoes the completed ones newest first, ends `failed` with its error. */
export async function rollbackPaused(deps: SteerDeps, executionId: string): Promise<RunResult> {
  const found = await locate(deps, executionId, 'rollback');
  return claimed(deps, found, 'rollback', async () => {
    const outcome = await withLiveness(deps, executionId, async () => {
      const fresh = await current(deps, found, 'rollback');
      return rollbackFailurePause(
        deps,
        found.reactor,
        versionFor(fresh, found.reactor, deps.versions, 'rollback').record,
        found.pause,
      );
    });
    if (outcome === undefined)
      throw refuse(deps, found, 'rollback', 'busy', 'another process is working on it; try again');
    return { written: true, result: outcome };
  });
}

/**
 * Claims the pause, writes `next(fresh record)` (the pause cleared) under the liveness lock, and
 * continues in a worker or in this process, announcing it with `announce`.
 */
async function act(
  deps: SteerDeps,
  found: Paused,
  action: 'retryStep' | 'skipStep',
  next: (fresh: ExecutionRecord) => ExecutionRecord,
  announce: Announce,
): Promise<RunResult> {
  const { record, reactor, pause } = found;
  const background = deps.queue !== undefined && (record.background !== undefined || reactor.background === 'all');
  const outcome = await claimed(deps, found, action, async () => {
    const held = await withLiveness(deps, record.id, async () => {
      const fresh = await current(deps, found, action);
      const { pausedOn: _cleared, ...rest } = next(fresh);
      const continued: ExecutionRecord = rest;
      if (background) return { worker: await prepareWorker(deps, reactor, continued, pause.step, 'resume', announce) };
      await deps.store.save({ ...continued, status: 'running', updatedAt: deps.clock.now() }); // the action is durable before anything runs
      return { next: continued };
    });
    if (held === undefined) throw refuse(deps, found, action, 'busy', 'another process is working on it; try again');
    return { written: true, result: held };
  });
  if (outcome.worker) {
    await outcome.worker.enqueue(); // off the liveness lock, so a worker can take the execution at once
    return outcome.worker.result;
  }
  // In this process, as an inline run: under its inline lease, so no other process continues it
  // (the sweep sees the lease held) and a lost lease stops it.
  const lease = deps.inlineLeases ? await InlineLease.take(deps.inlineLeases, record.id) : undefined;
  return continueInline(deps, reactor, outcome.next, pause.step, announce, lease);
}

/**
 * Runs `fn` holding the claim on this pause (of concurrent actions exactly one wins); the claim
 * is given back once `fn` is done — by then the record answers later actions — or failed.
 */
async function claimed<T>(
  deps: SteerDeps,
  found: Paused,
  action: FailureAction,
  fn: () => Promise<{ readonly written: true; readonly result: T }>,
): Promise<T> {
  const claims = deps.claims;
  if (!claims)
    throw refuse(
      deps,
      found,
      action,
      'unsupported',
      'the engine store does not implement claims (MemoryStore and RedisStore do)',
    );
  const name = claimName(found.pause);
  const claimant = `${found.record.id}:${crypto.randomUUID()}`;
  const claim = await claims.claimResume(found.record.id, name, claimant, FAILURE_CLAIM_TTL_MS);
  if (!claim.claimed)
    throw refuse(deps, found, action, 'already_claimed', 'another action on this failure was accepted first');
  try {
    return (await fn()).result;
  } finally {
    await claims.releaseResume(found.record.id, name, claimant).catch(() => undefined);
  }
}

/** The claim of one pause: its step and when it paused. */
function claimName(pause: FailurePause): string {
  return `failure:${pause.step}:${pause.at}`;
}

/** The record as it is now, still paused on the same failure (else refused: another action came first). */
async function current(deps: SteerDeps, found: Paused, action: FailureAction): Promise<ExecutionRecord> {
  const fresh = await deps.store.get(found.record.id);
  const on = fresh?.status === 'paused' ? fresh.pausedOn : undefined;
  if (!fresh || on?.step !== found.pause.step || on.at !== found.pause.at)
    throw refuse(
      deps,
      found,
      action,
      'already_claimed',
      `it is ${fresh?.status ?? 'gone'} now (another action came first)`,
    );
  return fresh;
}

/** The execution, its definition and the failure it is paused on; refused unless paused on a failure. */
async function locate(deps: SteerDeps, executionId: string, action: FailureAction): Promise<Paused> {
  const stored = await deps.store.get(executionId);
  if (!stored) throw new ExecutionNotFoundError(executionId);
  const registered = deps.registry.get(stored.reactor);
  if (!registered)
    throw new ReactorError(
      'reactor_unknown',
      `cannot ${action} execution ${executionId}: reactor "${stored.reactor}" is not registered with this engine (engine.register)`,
      { details: { reactor: stored.reactor } },
    );
  const { reactor, record } = versionFor(stored, registered, deps.versions, action);
  const pause = record.status === 'paused' ? record.pausedOn : undefined;
  const node = pause && reactor.byName.get(pause.step);
  if (!pause || node?.kind !== 'step') {
    const hint =
      record.status === 'paused'
        ? 'it is paused at an interrupt, not on a failure (use resume)'
        : `it is ${record.status}, not paused on a failure`;
    throw refused(deps, record, action, 'not_paused_on_failure', hint, pause?.step);
  }
  return { record, reactor, pause, node };
}

function refuse(
  deps: SteerDeps,
  found: Paused,
  action: FailureAction,
  reason: FailureActionRefusal,
  hint: string,
  issues?: readonly FieldIssue[],
): FailureActionError {
  return refused(deps, found.record, action, reason, hint, found.pause.step, issues);
}

/** A refusal of an action on `record`, published as `failure.action_refused` (not persisted: nothing changed). */
export function refused(
  deps: Pick<SteerDeps, 'hub' | 'clock'>,
  record: ExecutionRecord,
  action: FailureAction,
  reason: FailureActionRefusal,
  hint: string,
  step?: string,
  issues?: readonly FieldIssue[],
): FailureActionError {
  const error = new FailureActionError(
    {
      executionId: record.id,
      action,
      reason,
      status: statusName(record.status),
      ...(step === undefined ? {} : { step }),
      ...(issues === undefined ? {} : { issues }),
    },
    hint,
  );
  deps.hub.emit({
    type: 'failure.action_refused',
    step: step ?? '',
    action,
    reason,
    message: error.message,
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: record.reactor,
    at: deps.clock.now(),
  });
  return error;
}

function pathOf(path: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined): string {
  return (path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
}
