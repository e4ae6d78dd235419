/**
 * An interrupt step inside a run: the first time it is reached it claims its correlation id and
 * pauses the execution; once a resume was accepted, it completes with the validated payload.
 *
 * @module
 */
import type { InterruptNode } from '../../../dsl/definition.js';
import type { InterruptSpec } from '../../../dsl/interrupt.js';
import { CorrelationTakenError, ReactorError, messageOf, toError } from '../../../errors.js';
import { TERMINAL_STATUSES, type InterruptWait, type Store } from '../../../ports/store.js';
import type { NodeOutcome } from '../../model/outcome.js';
import type { RunState } from '../../run/run-state.js';
import { notStarted, type StepPlace } from '../../run/step-runner.js';
import { reachedAgain } from './reached-again.js';

/** Runs an interrupt node: completes with an accepted payload, or pauses the execution. */
export async function runInterrupt(
  run: RunState,
  node: InterruptNode,
  place: StepPlace,
  resolve: () => Record<string, unknown>,
): Promise<NodeOutcome> {
  const spec = node.interrupt;
  const again = reachedAgain(run, place);
  if (again) return again;
  let correlationId: string | undefined;
  try {
    correlationId = spec.correlationId ? correlationOf(spec, resolve(), place.path) : undefined;
    if (correlationId !== undefined) await claimCorrelation(run, correlationId, place.path);
  } catch (error) {
    return notStarted(run, place.path, toError(error));
  }
  const now = run.clock.now();
  const wait: InterruptWait = {
    step: place.path,
    ...(correlationId === undefined ? {} : { correlationId }),
    pausedAt: now,
    ...(spec.timeoutMs === undefined ? {} : { timeoutAt: now + spec.timeoutMs }),
    invalidAttempts: 0,
  };
  run.awaitInterrupt(wait);
  run.setStep(place.path, { status: 'running', attempts: 1 });
  run.emit({ type: 'step.started', step: place.path, attempt: 1, reactor: place.reactor });
  run.emit({
    type: 'interrupt.paused',
    step: place.path,
    reactor: place.reactor,
    ...(correlationId === undefined ? {} : { correlationId }),
    ...(wait.timeoutAt === undefined ? {} : { timeoutAt: wait.timeoutAt }),
  });
  return { kind: 'yield', step: place.path, suspension: { kind: 'pause', waits: [wait] } };
}

function correlationOf(spec: InterruptSpec, args: Record<string, unknown>, step: string): string {
  let id: unknown;
  try {
    id = (spec.correlationId as (a: unknown) => unknown)(args);
  } catch (error) {
    throw new ReactorError('correlation_id_invalid', `interrupt "${step}": correlationId threw: ${messageOf(error)}`, {
      cause: error,
      details: { step },
    });
  }
  if (typeof id !== 'string' || id.length === 0)
    throw new ReactorError(
      'correlation_id_invalid',
      `interrupt "${step}": correlationId must return a non-empty string (got ${JSON.stringify(id) ?? String(id)})`,
      { details: { step } },
    );
  return id;
}

/** Claims the correlation id; a claim left by an execution that no longer waits on it is taken over. */
async function claimCorrelation(run: RunState, correlationId: string, step: string): Promise<void> {
  const claims = run.interruptClaims;
  if (claims === undefined)
    throw new ReactorError(
      'interrupts_unsupported',
      `interrupt "${step}": the engine has no interrupt claims; pass createEngine({ interruptClaims }) (MemoryStore and RedisStore implement them)`,
      { details: { step } },
    );
  let claim = await claims.claimCorrelation(correlationId, run.executionId);
  if (!claim.claimed && (await isStale(run.store, claim.holder, correlationId)))
    claim = await claims.claimCorrelation(correlationId, run.executionId, { replace: claim.holder });
  if (!claim.claimed) throw new CorrelationTakenError({ correlationId, step, holder: claim.holder });
}

/** A holder is stale when it is gone, finished, or paused without waiting on this id (a running one may be about to pause on it). */
async function isStale(store: Store, holder: string, correlationId: string): Promise<boolean> {
  const record = await store.get(holder);
  if (!record || TERMINAL_STATUSES.has(record.status)) return true;
  return (
    record.status === 'paused' &&
    !(record.interrupts ?? []).some((w) => w.correlationId === correlationId && w.resumedAt === undefined)
  );
}
