/**
 * The worker side of an `asyncStep`: one job of a unit runs the step body with its own retries,
 * its own step-level coordination (a per-job owner: the unit never re-enters its dispatcher's
 * keys) and its own record. A unit whose dispatcher rolled back never starts its body; one that
 * finishes after its dispatcher rolled back is compensated and discarded (docs/decisions/012).
 *
 * @module
 */
import { computeKey } from '../../../coordination/scope.js';
import type { AnyReactorDefinition, AsyncStepNode } from '../../../dsl/definition.js';
import { validateContract } from '../../../dsl/contract.js';
import { ContentionError, RateLimitedError, ReactorError, type PrimitiveName } from '../../../errors.js';
import type { After, BackgroundDeps } from '../deps.js';
import { refused, reparkBehindSameHolder, requeuedJobOf } from '../park.js';
import { requeue } from '../requeue.js';
import { backgroundOf, cleared } from '../../model/background.js';
import { cancelled, finish } from '../../execution/execute.js';
import { runRollbackHook, stepContext } from '../../run/hooks.js';
import type { NodeOutcome } from '../../model/outcome.js';
import { delayOf, onSuspension, type Suspension } from '../../model/suspension.js';
import type { JobDelivery } from '../../../ports/queue.js';
import type { ExecutionRecord, Store } from '../../../ports/store.js';
import { resolveArgs } from '../../model/resolve-args.js';
import { errorSummary, type RunState } from '../../run/run-state.js';
import { runStepNode, type StepPlace } from '../../run/step-runner.js';
import { findAsyncStep } from '../../model/async/find-node.js';

/** Statuses of a dispatcher whose run has rolled back (or is rolling back). */
const ROLLED_BACK = new Set(['rolling_back', 'failed', 'cancelled', 'aborted']);

/** Runs what it can of a unit; returns work to do once its liveness lock is released. */
export async function advanceUnit(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  delivery: JobDelivery,
  root: AbortController,
): Promise<After> {
  const info = record.unit!;
  const state = deps.newState({
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: reactor.name,
    contract: reactor.contract,
    input: {},
    idempotencyKey: undefined,
    resume: record,
    mode: 'worker',
  });
  const background = backgroundOf(state);
  // Its fallback job finds the key held by the holder it parked behind: it parks again, spending one attempt (decision 097).
  const stillWanted = async (): Promise<boolean> =>
    !ROLLED_BACK.has(await dispatcherStatus(deps.store, info.dispatcherId));
  // The park's own job, also when it was enqueued again because the previous job still held the lease.
  const parkJob = requeuedJobOf(record.id, delivery);
  const reparked =
    record.status === 'parked' && !root.signal.aborted
      ? await reparkBehindSameHolder(deps, state, parkJob, undefined, stillWanted)
      : undefined;
  if (reparked) return reparked;
  state.emit({ type: 'run.resumed', jobId: delivery.jobId, delivery: delivery.delivery });
  const waiting = background.waitingFor;
  if (
    waiting &&
    waiting.jobId === parkJob.jobId &&
    waiting.dueAt !== undefined &&
    state.clock.now() < waiting.dueAt - 5
  ) {
    state.emit({ type: 'run.woken', primitive: waiting.primitive, key: waiting.key, jobId: parkJob.jobId });
  }
  const place: StepPlace = { path: info.step, reactor: info.reactor, signal: root.signal };
  const node = findAsyncStep(reactor, info.step);
  if (!node) {
    const error = new ReactorError(
      'async_unit_unknown',
      `async unit ${record.id}: reactor "${reactor.name}" has no asyncStep at "${info.step}" (was the definition changed while it was queued?)`,
      { details: { unitId: record.id, step: info.step } },
    );
    return void (await finish(state, { status: 'failed', step: info.step, error, validation: [] }));
  }
  state.setBackground(cleared(background, 'waitingFor', 'retryAt'));
  if (record.status === 'rolling_back') {
    // A worker died while compensating: the compensate is not run twice (at most once, decision 011).
    const error = new ReactorError(
      'async_unit_interrupted',
      `async unit ${record.id}: its worker stopped while compensating; the compensate is not repeated`,
      { details: { unitId: record.id } },
    );
    return void (await finish(state, { status: 'failed', step: info.step, error, validation: [] }));
  }
  const resolve = (): Record<string, unknown> =>
    resolveArgs(
      node.args,
      { input: info.scope.input, results: new Map(Object.entries(info.scope.results)) },
      info.step,
      node.contract ? Object.keys(node.contract.fields) : undefined,
    );
  const dispatcher = await dispatcherStatus(deps.store, info.dispatcherId);
  if (ROLLED_BACK.has(dispatcher)) return void (await discard(deps, state, node, place, dispatcher, undefined));
  state.bindWork({ contentionCap: deps.options.contentionCap });
  await takeOrderedPosition(deps, state, node, place, resolve);
  await state.progress('running');
  const outcome = await runStepNode(state, node, place, resolve);
  return settleUnit(deps, state, node, place, outcome, resolve);
}

