/**
 * Background execution: accept a run onto the queue, and process its jobs in a worker. State
 * lives in the store; a job carries ids only. Retries are delayed re-enqueues; contention parks
 * the execution on the key's wait list and the release wakes it (docs/decisions/007).
 *
 * @module
 */
import { validateContract } from '../../dsl/contract.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { computeKey } from '../../coordination/scope.js';
import type { CoordinationSpec } from '../../dsl/coordination.js';
import {
  boundedDelay,
  contendedKey,
  continuedWait,
  declaredTimeout,
  holderOf,
  noteWait,
  renewKeptHolds,
  sameHolder,
  timedOut,
  timeoutError,
} from '../model/contention-wait.js';
import {
  CancelledError,
  ContentionError,
  LeaseLostError,
  RateLimitedError,
  ReactorError,
  WorkerShutdownError,
  type PrimitiveName,
} from '../../errors.js';
import { monotonicNow } from '../../coordination/deadline.js';
import { JobLiveness } from '../run/job-liveness.js';
import { cancelRequestKey, livenessKey, rollbackRecorded } from '../execution/operations.js';
import type { CancelTargets } from '../execution/cancels.js';
import { admitWork, finish, type CoordinationDeps } from '../execution/execute.js';
import type { Clock } from '../ports/clock.js';
import { noInstrument, type Instrument } from '../model/instrument.js';
import {
  JOB_FORMAT_VERSION,
  type ExecutionJob,
  type JobDelivery,
  type JobQueue,
  type WaitList,
} from '../ports/queue.js';
import {
  TERMINAL_STATUSES,
  type ExecutionRecord,
  type Store,
  type TraceContext,
  type WaitingFor,
} from '../ports/store.js';
import type { RunResult } from '../model/results.js';
import { RunState, type JobBinding, type RunStateInit } from '../run/run-state.js';
import { runFrame, type GraphOutcome } from '../graph/scheduler.js';
import { processElementJob } from './fanout/element-job.js';
import { fanOutRuntime, parkOnFanOut, resumeFanOutRollback } from './fanout/park.js';
import type { FanOutLedger } from '../ports/fanout.js';
import type { JobLeases } from '../ports/job-lease.js';
import { interruptJob, isInterruptJob } from './interrupt/jobs.js';
import { pauseRun } from '../execution/interrupt/pause.js';
import { parkReader } from './async/park.js';
import { AsyncPendingError } from '../graph/async/read-unit.js';
import { advanceUnit } from './async/unit-worker.js';

/** Tunables of background execution. */
export interface BackgroundOptions {
  /** Contention attempts before a parked execution fails (ordered-lock waits are never capped). Default 100. */
  readonly contentionCap?: number;
  /** Delay of a parked execution's fallback job, in case no release wakes it. Default 5 s. */
  readonly parkFallbackMs?: number;
  /** TTL of the per-execution liveness lock that keeps two workers off one execution. Default 30 s. */
  readonly livenessTtlMs?: number;
  /**
   * How often each worker tries to run the recovery sweep (one worker at a time sweeps): it
   * re-enqueues executions that no lease and no job carry any more, and resumes or aborts inline
   * runs whose process stopped (docs/decisions/066). Default 2 × `livenessTtlMs`, or 0 on a
   * coordinator that lives in this process only (the memory backend: a process that dies takes
   * its executions with it); 0 turns the timer off (`engine.sweep()` still sweeps once).
   */
  readonly sweepIntervalMs?: number;
  /**
   * How long a worker waits out lock / semaphore / ordered-lock contention on the key's release
   * notification before it parks the execution (a declaration's own `wait` is the in-process budget).
   * A short wait hands a busy key over in well under a millisecond; parking frees the job slot.
   * Default 250 ms; 0 parks at once.
   */
  readonly workerWaitMs?: number;
  /**
   * How long a job waits (on the release notification) for another process's job of the same
   * execution to let go of the execution's liveness lock before it defers itself. A wake-up that
   * reaches a second worker while the first is still writing its park checkpoint is then handled
   * in milliseconds instead of after the park fallback. Default 1 s; 0 defers at once.
   */
  readonly livenessWaitMs?: number;
  /** How long an in-process reader of an `asyncStep` / `asyncReactor` result waits before `AsyncWaitTimeoutError`. Default 30 s. */
  readonly asyncWaitMs?: number;
  /** How long a worker reader may stay parked on an async unit, from its dispatch. Default 1 h. */
  readonly asyncParkTimeoutMs?: number;
}

