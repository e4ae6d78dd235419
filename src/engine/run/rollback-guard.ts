/**
 * Rollback under the step's own keys: a step's `compensate` and `undo` re-take its lock and
 * semaphore (keyed from the same arguments) before they run, so a concurrent execution cannot
 * enter the step's forward body meanwhile. Never its rate limit, period or ordered lock. A
 * re-take waits the declaration's rollback wait (default: its TTL), never parks, and when it
 * cannot take the key the hook does not run and a `coordination_unavailable` rollback failure
 * is recorded (docs/decisions/020-rollback-retake.md).
 *
 * @module
 */
import type { CoordinationSpec } from '../../dsl/coordination.js';
import type { StepNode } from '../../dsl/definition.js';
import { ReactorError, messageOf } from '../../errors.js';
import { runRollbackHook } from './hooks.js';
import type { RunState } from './run-state.js';

type Retaken = Extract<CoordinationSpec, { kind: 'lock' | 'semaphore' }>;

/** The declarations a rollback hook re-takes, each waiting its rollback wait. */
export function rollbackSpecs(specs: readonly CoordinationSpec[]): Retaken[] {
  return specs
    .filter((s): s is Retaken => s.kind === 'lock' || s.kind === 'semaphore')
    .map((s) => ({ ...s, waitMs: s.rollbackWaitMs ?? s.ttlMs }));
}

/**
 * Runs a compensate or undo hook of `node` holding the step's lock and semaphore for `args`.
 * Never throws: a hook failure or an untakeable key is recorded in `run.rollbackFailures`.
 */
export async function runGuardedRollback(
  run: RunState,
  node: Pick<StepNode, 'coordination'>,
  place: { readonly path: string; readonly reactor: string },
  args: unknown,
  kind: 'compensate' | 'undo',
  call: () => unknown,
): Promise<void> {
  const specs = rollbackSpecs(node.coordination);
  if (specs.length === 0) return runRollbackHook(run, kind, place.path, call);
  const abort = new AbortController();
  const admission = await run
    .admit(specs, args, { reactor: place.reactor, step: place.path, abort, ownWaits: true })
    .catch((error: unknown) => ({ kind: 'refused' as const, error: error as Error }));
  if (admission.kind !== 'admitted') {
    const error = admission.kind === 'refused' ? admission.error : new Error(`unexpected ${admission.reason}`);
    return unavailable(run, kind, place.path, error, specs);
  }
  try {
    await runRollbackHook(run, kind, place.path, call);
  } finally {
    await admission.holds
      .release('completed')
      .catch((error: unknown) =>
        run.stepLogger(place.path).warn({ err: error }, 'releasing rollback coordination failed; holds expire by TTL'),
      );
  }
}

/** Records a rollback hook that did not run because its key could not be taken. */
function unavailable(
  run: RunState,
  kind: 'compensate' | 'undo',
  step: string,
  error: Error,
  specs: readonly Retaken[],
): void {
  const details = ReactorError.is(error) ? error.details : {};
  const key = typeof details.key === 'string' ? details.key : undefined;
  const spec = specs.find((s) => s.kind === details.primitive) ?? specs[0]!;
  const primitive = typeof details.primitive === 'string' ? details.primitive : spec.kind;
  const message = `${kind} of step "${step}" did not run: could not take ${primitive} "${key ?? '?'}" within ${spec.waitMs} ms (${messageOf(error)})`;
  const failure = {
    step,
    kind,
    reason: 'coordination_unavailable' as const,
    message,
    ...(key === undefined ? {} : { key }),
  };
  run.addRollbackFailures(failure);
  run.emit({ type: kind === 'compensate' ? 'step.compensate_failed' : 'step.undo_failed', ...failure });
  run.logger.warn({ step, kind, reason: failure.reason, key }, message);
}
