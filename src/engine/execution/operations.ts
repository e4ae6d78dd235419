/**
 * Operations on executions: cancel (a queued, parked or running one), undo a completed one on
 * demand, retry a failed one as a new linked execution. Rollback of work done in earlier jobs
 * replays the record (no body runs) and undoes what it says completed, newest first.
 *
 * @module
 */
import { stepsWithMapResults } from '../run/compact-map.js';
import { replayInit } from './new-state.js';
import { compensatePaused, compensateStarted } from './failure-rollback.js';
import { versionFor } from '../model/versions.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import {
  ExecutionNotFoundError,
  CancelledError,
  type DeadlineExceededError,
  type SupersededError,
  ExecutionStateError,
  ReactorError,
} from '../../errors.js';
import { cancelled, fromRecord, type CoordinationDeps } from './execute.js';
import { fastPathsOf } from '../../coordination/fast-paths.js';
import type { Coordinator } from '../../ports/coordinator.js';
import { noInstrument, type Instrument } from '../model/instrument.js';
import type { JobPlace, JobQueue } from '../../ports/queue.js';
import type { WaitList } from '../../ports/wait-list.js';
import {
  TERMINAL_STATUSES,
  type ExecutionRecord,
  type ExecutionTags,
  type Store,
  type TraceContext,
} from '../../ports/store.js';
import type { RunResult } from '../model/results.js';
import type { RunState, RunStateInit } from '../run/run-state.js';
import { runFrame, undoAll } from '../graph/scheduler.js';
import { cancelRecordedChildren } from '../graph/async/cascade.js';
import { inlineFanOutRuntime } from './fanout/element-undo.js';
import { cancelRequestKey, waitListKey } from '../model/keys.js';
import { operatorHold } from './operator-lock.js';
import { CANCEL_BUCKET } from './cancels.js';
import type { FanOutLedger } from '../../ports/fanout.js';

/** What operations need from the engine. */
export interface OperationsDeps {
  readonly store: Store;
  readonly coordination: CoordinationDeps;
  readonly waitList: WaitList | undefined;
  readonly queue: JobQueue | undefined;
  readonly registry: ReadonlyMap<string, AnyReactorDefinition>;
  /** Every registered definition by fingerprint: undo and cancel use the one the execution ran with (decision 082). */
  readonly versions?: ReadonlyMap<string, AnyReactorDefinition>;
  /** Root controllers of inline runs in this process, by execution id. */
  readonly live: ReadonlyMap<string, { readonly abort: AbortController; readonly done: Promise<RunResult> }>;
  /** Brackets an operator's rollback in a `run` scope (a span in the execution's trace). Default: none. */
  readonly instrument?: Instrument;
  readonly newState: (
    init: Pick<
      RunStateInit,
      'executionId' | 'rootExecutionId' | 'reactor' | 'contract' | 'input' | 'idempotencyKey'
    > & { readonly resume?: ExecutionRecord; readonly mode?: 'inline' | 'worker'; readonly replayOnly?: boolean },
  ) => RunState;
  /** Ledgers of fan-out maps: undo and cancel undo a completed fan-out map's elements in this process. */
  readonly fanOut?: FanOutLedger | undefined;
}

/**
 * The record and the definition of an operation on it: the one it ran with (`version_unavailable`
 * without it), or — `current` — the registered definition of its name (a retry is a new execution).
 */
async function load(
  deps: OperationsDeps,
  executionId: string,
  operation: string,
  definition: 'own' | 'current' = 'own',
): Promise<{ record: ExecutionRecord; reactor: AnyReactorDefinition }> {
  const record = await deps.store.get(executionId);
  if (!record) throw new ExecutionNotFoundError(executionId);
  const reactor = deps.registry.get(record.reactor);
  if (!reactor)
    throw new ReactorError(
      'reactor_unknown',
      `cannot ${operation} execution ${executionId}: reactor "${record.reactor}" is not registered with this engine (engine.register)`,
      { details: { reactor: record.reactor } },
    );
  return definition === 'current' ? { record, reactor } : versionFor(record, reactor, deps.versions, operation);
}

function coordinatorOf(deps: Pick<OperationsDeps, 'coordination'>): Coordinator {
  const c = deps.coordination.coordinator;
  if (!c) throw new ReactorError('coordinator_missing', 'operations on executions need a coordinator (liveness locks)');
  return c;
}