/** What the background path needs from the engine. */
export interface BackgroundDeps {
  readonly store: Store;
  readonly queue: JobQueue;
  readonly waitList: WaitList | undefined;
  readonly clock: Clock;
  readonly coordination: CoordinationDeps;
  readonly options: Required<BackgroundOptions>;
  readonly workerId: string;
  /** Cancels announced by other processes (decision 053); without it a worker reads the cancel marker only. */
  readonly cancels?: CancelTargets;
  /** Brackets job runs and enqueues in middleware scopes (spans). Default: none. */
  readonly instrument?: Instrument;
  /** Ledgers of fan-out maps; without it a fan-out map fails in a worker (`fan_out_unavailable`). */
  readonly fanOut?: FanOutLedger | undefined;
  /** The lease bindings of the jobs this process runs now, by execution id: states of those executions write under them (decision 064). */
  readonly liveJobs?: Map<string, JobBinding>;
  /** Liveness lease + record read, terminal write + release: one call each (set whenever there is a coordinator). */
  readonly jobLeases?: JobLeases | undefined;
  readonly newState: (
    init: Pick<
      RunStateInit,
      'executionId' | 'rootExecutionId' | 'reactor' | 'contract' | 'input' | 'idempotencyKey' | 'retryOf' | 'parentId'
    > & { readonly resume?: ExecutionRecord; readonly mode?: 'inline' | 'worker'; readonly replayOnly?: boolean },
  ) => RunState;
}

const waitKey = (primitive: PrimitiveName, key: string): string => `${primitive}:${key}`;
const job = (of: { readonly id: string; readonly reactor: string } | RunState): ExecutionJob =>
  of instanceof RunState
    ? { v: JOB_FORMAT_VERSION, executionId: of.executionId, reactor: of.reactor }
    : { v: JOB_FORMAT_VERSION, executionId: of.id, reactor: of.reactor };

/** Accepts a run in the background: validated input, a pending record, the first job. */
export async function startBackground(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  executionId: string,
  input: Record<string, unknown>,
  idempotencyKey: string | undefined,
  retryOf?: string,
  links?: readonly TraceContext[],
): Promise<RunResult> {
  const state = deps.newState({
    executionId,
    rootExecutionId: executionId,
    reactor: reactor.name,
    contract: reactor.contract,
    input,
    idempotencyKey,
    retryOf,
    mode: 'worker',
  });
  state.traceLinks = links;
  const ordered = reactor.coordination.find((s) => s.kind === 'ordered_lock');
  if (ordered) {
    // The position is taken when the run is accepted, so executions pass in acceptance order.
    try {
      const key = computeKey(ordered, input, { reactor: reactor.name, step: undefined });
      const ticket = await deps.coordination.coordinator!.orderedTicket(key);
      state.background = { jobs: 1, contention: 0, ordered: { key, nonce: ticket.nonce, epoch: ticket.epoch } };
    } catch (error) {
      return finish(state, { status: 'failed', step: undefined, error: error as Error, validation: [] });
    }
  }
  return handOffToWorker(deps, state);
}

/**
 * Persists an execution as pending and enqueues its first job: a background start, or an inline
 * run at its hand-off point (its completed steps stay done).
 */
export async function handOffToWorker(deps: BackgroundDeps, state: RunState): Promise<RunResult> {
  state.background ??= { jobs: 1, contention: 0 };
  const jobId = `${state.executionId}:1`;
  state.emit({ type: 'run.queued', jobId, delayMs: 0, reason: 'start' });
  await enqueueTraced(deps, state, { jobId, delayMs: 0, reason: 'start' }, 'pending');
  return {
    status: 'queued',
    executionId: state.executionId,
    reactor: state.reactor,
    trace: state.trace,
    steps: state.steps,
    rollbackFailures: state.rollbackFailures,
    replay: false,
  };
}

