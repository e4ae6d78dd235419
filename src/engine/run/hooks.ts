import type { StepContext } from '../../dsl/context.js';
import { signalKind, type Failure } from '../../dsl/signals.js';
import { messageOf } from '../../errors.js';
import { bindContext } from './contexts.js';
import type { RunState } from './run-state.js';

/** Runs a compensate or undo hook; a throw or a returned failure is recorded and rollback goes on. */
export async function runRollbackHook(
  run: RunState,
  kind: 'compensate' | 'undo',
  step: string,
  call: () => unknown,
): Promise<void> {
  const scope = { kind, executionId: run.executionId, reactor: run.reactor, step } as const;
  await run.instrument.traced(
    scope,
    () => rollbackHook(run, kind, step, call),
    (f) => (f ? { outcome: 'failed', error: { name: 'Error', message: f.message } } : { outcome: 'ok' }),
  );
}

/** Runs the hook; returns its failure, if any (recorded in the run's rollback failures). */
async function rollbackHook(
  run: RunState,
  kind: 'compensate' | 'undo',
  step: string,
  call: () => unknown,
): Promise<{ reason: string; message: string } | undefined> {
  let failure: { reason: 'raised' | 'returned_failure'; message: string } | undefined;
  try {
    const out = await call();
    if (signalKind(out) === 'failure')
      failure = { reason: 'returned_failure', message: (out as Failure).error.message };
  } catch (error) {
    failure = { reason: 'raised', message: messageOf(error) };
  }
  if (failure) {
    run.addRollbackFailures({ step, kind, ...failure });
    run.emit({ type: kind === 'compensate' ? 'step.compensate_failed' : 'step.undo_failed', step, ...failure });
  } else {
    run.emit({ type: kind === 'compensate' ? 'step.compensated' : 'step.undone', step });
  }
  return failure;
}

/** The context a step hook receives. */
export function stepContext(
  run: RunState,
  place: { readonly path: string; readonly reactor: string; readonly signal: AbortSignal },
  attempt: number,
): StepContext {
  const step = place.path;
  return bindContext(
    {
      executionId: run.executionId,
      rootExecutionId: run.rootExecutionId,
      reactor: place.reactor,
      step,
      attempt,
      signal: place.signal,
      logger: run.stepLogger(step),
      heldKeys: run.heldKeys,
      fencingToken: (key) =>
        key === undefined
          ? run.fencingTokens.size === 1
            ? [...run.fencingTokens.values()][0]
            : undefined
          : run.fencingTokens.get(key),
    },
    run,
  );
}