/**
 * Runs `fn` holding the execution's liveness lock; `undefined` when a job is running it. `idle`
 * (a fresh read of the record) says whether a job that holds the lock is only finishing its tail,
 * which the operator waits for (see `operator-lock.ts`). Default: it does not wait.
 */
async function exclusive<T>(
  deps: OperationsDeps,
  executionId: string,
  fn: () => Promise<T>,
  idle: () => Promise<boolean> = async () => false,
): Promise<T | undefined> {
  const hold = await operatorHold(coordinatorOf(deps), executionId, idle);
  if (!hold) return undefined;
  try {
    return await fn();
  } finally {
    await hold.release();
  }
}

/**
 * Rebuilds the completed work from the record, compensates the steps a lost worker's attempt may
 * have run (decisions 098, 159), undoes the completed ones newest first, hands back an ordered
 * position it still has, and ends the execution `cancelled`. `cause`: a passed deadline's error,
 * or a debounced start's supersession (kept in the record and the result), when the engine
 * cancels it rather than an operator.
 */
export async function rollbackRecorded(
  deps: Pick<OperationsDeps, 'newState' | 'waitList' | 'coordination' | 'store' | 'fanOut'>,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  reason: string,
  cause?: DeadlineExceededError | SupersededError,
): Promise<RunResult> {
  const state = deps.newState(replayInit(reactor, record));
  state.bindWork({ fanOut: inlineFanOutRuntime(deps, reactor) }); // a completed fan-out map's elements are undone here too
  const replay = await runFrame(state, {
    def: reactor,
    input: state.input,
    prefix: '',
    signal: new AbortController().signal,
  });
  state.emit({ type: 'run.rolling_back', step: undefined });
  await state.checkpoint('rolling_back', {}, { cause: 'undo' }); // a finished execution is reopened only by an undo (decision 110)
  await cancelRecordedChildren(state, reactor); // its unfinished children roll back first (decision 087)
  if (record.status === 'paused' && record.pausedOn) await compensatePaused(state, reactor, record.pausedOn); // paused on a failure: the failed step first
  // A lost worker's attempts counted as started bodies, newest first (decisions 098, 159).
  const lostError = cause ?? new CancelledError(record.id, reason);
  for (const step of lostSteps(record).reverse()) await compensateStarted(state, reactor, step, lostError);
  if (replay.status === 'completed') await undoAll(replay.completed, state);
  const ordered = record.background?.ordered;
  const spec = reactor.coordination.find((c) => c.kind === 'ordered_lock');
  if (ordered && record.status !== 'completed' && deps.coordination.coordinator) {
    await deps.coordination.coordinator
      .orderedComplete({ ...ordered, failed: false, strict: spec?.kind === 'ordered_lock' && spec.strict })
      .catch(() => undefined);
  }
  const waiting = record.background?.waitingFor;
  const result = await cancelled(state, reason, cause);
  if (waiting) await deps.waitList?.remove(waitListKey(waiting.primitive, waiting.key), waiting.jobId);
  return result;
}

/**
 * The steps of `record` whose last attempt is one a lost worker may have run and no later job
 * settled (`worker_lost`, `may_have_run`, `interrupted`, the step `retrying`): a rollback
 * compensates them as steps whose bodies ran (decision 098). In the order they were recorded.
 */
function lostSteps(record: ExecutionRecord): string[] {
  return Object.entries(record.steps)
    .filter(([, r]) => r.status === 'retrying' && LOST_OUTCOMES.has(r.runs?.at(-1)?.outcome ?? ''))
    .map(([step]) => step);
}

/** The outcomes of attempts a lost (or stopped) worker may have run. */
const LOST_OUTCOMES: ReadonlySet<string> = new Set(['worker_lost', 'may_have_run', 'interrupted']);

/**
 * Cancels an execution that has not finished. Queued or parked: rolled back now. Running inline
 * in this process: stopped at the next step boundary and rolled back. Running in another worker,
 * or queued with its job taken by a worker that does not hold the execution (decision 159): a
 * cancel request that worker (or the job that takes over from it) picks up (the returned result
 * is the current state; `engine.wait` gives the outcome).
 */