/** Processes one job of an execution. Never runs one execution in two workers at once. */
export async function processJob(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  payload: ExecutionJob,
  delivery: JobDelivery,
): Promise<void> {
  const coordinator = deps.coordination.coordinator;
  const leases = deps.jobLeases;
  if (!coordinator || !leases)
    throw new ReactorError('coordinator_missing', 'background execution needs a coordinator (for liveness locks)');
  const id = payload.executionId;
  const liveKey = livenessKey(id);
  const owner = `${deps.workerId}:${delivery.jobId}:${delivery.delivery}`; // two deliveries of one job are two owners
  // Take the lease and, under it, read the record and the cancel flag: one round trip (docs/decisions/040).
  const request = {
    lease: { key: liveKey, holder: { owner, executionId: id }, ttlMs: deps.options.livenessTtlMs },
    executionId: id,
    cancel: { key: cancelRequestKey(id), bucket: 'requested' },
  };
  const enter = () =>
    leases.enterJob(request).catch(async (error: unknown) => {
      await coordinator.lockRelease(liveKey, owner).catch(() => undefined); // the reply may have been lost after the lease was taken
      throw error;
    });
  let sentAt = monotonicNow(deps.clock); // the lease's local deadline counts from the request (decision 064)
  let live = await enter();
  // Another process's job of this execution is finishing (say, a park checkpoint): wait for its release, briefly.
  const busyUntil = deps.clock.now() + deps.options.livenessWaitMs;
  while (
    !live.acquired &&
    !(live.holder?.owner.startsWith(`${deps.workerId}:`) ?? false) &&
    deps.clock.now() < busyUntil
  ) {
    await coordinator.waitForChange('lock', liveKey, Math.min(live.ttlMs, busyUntil - deps.clock.now()));
    sentAt = monotonicNow(deps.clock);
    live = await enter();
  }
  if (!live.acquired) {
    // Another job of this execution is still finishing (here: come back shortly), or another
    // worker has it, or a dead one's lease has not lapsed yet (come back when it lapses).
    const ours = live.holder?.owner.startsWith(`${deps.workerId}:`) ?? false;
    const delayMs = ours ? 20 : Math.min(deps.options.parkFallbackMs, Math.max(50, live.ttlMs));
    await deps.queue.enqueue(payload, { jobId: `${id}:busy:${delivery.jobId}:${delivery.delivery}`, delayMs });
    return;
  }
  // The lease fences every write of this job and stops it at its local deadline (decision 064).
  const liveness: JobLiveness = new JobLiveness(
    { clock: deps.clock, coordinator, leases },
    { executionId: id, key: liveKey, owner, ttlMs: deps.options.livenessTtlMs, sentAt },
    () => {
      if (!root.signal.aborted)
        void coordinator.periodIsMarked(request.cancel.key, request.cancel.bucket).then(
          (marked) => marked && cancelRequested(),
          () => undefined,
        );
    },
  );
  const root = liveness.root;
  const untrack = deps.cancels?.track(id, root); // a cancel announced elsewhere aborts it at once (decision 053)
  const cancelRequested = (): void => root.abort(new CancelledError(id, 'cancel requested by an operator'));
  if (live.cancelRequested) cancelRequested();
  // The worker's shutdown deadline stops the job like a lost lease, and it is handed back — unless
  // the run is already stopping on its own (a failure, halt or cancel: its rollback is not cut short) (docs/decisions/069).
  const shutdown = delivery.signal;
  const onShutdown = (): void => {
    if (!root.signal.aborted)
      liveness.stop(shutdown?.reason instanceof WorkerShutdownError ? shutdown.reason : new WorkerShutdownError(0));
  };
  shutdown?.addEventListener('abort', onShutdown, { once: true });
  if (shutdown?.aborted) onShutdown();
  // The terminal record write releases the lease in the same round trip; then the finally has nothing left to release.
  let released = false;
  const lease: JobLease = {
    saveAndRelease: async (record) => {
      await liveness.saveAndRelease(record);
      released = true;
    },
  };
  // Every state of this execution built during the job writes under the lease (the engine's newState binds it).
  deps.liveJobs?.set(id, liveness.binding);
  let after: (() => Promise<void>) | undefined;
  try {
    const record = live.record;
    if (!record) return; // expired
    const scope = {
      kind: 'run',
      mode: 'worker',
      executionId: id,
      rootExecutionId: record.rootId,
      reactor: record.reactor,
      job: delivery,
      ...(record.traceContext === undefined ? {} : { traceContext: record.traceContext }),
    } as const;
    const traced = (deps.instrument ?? noInstrument).traced;
    if (record.element !== undefined)
      return void (await traced(scope, async (traceContext) =>
        (
          await processElementJob(
            deps,
            reactor,
            traceContext ? { ...record, traceContext } : record,
            delivery,
            root.signal,
          )
        )?.(),
      ));
    if (TERMINAL_STATUSES.has(record.status)) return; // a redelivery of finished work
    if (isInterruptJob(record, delivery))
      return void (await traced(scope, (traceContext) =>
        interruptJob(deps, reactor, traceContext ? { ...record, traceContext } : record, delivery),
      )); // paused: only an active timeout acts
    const retryAt = record.background?.retryAt;
    if (record.status === 'pending' && retryAt !== undefined && retryAt - deps.clock.now() > 25) {
      // A stale or early delivery must not skip the retry backoff.
      await deps.queue.enqueue(payload, {
        jobId: `${id}:due:${delivery.jobId}:${delivery.delivery}`,
        delayMs: retryAt - deps.clock.now(),
      });
      return;
    }
    after = await traced(scope, (traceContext) =>
      advance(deps, reactor, traceContext ? { ...record, traceContext } : record, delivery, root, lease),
    );
  } catch (error) {
    if (!(error instanceof LeaseLostError) && !(liveness.stopped instanceof WorkerShutdownError)) throw error; // store gone past the tolerance: BullMQ delivers the job again
  } finally {
    untrack?.();
    shutdown?.removeEventListener('abort', onShutdown);
    if (deps.liveJobs?.get(id) === liveness.binding) deps.liveJobs.delete(id);
    liveness.end();
    try {
      // Handed back: the record stays at its last checkpoint and a new job resumes it at once, on
      // another worker; it is enqueued before the lease is free, and the lease is freed only now
      // that every step body of this job has returned (no two bodies overlap).
      if (!released && liveness.stopped instanceof WorkerShutdownError)
        await deps.queue.enqueue(payload, { jobId: `${id}:handback:${delivery.jobId}:${delivery.delivery}` });
    } finally {
      if (!released) await coordinator.lockRelease(liveKey, owner).catch(() => undefined);
    }
  }
  // A job that lost its lease leaves the execution to the worker that holds it now: it writes and wakes nothing.
  // A handed-back one completes its delivery (nothing for stall detection to redeliver).
  const stopped = liveness.stopped;
  if (stopped instanceof LeaseLostError && stopped.details.how === 'expired') {
    // Its deadline passed with nobody known to hold the lease (a frozen process, an outage): a job
    // continues the execution — it waits for the lease if another worker took it (decision 064).
    await deps.queue.enqueue(payload, { jobId: `${id}:lapsed:${delivery.jobId}:${delivery.delivery}`, delayMs: 0 });
    return;
  }
  if (stopped instanceof LeaseLostError || stopped instanceof WorkerShutdownError) return;
  if (stopped) throw stopped;
  // Only now may this execution's next job run here or elsewhere.
  await after?.();
}

