/**
 * Parking a parent execution on a fan-out map, and resuming its rollback once the map's
 * elements are undone (decisions 018, 019). Same protocol as a park on a busy key: persist,
 * enqueue the delayed wake job, then register it in the ledger — a settlement that completes the
 * map promotes it, and a registration that finds the map already done wakes it at once. The
 * elements' first jobs are enqueued in bulk (`dispatchElements`).
 *
 * @module
 */
import { replayInit } from '../../execution/new-state.js';
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import { errorFromJSON, errorToJSON } from '../../../errors.js';
import { finish } from '../../execution/execute.js';
import { executionJob, nextJob } from '../../execution/next-job.js';
import { backgroundOf, cleared } from '../../model/background.js';
import type { ExecutionRecord, FanOutRollbackState, RollbackFailure } from '../../../ports/store.js';
import type { RunState } from '../../run/run-state.js';
import { runFrame } from '../../graph/scheduler.js';
import { elementIdOf, elementUndoJobId } from '../../model/fanout/ids.js';
import { dispatchElements } from './dispatch.js';
import { inChunks } from '../../model/fanout/chunks.js';
import { undoOrPark } from '../../graph/fanout/rollback.js';
import type { FanOutPark, FanOutRuntime } from '../../model/fanout/wait.js';
import type { After, BackgroundDeps } from '../deps.js';

/** The fan-out runtime of an engine with a queue and a ledger. */
export function fanOutRuntime(deps: BackgroundDeps): FanOutRuntime | undefined {
  return deps.fanOut ? { ledger: deps.fanOut, queue: deps.queue, store: deps.store } : undefined;
}

/** Parks `state` on a fan-out map: elements running (`parked`) or being undone (`rolling_back`). */
export async function parkOnFanOut(deps: BackgroundDeps, state: RunState, park: FanOutPark): Promise<After> {
  const ledger = deps.fanOut!;
  // Enqueue first, then register: a settlement that finds the wake job always finds it delayed.
  const { jobId } = await nextJob(deps, state, {
    status: park.phase === 'collect' ? 'parked' : 'rolling_back',
    reason: 'park',
    delayMs: deps.options.parkFallbackMs,
    traced: false,
    update: (background, { jobId }) => {
      const rest = cleared(background, 'waitingFor', 'fanOutRollback');
      if (park.phase === 'collect')
        return { ...rest, waitingFor: { primitive: 'map', key: park.step, attempt: 0, jobId } };
      return { ...rest, fanOutRollback: rollbackState(park) };
    },
    announce: ({ jobId }) => announcePark(state, park, jobId),
  });
  const registered = await ledger.register(park.mapId, jobId, park.phase);
  return async () => {
    if (park.phase === 'collect') {
      const at = { parentId: state.executionId, step: park.step, reactor: state.reactor };
      await dispatchElements(deps.queue, at, park.dispatch);
      if (registered.done) await deps.queue.promote(jobId); // settled before the registration: wake now
      return;
    }
    if (registered.target >= 0) {
      const elementId = elementIdOf(state.executionId, park.step, registered.target);
      await deps.queue.enqueue(executionJob(elementId, state.reactor), { jobId: elementUndoJobId(elementId) });
    } else await deps.queue.promote(jobId);
  };
}

/** What a record parked at a fan-out map's rollback keeps: the map, the error it fails with, where the rollback goes on. */
function rollbackState(park: FanOutPark): FanOutRollbackState {
  return {
    mapId: park.mapId,
    error: errorToJSON(park.error ?? new Error('rolled back')),
    ...(park.below === undefined ? {} : { below: park.below }),
    ...(park.failedStep === undefined ? {} : { failedStep: park.failedStep }),
  };
}

/** The park's events: the first element's undo dispatched (rollback), then `map.parked` with the wake job. */
function announcePark(state: RunState, park: FanOutPark, jobId: string): void {
  if (park.phase !== 'collect' && park.target >= 0)
    state.emit({
      type: 'map.rollback_dispatched',
      step: park.step,
      index: park.target,
      jobId: elementUndoJobId(elementIdOf(state.executionId, park.step, park.target)),
    });
  state.emit({
    type: 'map.parked',
    step: park.step,
    phase: park.phase,
    jobId,
    settled: park.settled,
    total: park.total,
  });
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
  const state = deps.newState(replayInit(reactor, record));
  state.bindWork({ fanOut: fanOutRuntime(deps) });
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
  state.addRollbackFailures(...(await elementUndoFailures(state, step, snapshot?.statuses ?? [])));
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
  state.setBackground(cleared(backgroundOf(state), 'fanOutRollback'));
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
  const failures: RollbackFailure[] = [];
  await inChunks(
    undone.length,
    (i) => state.fanOut!.store.get(elementIdOf(state.executionId, step, undone[i]!)),
    (records) => {
      for (const r of records) failures.push(...(r?.rollbackFailures ?? []).filter((f) => f.kind === 'undo'));
    },
  );
  return failures;
}