async function settleUnit(
  deps: BackgroundDeps,
  state: RunState,
  node: AsyncStepNode,
  place: StepPlace,
  outcome: NodeOutcome,
  resolve: () => Record<string, unknown>,
): Promise<After> {
  const unitId = state.executionId;
  const step = place.path;
  switch (outcome.kind) {
    case 'yield': {
      const park = (error: Error): Promise<After> => {
        const { primitive, key } = contended(error);
        state.emit({
          type: 'async.parked',
          step,
          reactor: place.reactor,
          unitId,
          primitive,
          key,
          attempt: (state.background?.contention ?? 0) + 1,
        });
        return refused(deps, state, error);
      };
      const retry = async (suspension: Suspension): Promise<After> => {
        const retrying = state.trace.findLast((e) => e.type === 'step.retrying');
        const error = retrying?.type === 'step.retrying' ? retrying.error : { name: 'Error', message: 'retry' };
        state.emit({
          type: 'async.retrying',
          step,
          reactor: place.reactor,
          unitId,
          attempt: retrying?.type === 'step.retrying' ? retrying.attempt : 0,
          delayMs: delayOf(suspension),
          error,
        });
        // A retried attempt keeps its ordered position (R-15, like any step-level ordered lock): the retry re-enters it.
        return void (await requeue(deps, state, delayOf(suspension), 'retry'));
      };
      // A unit runs one step: it parks on contention or retries; it has no interrupt, sleep or fan-out of its own.
      return onSuspension<Promise<After>>(outcome.suspension, {
        contention: (s) => park(s.error),
        awaitUnit: (s) => park(s.error),
        retry,
        sleep: retry,
        pause: retry,
        fanOut: retry,
        failurePause: () => Promise.reject(notAtRoot()), // only an execution's root frame pauses on a failure
      });
    }
    case 'success':
    case 'skipped': {
      const dispatcher = await dispatcherStatus(deps.store, state.unit!.dispatcherId);
      if (ROLLED_BACK.has(dispatcher)) return void (await discard(deps, state, node, place, dispatcher, resolve));
      state.emit({ type: 'async.completed', step, reactor: place.reactor, unitId });
      // A skip keeps the position (only a completed or failed turn ends it): hand it back.
      if (outcome.kind === 'skipped') await givePositionBack(deps, state, node);
      settledPosition(state);
      return void (await finish(state, { status: 'completed', value: outcome.value, completed: [] }));
    }
    case 'halt':
      await givePositionBack(deps, state, node);
      settledPosition(state);
      return void (await finish(state, { status: 'halted', step, reason: outcome.reason, data: outcome.data }));
    case 'failure': {
      if (outcome.compensate) {
        // Its own compensate, once, in its own job, after the last attempt.
        await state.checkpoint('rolling_back');
        await outcome.compensate();
      } else {
        await givePositionBack(deps, state, node);
      }
      state.emit({ type: 'async.failed', step, reactor: place.reactor, unitId, error: errorSummary(outcome.error) });
      settledPosition(state);
      return void (await finish(state, {
        status: 'failed',
        step,
        error: outcome.error,
        validation: outcome.validation,
      }));
    }
  }
}

/**
 * The dispatcher rolled back: a unit that has not started never starts; one whose body finished
 * meanwhile has its result discarded and its compensate run. The unit ends `cancelled`.
 */