/** The liveness lease of the job being processed: its terminal record write also releases it. */
interface JobLease {
  readonly saveAndRelease: (record: ExecutionRecord) => Promise<void>;
}

/** Runs what it can; returns work to do once the liveness lock is released (a self-wake). */
async function advance(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  delivery: JobDelivery,
  root: AbortController,
  lease: JobLease,
): Promise<(() => Promise<void>) | undefined> {
  if (record.unit) return advanceUnit(deps, reactor, record, delivery, root);
  const validated = await validateContract(reactor.contract, record.input);
  const input = validated.ok ? validated.value : (record.input as Record<string, unknown>);
  const state = deps.newState({
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: reactor.name,
    contract: reactor.contract,
    input,
    idempotencyKey: record.idempotencyKey,
    resume: record,
    mode: 'worker',
  });
  const background = state.background ?? { jobs: 1, contention: 0 };
  // A fallback job that finds the key held by the holder it parked behind parks again: no attempt spent, nothing traced (decision 068).
  const reparked =
    record.status === 'parked' && validated.ok && !root.signal.aborted
      ? await reparkBehindSameHolder(deps, state, delivery, reactor)
      : undefined;
  if (reparked) return reparked;
  state.emit({ type: 'run.resumed', jobId: delivery.jobId, delivery: delivery.delivery });
  const waiting = background.waitingFor;
  if (
    waiting &&
    waiting.jobId === delivery.jobId &&
    waiting.dueAt !== undefined &&
    state.clock.now() < waiting.dueAt - 5
  ) {
    state.emit({
      type: 'run.woken',
      primitive: waiting.primitive,
      key: waiting.key,
      jobId: delivery.jobId,
      ...(waiting.step === undefined ? {} : { step: waiting.step }),
    }); // resumed by a release, before its fallback
  }
  if (!validated.ok)
    return void (await finish(state, {
      status: 'failed',
      step: undefined,
      error: new ReactorError('input_invalid', 'persisted input no longer validates'),
      validation: validated.issues,
    }));
  if (state.stopped) throw state.stopped; // stopped before it began (a shutdown deadline): nothing is undone, the job is handed back
  if (root.signal.aborted)
    return void (await rollbackRecorded(deps, reactor, record, (root.signal.reason as Error).message)); // a cancel request picked up at the start of a job
  if (record.background?.fanOutRollback) return resumeFanOutRollback(deps, reactor, record); // its rollback waited on a fan-out map's elements
  let holds;
  if (reactor.coordination.length > 0) {
    const admission = await admitWork(state, deps.coordination, reactor.coordination, state.input, {
      reactor: reactor.name,
      abort: root,
      orderedTicket: background.ordered,
      adopt: background.parkedHolds !== undefined,
    });
    if (admission.kind === 'halt')
      return void (await finish(state, {
        status: 'halted',
        step: undefined,
        reason: admission.reason,
        data: admission.data,
      }));
    if (admission.kind === 'refused') return refused(deps, state, admission.error, reactor.coordination);
    holds = admission.holds;
    state.waited();
  }
  const { waitingFor: _done, retryAt: _due, parkedHolds: _adopted, ...rest } = background;
  state.background = rest;
  state.contentionCap = deps.options.contentionCap;
  state.fanOut = fanOutRuntime(deps);
  state.terminalSave = lease.saveAndRelease;
  let outcome: GraphOutcome | undefined;
  try {
    await state.progress('running');
    outcome = await runFrame(state, { def: reactor, input: state.input, prefix: '', signal: root.signal, owned: root }); // nothing watches root once the graph runs (decision 030)
  } catch (error) {
    outcome = { status: 'failed', step: undefined, error: error as Error, validation: [] };
  } finally {
    // A step parked on contention: the reactor-level holds are kept (detached) and re-adopted at resume.
    const stepParks =
      holds !== undefined &&
      outcome?.status === 'yielded' &&
      outcome.contention !== undefined &&
      !(outcome.contention instanceof AsyncPendingError);
    if (stepParks)
      state.background = {
        ...(state.background ?? { jobs: 1, contention: 0 }),
        parkedHolds: { owner: state.holderId },
      };
    // A stopped job keeps the execution's ordered position (like a retry): the worker that resumes it goes on in its turn.
    await holds
      ?.release(stepParks ? 'parked' : state.stopped ? 'yielded' : (outcome?.status ?? 'failed'))
      .catch((error: unknown) =>
        state.logger.warn({ err: error }, 'releasing coordination failed; holds expire by TTL'),
      );
  }
  const stopped = state.stopped;
  if (stopped) throw stopped; // nothing more is written or emitted as an outcome (decision 064)
  if (outcome.status === 'yielded' && outcome.pause) return void (await pauseRun(state, reactor));
  if (outcome.status === 'yielded') {
    if (outcome.fanOut !== undefined) return parkOnFanOut(deps, state, outcome.fanOut); // a fan-out map's elements run (or are undone) as jobs
    if (outcome.contention instanceof AsyncPendingError) return parkReader(deps, state, outcome.contention);
    // A step lost contention: park like a reactor-level refusal (the release wakes it).
    if (outcome.contention !== undefined) return refused(deps, state, outcome.contention);
    return void (await requeue(deps, state, outcome.delayMs, 'retry'));
  }
  await finish(state, outcome);
  return undefined;
}