export async function cancelExecution(deps: OperationsDeps, executionId: string, reason: string): Promise<RunResult> {
  const inline = deps.live.get(executionId);
  if (inline) {
    inline.abort.abort(new CancelledError(executionId, reason));
    return inline.done;
  }
  const { record, reactor } = await load(deps, executionId, 'cancel');
  if (TERMINAL_STATUSES.has(record.status))
    throw new ExecutionStateError(
      executionId,
      'cancel',
      record.status,
      record.status === 'completed' ? 'use undo to roll back a completed execution' : 'it has already finished',
    );
  // The marker carries the reason: the process that runs it ends it with this one (decision 106).
  // The marker is the source of truth; the announcement reaches a process running it at once (decision 053).
  let requested = false;
  const request = async (): Promise<void> => {
    if (requested) return;
    requested = true;
    await requestCancel(deps, executionId, reason);
  };
  const done = await exclusive(
    deps,
    executionId,
    async () => {
      const fresh = (await deps.store.get(executionId)) ?? record;
      // The job that held it ended it on the request made below.
      if (requested && fresh.status === 'cancelled') return fromRecord(fresh);
      if (TERMINAL_STATUSES.has(fresh.status))
        throw new ExecutionStateError(executionId, 'cancel', fresh.status, 'it finished meanwhile');
      // Running with its liveness lock free: an inline run in another process (or a worker whose
      // job is being redelivered). Rolling it back here would undo steps under its feet: ask it instead.
      if (fresh.status === 'running') return undefined;
      // Queued with its liveness lock free, but a worker has taken its job: that job is about to
      // enter, or its worker was lost (or its lease lapsed) while it ran steps no checkpoint has
      // recorded yet; or the queue took the job back from such a worker. The job that continues
      // it records them and rolls back (decisions 159 and 161).
      if (await jobTaken(deps, fresh)) {
        await request(); // before the lock is free: the job that enters next reads it
        return undefined;
      }
      return rollbackTraced(deps, reactor, fresh, reason);
    },
    // Queued, parked or pending with the lock taken: the job that wrote it is finishing its tail, or
    // is running a first step it has not recorded yet. It is asked to stop, and waited for (decision 144).
    async () => {
      const current = await deps.store.get(executionId);
      if (current === undefined || current.status === 'running') return false;
      if (!TERMINAL_STATUSES.has(current.status)) await request();
      return true;
    },
  );
  if (done) {
    // Let the parked execution's pending job run now (off the liveness lock): it finds the execution finished and ends.
    const waiting = record.background?.waitingFor;
    if (waiting) await deps.queue?.promote(waiting.jobId);
    else if (notBegun(record)) await discardStartJob(deps, record);
    return done;
  }
  await request();
  return {
    executionId,
    reactor: record.reactor,
    trace: record.trace ?? [],
    steps: stepsWithMapResults(record),
    rollbackFailures: record.rollbackFailures,
    replay: false,
    status: 'running',
  };
}

/**
 * Asks whichever process runs `executionId` to cancel it: the cancel marker, read by a worker when
 * it takes a job of the execution and at every liveness check, carrying the reason (decision
 * 106), then its announcement, which reaches a process running it at once (decision 053).
 */
export async function requestCancel(
  deps: Pick<OperationsDeps, 'coordination'>,
  executionId: string,
  reason: string,
): Promise<void> {
  await coordinatorOf(deps).periodMark({
    key: cancelRequestKey(executionId),
    bucket: CANCEL_BUCKET,
    ttlMs: 86_400_000,
    note: reason,
  });
  await fastPathsOf(coordinatorOf(deps))
    .announceCancel(executionId)
    .catch(() => undefined);
}

/** Undoes a completed execution on demand: every completed step's undo, newest first; it ends `cancelled`. */
export async function undoExecution(deps: OperationsDeps, executionId: string, reason: string): Promise<RunResult> {
  const { record, reactor } = await load(deps, executionId, 'undo');
  if (record.status !== 'completed')
    throw new ExecutionStateError(
      executionId,
      'undo',
      record.status,
      'only a completed execution can be undone (cancel one that is still going)',
    );
  const done = await exclusive(
    deps,
    executionId,
    () => rollbackTraced(deps, reactor, record, reason),
    async () => (await deps.store.get(executionId))?.status === 'completed', // the tail of the job that completed it
  );
  if (!done) throw new ExecutionStateError(executionId, 'undo', 'busy', 'another process is working on it; try again');
  return done;
}

