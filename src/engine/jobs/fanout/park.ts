/**
 * Parking a parent execution on a fan-out map, and resuming its rollback once the map's
 * elements are undone (decisions 018, 019). Same protocol as a park on a busy key: persist,
 * enqueue the delayed wake job, then register it in the ledger — a settlement that completes the
 * map promotes it, and a registration that finds the map already done wakes it at once.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import { errorFromJSON, errorToJSON } from '../../../errors.js';
import type { BackgroundDeps } from '../background.js';
import { finish } from '../../execution/execute.js';
import { JOB_FORMAT_VERSION, type ExecutionJob } from '../../ports/queue.js';
import type { ExecutionRecord, RollbackFailure } from '../../ports/store.js';
import type { RunState } from '../../run/run-state.js';
import { runFrame } from '../../graph/scheduler.js';
import { elementIdOf, elementRunJobId, elementUndoJobId } from '../../model/fanout/ids.js';
import { undoOrPark } from '../../graph/fanout/rollback.js';
import { undoElementsInline, type ElementDeps } from './element-job.js';
import type { FanOutPark, FanOutRuntime } from '../../model/fanout/wait.js';

/** Work to do once the liveness lock is released. */
type After = (() => Promise<void>) | undefined;

/** The fan-out runtime of an engine with a queue and a ledger. */
export function fanOutRuntime(deps: BackgroundDeps): FanOutRuntime | undefined {
  return deps.fanOut ? { ledger: deps.fanOut, queue: deps.queue, store: deps.store } : undefined;
}

/** The fan-out runtime of an operator's undo or cancel: completed elements are undone in this process. */
export function inlineFanOutRuntime(deps: ElementDeps, reactor: AnyReactorDefinition): FanOutRuntime | undefined {
  if (!deps.fanOut) return undefined;
  return {
    ledger: deps.fanOut,
    queue: deps.queue,
    store: deps.store,
    undoInline: (mapId, step) => undoElementsInline(deps, reactor, mapId.slice(0, -(step.length + 1)), step),
  };
}

/** Parks `state` on a fan-out map: elements running (`parked`) or being undone (`rolling_back`). */
export async function parkOnFanOut(deps: BackgroundDeps, state: RunState, park: FanOutPark): Promise<After> {
  const ledger = deps.fanOut!;
  const background = state.background ?? { jobs: 1, contention: 0 };
  const jobs = background.jobs + 1;
  const jobId = `${state.executionId}:${jobs}`;
  const { waitingFor: _w, fanOutRollback: _r, ...rest } = background;
  if (park.phase === 'collect') {
    state.background = { ...rest, jobs, waitingFor: { primitive: 'map', key: park.step, attempt: 0, jobId } };
  } else {
    const error = errorToJSON(park.error ?? new Error('rolled back'));
    state.background = {
      ...rest,
      jobs,
      fanOutRollback: {
        mapId: park.mapId,
        error,
        ...(park.below === undefined ? {} : { below: park.below }),
        ...(park.failedStep === undefined ? {} : { failedStep: park.failedStep }),
      },
    };
    if (park.target >= 0)
      state.emit({
        type: 'map.rollback_dispatched',
        step: park.step,
        index: park.target,
        jobId: elementUndoJobId(elementIdOf(state.executionId, park.step, park.target)),
      });
  }
  state.emit({
    type: 'map.parked',
    step: park.step,
    phase: park.phase,
    jobId,
    settled: park.settled,
    total: park.total,
  });
  state.emit({ type: 'run.queued', jobId, delayMs: deps.options.parkFallbackMs, reason: 'park' });
  await state.checkpoint(park.phase === 'collect' ? 'parked' : 'rolling_back', {}, { withTrace: true });
  // Enqueue first, then register: a settlement that finds the wake job always finds it delayed.
  await deps.queue.enqueue(jobOf(state.executionId, state.reactor), { jobId, delayMs: deps.options.parkFallbackMs });
  const registered = await ledger.register(park.mapId, jobId, park.phase);
  return async () => {
    const elementJob = (index: number, id: (elementId: string) => string): Promise<void> =>
      deps.queue.enqueue(jobOf(elementIdOf(state.executionId, park.step, index), state.reactor), {
        jobId: id(elementIdOf(state.executionId, park.step, index)),
      });
    if (park.phase === 'collect') {
      for (const index of park.dispatch) await elementJob(index, elementRunJobId);
      if (registered.done) await deps.queue.promote(jobId); // settled before the registration: wake now
      return;
    }
    if (registered.target >= 0) await elementJob(registered.target, elementUndoJobId);
    else await deps.queue.promote(jobId);
  };
}

/**
 * A job of an execution whose rollback waits on a fan-out map: once the map's completed elements
 * are undone, report their undo failures, undo the older completed steps (possibly parking at
 * another fan-out map) and end `failed`. Before that, park again.
 */
export async function resumeFanOutRollback(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
): Promise<After> {
  const pending = record.background!.fanOutRollback!;
  const state = deps.newState({
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: reactor.name,
    contract: reactor.contract,
    input: record.input as Record<string, unknown>,
    idempotencyKey: record.idempotencyKey,
    resume: record,
    mode: 'worker',
    replayOnly: true,
  });
  state.fanOut = fanOutRuntime(deps);
  const step = pending.mapId.slice(record.id.length + 1);
  const error = errorFromJSON(pending.error);
  const snapshot = await deps.fanOut!.snapshot(pending.mapId);
  if (snapshot && snapshot.target >= 0) {
    // Woken by the fallback while elements are still being undone.
    return parkOnFanOut(deps, state, {
      mapId: pending.mapId,
      step,
      phase: 'rollback',
      dispatch: [],
      target: snapshot.target,
      settled: snapshot.total,
      total: snapshot.total,
      below: pending.below,
      failedStep: pending.failedStep,
      error,
    });
  }
  state.rollbackFailures.push(...(await elementUndoFailures(state, step, snapshot?.statuses ?? [])));
  await state.progress('rolling_back');
  const replay = await runFrame(state, {
    def: reactor,
    input: state.input,
    prefix: '',
    signal: new AbortController().signal,
  });
  const seq = (path: string): number => state.stepRecord(path)?.completedSeq ?? 0;
  const older =
    replay.status === 'completed'
      ? replay.completed.filter((e) => pending.below === undefined || seq(e.step) < pending.below)
      : [];
  const park = await undoOrPark(state, older);
  if (park) return parkOnFanOut(deps, state, { ...park, failedStep: pending.failedStep, error });
  const { fanOutRollback: _done, ...rest } = state.background ?? { jobs: 1, contention: 0 };
  state.background = rest;
  await finish(state, { status: 'failed', step: pending.failedStep, error, validation: [] });
  return undefined;
}

/** The undo failures of a map's undone elements, highest index first (rollback order). */
async function elementUndoFailures(
  state: RunState,
  step: string,
  statuses: readonly string[],
): Promise<RollbackFailure[]> {
  const undone = statuses.flatMap((s, i) => (s === 'undone' ? [i] : [])).reverse();
  const records = await Promise.all(
    undone.map((i) => state.fanOut!.store.get(elementIdOf(state.executionId, step, i))),
  );
  return records.flatMap((r) => (r?.rollbackFailures ?? []).filter((f) => f.kind === 'undo'));
}

function jobOf(executionId: string, reactor: string): ExecutionJob {
  return { v: JOB_FORMAT_VERSION, executionId, reactor };
}