/**
 * Contention in a worker parks the execution; anything else refused fails it (nothing ran, nothing
 * to roll back). Each park spends a contention attempt: it follows a try that lost the key — the
 * first, one woken by a release, or a fallback job's that found the holder changed (decision 068).
 * `declared`: the reactor-level declarations (their `contentionTimeout`); a step's wait was noted,
 * with its bound, by the step runner, which also fails the step when that bound has passed.
 */
export async function refused(
  deps: BackgroundDeps,
  state: RunState,
  error: Error,
  declared?: readonly CoordinationSpec[],
): Promise<(() => Promise<void>) | undefined> {
  const contended = contendedKey(error);
  if (!contended) return void (await finish(state, { status: 'failed', step: undefined, error, validation: [] }));
  const { primitive, key, step } = contended;
  const rate = error instanceof RateLimitedError ? (error.details as { retryAfterMs: number }) : undefined;
  const wait = noteWait(state, primitive, key, step, declaredTimeout(declared, primitive));
  const background = state.background ?? { jobs: 1, contention: 0 };
  const attempt = background.contention + 1;
  const now = state.clock.now();
  const overCap = primitive !== 'ordered_lock' && attempt > deps.options.contentionCap;
  if (overCap || (step === undefined && timedOut(wait, now))) {
    const failure = overCap
      ? new ContentionError({
          reactor: state.reactor,
          primitive,
          key,
          waitedMs: 0,
          holder: `still busy after ${attempt - 1} contention attempts (cap ${deps.options.contentionCap})`,
        })
      : timeoutError(error, wait, now);
    const { waitingFor: _stale, ...rest } = background;
    state.background = rest;
    return void (await finish(state, { status: 'failed', step: undefined, error: failure, validation: [] }));
  }
  const jobs = background.jobs + 1;
  const jobId = `${state.executionId}:${jobs}`;
  const delayMs = boundedDelay(rate ? rate.retryAfterMs : deps.options.parkFallbackMs, wait, now);
  // Who it parks behind: its fallback job parks again, spending nothing, while that holder holds.
  const holder = rate
    ? undefined
    : await holderOf(deps.coordination.coordinator!, primitive, key).catch(() => undefined);
  const waitingFor: WaitingFor = {
    primitive,
    key,
    attempt,
    jobId,
    dueAt: now + delayMs,
    ...(step === undefined ? {} : { step }),
    ...(holder === undefined ? {} : { holder }),
  };
  state.background = { ...background, jobs, contention: attempt, waitingFor, contended: { ...wait, job: jobs } };
  state.emit({ type: 'run.parked', primitive, key, attempt, jobId, ...(step === undefined ? {} : { step }) });
  state.emit({ type: 'run.queued', jobId, delayMs, reason: 'park' });
  // Enqueue first, then register: a wake that finds the waiter always finds its delayed job.
  await enqueueTraced(deps, state, { jobId, delayMs, reason: 'park' }, 'parked');
  if (rate) return undefined;
  await deps.waitList?.add(waitKey(primitive, key), jobId);
  return wakeIfFree(deps, primitive, key);
}