/**
 * Ends a debounced start that has not begun `cancelled`, with `cause` (docs/decisions/086): true
 * when it did; false when it is not found, began already (a worker took its job), or finished.
 * Under its liveness lock, so a worker cannot take it meanwhile.
 */
export async function supersedeExecution(
  deps: OperationsDeps,
  executionId: string,
  cause: SupersededError,
): Promise<boolean> {
  const record = await deps.store.get(executionId);
  const current = record && deps.registry.get(record.reactor);
  if (!record || !current || !notBegun(record)) return false;
  const done = await exclusive(deps, executionId, async () => {
    const fresh = await deps.store.get(executionId);
    // A worker has taken its job: it may have run a first step no checkpoint has recorded (decision 159).
    if (!fresh || !notBegun(fresh) || (await jobTaken(deps, fresh))) return undefined;
    const { reactor, record: own } = versionFor(fresh, current, deps.versions, 'supersede');
    return rollbackTraced(deps, reactor, own, cause.message, cause);
  });
  if (done) await discardStartJob(deps, record);
  return done !== undefined;
}

/**
 * Removes the job of a start that ended before a worker took it, where the queue can. Should that
 * fail (a worker took it meanwhile, Redis is away), the job is delivered and ends at once on the
 * terminal record, as it would without `discard`: nothing to report.
 */
async function discardStartJob(deps: Pick<OperationsDeps, 'queue'>, record: ExecutionRecord): Promise<void> {
  await deps.queue?.discard?.(`${record.id}:${record.background?.jobs ?? 1}`).catch(() => false);
}

/**
 * Whether the queue says a worker has, or has had, the job a `pending` record waits for (its
 * regular job, or the one a recovery sweep enqueued) while the caller holds the liveness lock:
 * `active`, that job has not entered yet, or it ran steps and lost its lease before a checkpoint
 * said `running` (with a checkpoint interval the first record of a job is written with its first
 * interval's progress); `returned`, its worker died or stalled and the queue took it back, or an
 * attempt failed, and steps no checkpoint recorded may have run (docs/decisions/161).
 * False when the queue cannot say (no queue, no `jobStates`, or the question failed).
 */
async function jobTaken(deps: Pick<OperationsDeps, 'queue'>, record: ExecutionRecord): Promise<boolean> {
  if (record.status !== 'pending' || !deps.queue?.jobStates) return false;
  const background = record.background;
  const jobs = [`${record.id}:${background?.jobs ?? 1}`];
  if (background?.recovered) jobs.push(background.recovered.jobId);
  const places: readonly JobPlace[] = await deps.queue.jobStates(jobs).catch(() => []);
  return places.some((place) => place === 'active' || place === 'returned');
}

/** A pending record no job has run a step of. */
function notBegun(record: ExecutionRecord): boolean {
  return record.status === 'pending' && Object.keys(record.steps).length === 0;
}

/** {@link rollbackRecorded} by an operator, in a `run` scope of mode `operation` (it joins the execution's trace). */
function rollbackTraced(
  deps: OperationsDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  reason: string,
  cause?: SupersededError,
): Promise<RunResult> {
  const scope = {
    kind: 'run',
    mode: 'operation',
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: record.reactor,
    ...(record.traceContext === undefined ? {} : { traceContext: record.traceContext }),
  } as const;
  return (deps.instrument ?? noInstrument).traced(scope, (traceContext) =>
    rollbackRecorded(deps, reactor, traceContext ? { ...record, traceContext } : record, reason, cause),
  );
}

/** Checks that an execution can be retried and returns its reactor and input. */
export async function retrySource(
  deps: OperationsDeps,
  executionId: string,
): Promise<{
  reactor: AnyReactorDefinition;
  input: unknown;
  traceContext: TraceContext | undefined;
  tags: ExecutionTags | undefined;
}> {
  const { record, reactor } = await load(deps, executionId, 'retry', 'current');
  if (!['failed', 'cancelled', 'halted', 'aborted'].includes(record.status))
    throw new ExecutionStateError(
      executionId,
      'retry',
      record.status,
      'only a failed, halted, cancelled or aborted execution is retried (as a new linked execution)',
    );
  return { reactor, input: record.input, traceContext: record.traceContext, tags: record.tags };
}