async function discard(
  deps: BackgroundDeps,
  state: RunState,
  node: AsyncStepNode,
  place: StepPlace,
  dispatcher: string,
  resolve: (() => Record<string, unknown>) | undefined,
): Promise<void> {
  const reason = `its dispatcher ${state.unit!.dispatcherId} ${dispatcher === 'missing' ? 'is gone' : `rolled back (${dispatcher})`}`;
  const compensate = node.hooks.compensate as ((e: Error, a: unknown, c: unknown) => unknown) | undefined;
  if (resolve && compensate) {
    const error = new ReactorError(
      'dispatcher_rolled_back',
      `async unit ${state.executionId}: ${reason}; its result is discarded`,
      { details: { unitId: state.executionId, dispatcherId: state.unit!.dispatcherId, status: dispatcher } },
    );
    const args = await validArgs(node, resolve);
    const attempt = state.stepRecord(place.path)?.attempts ?? 1;
    await runRollbackHook(state, 'compensate', place.path, () =>
      compensate(error, args, stepContext(state, { ...place, signal: new AbortController().signal }, attempt)),
    );
  }
  // A position still kept (not started, or a skip) is handed back; one already ended is ignored by the coordinator.
  await givePositionBack(deps, state, node);
  settledPosition(state);
  state.emit({
    type: 'async.discarded',
    step: place.path,
    reactor: place.reactor,
    unitId: state.executionId,
    started: resolve !== undefined,
    dispatcherStatus: dispatcher,
  });
  await cancelled(state, reason);
}

/** A finished unit's record no longer shows an ordered position (it was completed or handed back). */
function settledPosition(state: RunState): void {
  if (!state.background?.ordered) return;
  state.setBackground(cleared(state.background, 'ordered'));
}

async function dispatcherStatus(store: Store, dispatcherId: string): Promise<string> {
  return (await store.get(dispatcherId))?.status ?? 'missing';
}

/**
 * A unit's step-level ordered lock takes its position on the unit's first arrival and keeps it
 * on the unit's record across contention parks and redeliveries. A key that cannot be computed
 * here is reported by the admission.
 */
async function takeOrderedPosition(
  deps: BackgroundDeps,
  state: RunState,
  node: AsyncStepNode,
  place: StepPlace,
  resolve: () => Record<string, unknown>,
): Promise<void> {
  const spec = node.coordination.find((s) => s.kind === 'ordered_lock');
  if (!spec || state.background?.ordered || !deps.coordination.coordinator) return;
  try {
    const key = computeKey(spec, await validArgs(node, resolve), { reactor: place.reactor, step: place.path });
    const ticket = await deps.coordination.coordinator.orderedTicket(key);
    state.setBackground({ ...backgroundOf(state), ordered: { key, nonce: ticket.nonce, epoch: ticket.epoch } });
    await state.checkpoint('running');
  } catch {
    // the admission reports it
  }
}

/** A position kept for a body that will never run is handed back without poisoning a strict chain. */
async function givePositionBack(deps: BackgroundDeps, state: RunState, node: AsyncStepNode): Promise<void> {
  const ordered = state.background?.ordered;
  const spec = node.coordination.find((s) => s.kind === 'ordered_lock');
  if (!ordered || spec?.kind !== 'ordered_lock') return;
  await deps.coordination.coordinator
    ?.orderedComplete({ ...ordered, failed: false, strict: spec.strict })
    .catch(() => undefined);
  deps.coordination.onReleased?.('ordered_lock', ordered.key);
}

async function validArgs(
  node: AsyncStepNode,
  resolve: () => Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const raw = resolve();
  if (!node.contract) return raw;
  const validated = await validateContract(node.contract, raw);
  return validated.ok ? validated.value : raw;
}

function contended(error: Error): { primitive: PrimitiveName; key: string } {
  if (error instanceof RateLimitedError) return { primitive: 'rate_limit', key: error.details.key };
  if (error instanceof ContentionError) return { primitive: error.details.primitive, key: error.details.key };
  return { primitive: 'lock', key: '' };
}

/** A failure pause reached a driver that runs no root frame: an internal invariant broke. */
function notAtRoot(): ReactorError {
  return new ReactorError('unexpected_yield', 'only the root frame of an execution pauses on a failure');
}