/**
 * The park's fallback job (not woken by a release) of an execution parked on a lock or a
 * semaphore: when the key is held by the holder it parked behind, the execution parks again at
 * once — no admission, no contention attempt, no trace entry; reactor-level holds it keeps across
 * a step's park are renewed (decision 068). Undefined when it must contend instead: woken, the
 * holder changed or left, the wait's `contentionTimeout` has passed, a kept hold is gone, or the
 * park recorded no holder. `reactor`: the execution's definition (its kept holds); `wanted`: a
 * last check that the execution still waits (an async unit's dispatcher has not rolled back).
 */
export async function reparkBehindSameHolder(
  deps: BackgroundDeps,
  state: RunState,
  delivery: JobDelivery,
  reactor?: AnyReactorDefinition,
  wanted?: () => Promise<boolean>,
): Promise<(() => Promise<void>) | undefined> {
  const background = state.background;
  const waiting = background?.waitingFor;
  const coordinator = deps.coordination.coordinator;
  if (
    !background ||
    !waiting?.holder ||
    !coordinator ||
    waiting.jobId !== delivery.jobId ||
    waiting.dueAt === undefined
  )
    return undefined;
  if (waiting.primitive !== 'lock' && waiting.primitive !== 'semaphore') return undefined;
  const now = state.clock.now();
  if (now < waiting.dueAt - 5) return undefined; // woken by a release: it contends
  const wait = continuedWait(background, waiting.primitive, waiting.key, waiting.step);
  if (timedOut(wait, now)) return undefined; // the admission reports the time bound
  const holder = await holderOf(coordinator, waiting.primitive, waiting.key).catch(() => undefined);
  if (!sameHolder(waiting.holder, holder)) return undefined;
  if (
    background.parkedHolds !== undefined &&
    (reactor === undefined ||
      !(await renewKeptHolds(coordinator, reactor.coordination, state.input, reactor.name, background)))
  )
    return undefined;
  if (wanted !== undefined && !(await wanted())) return undefined;
  const jobs = background.jobs + 1;
  const jobId = `${state.executionId}:${jobs}`;
  const delayMs = boundedDelay(deps.options.parkFallbackMs, wait, now);
  state.background = {
    ...background,
    jobs,
    waitingFor: { ...waiting, jobId, dueAt: now + delayMs },
    ...(wait === undefined ? {} : { contended: { ...wait, job: jobs } }),
  };
  await enqueueTraced(deps, state, { jobId, delayMs, reason: 'park' }, 'parked');
  const list = waitKey(waiting.primitive, waiting.key);
  await deps.waitList?.add(list, jobId);
  await deps.waitList?.remove(list, waiting.jobId); // this job's own registration: a release that shifts it wakes nobody
  return wakeIfFree(deps, waiting.primitive, waiting.key);
}

/** After a park: the key may have been released between the try and the registration; checked once off the execution. */
function wakeIfFree(deps: BackgroundDeps, primitive: PrimitiveName, key: string): () => Promise<void> {
  return async () => {
    if (await isFree(deps, primitive, key)) await wake(deps, primitive, key);
  };
}

/** Re-enqueues an execution for a later attempt (a retry delay); the record says when it is due. */
export async function requeue(deps: BackgroundDeps, state: RunState, delayMs: number, reason: 'retry'): Promise<void> {
  const background = state.background ?? { jobs: 1, contention: 0 };
  const jobs = background.jobs + 1;
  const jobId = `${state.executionId}:${jobs}`;
  state.background = { ...background, jobs, retryAt: state.clock.now() + delayMs };
  state.emit({ type: 'run.queued', jobId, delayMs, reason });
  await enqueueTraced(deps, state, { jobId, delayMs, reason }, 'pending');
}

/**
 * Checkpoints the execution and enqueues its next job, in an `enqueue` scope. A new execution
 * gets its trace context here (persisted by the checkpoint, before any worker can read it).
 */
export async function enqueueTraced(
  deps: BackgroundDeps,
  state: RunState,
  next: { readonly jobId: string; readonly delayMs: number; readonly reason: 'start' | 'retry' | 'park' },
  status: 'pending' | 'parked',
): Promise<void> {
  const scope = {
    kind: 'enqueue',
    executionId: state.executionId,
    reactor: state.reactor,
    ...next,
    ...(state.traceContext === undefined ? {} : { traceContext: state.traceContext }),
    ...(state.traceLinks === undefined ? {} : { links: state.traceLinks }),
  } as const;
  await (deps.instrument ?? noInstrument).traced(scope, async (traceContext) => {
    if (traceContext) state.traceContext = traceContext;
    await state.checkpoint(status, {}, { withTrace: true });
    await deps.queue.enqueue(
      job(state),
      next.reason === 'start' ? { jobId: next.jobId } : { jobId: next.jobId, delayMs: next.delayMs },
    );
  });
}

async function isFree(deps: BackgroundDeps, primitive: PrimitiveName, key: string): Promise<boolean> {
  const c = deps.coordination.coordinator!;
  if (primitive === 'lock') return (await c.lockState(key)) === undefined;
  if (primitive === 'ordered_lock') return (await c.orderedState(key)).inFlight === undefined;
  return false; // a semaphore's free slots are not known here: the fallback job covers that race
}

/** Wakes the first execution parked on a key (every one, for an ordered lock: only the next in order can enter). */
export async function wake(
  deps: Pick<BackgroundDeps, 'waitList' | 'queue'>,
  primitive: PrimitiveName,
  key: string,
): Promise<void> {
  if (!deps.waitList) return;
  for (;;) {
    const jobId = await deps.waitList.shift(waitKey(primitive, key));
    if (jobId === undefined) return;
    const promoted = await deps.queue.promote(jobId);
    if (promoted && primitive !== 'ordered_lock') return;
  }
}
