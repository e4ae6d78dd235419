/**
 * One job of an execution in a worker, under its liveness lease: rebuild the run from the
 * record, then one slice (`execution/slice.ts`) with the worker driver — admit the
 * reactor-level declarations, run the graph, release, persist what the graph's outcome calls
 * for: finished, paused, parked (on a key, an async unit, a fan-out map) or re-enqueued for a
 * retry.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { validateContract } from '../../dsl/contract.js';
import { CancelledError, ReactorError } from '../../errors.js';
import { admitWork, finish } from '../execution/execute.js';
import { pauseRun } from '../execution/interrupt/pause.js';
import { pauseOnFailure } from '../execution/failure-pause.js';
import { rollbackRecorded } from '../execution/operations.js';
import { carryFirstStarts } from '../graph/scheduler.js';
import { runSlice, type SliceDriver } from '../execution/slice.js';
import { backgroundOf, cleared } from '../model/background.js';
import type { SuspensionHandlers } from '../model/suspension.js';
import type { JobDelivery } from '../../ports/queue.js';
import type { BackgroundState, ExecutionRecord, WaitingFor } from '../../ports/store.js';
import type { RunState } from '../run/run-state.js';
import { parkReader } from './async/park.js';
import { advanceUnit } from './async/unit-worker.js';
import type { After, BackgroundDeps } from './deps.js';
import { fanOutRuntime, parkOnFanOut, resumeFanOutRollback } from './fanout/park.js';
import { recordLostAttempts, type LostAttempt } from './lost-attempts.js';
import { refused, reparkBehindSameHolder, requeuedJobOf } from './park.js';
import { requeue } from './requeue.js';
import { parkOnSleep, wokenSleep } from './sleep-park.js';

/** The liveness lease of the job being processed: its terminal record write also releases it. */
export interface JobLease {
  readonly saveAndRelease: (record: ExecutionRecord) => Promise<void>;
}

/** Runs what it can; returns work to do once the liveness lock is released (a self-wake). */
export async function advance(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  delivery: JobDelivery,
  root: AbortController,
  lease: JobLease,
): Promise<After> {
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
  const background = backgroundOf(state);
  // The park's own job, also when it was enqueued again because the previous job still held the lease.
  const parkJob = requeuedJobOf(record.id, delivery);
  // A fallback job that finds the key held by the holder it parked behind parks again: one attempt spent, no new trace entry (decision 097).
  const reparked =
    record.status === 'parked' && validated.ok && !root.signal.aborted
      ? await reparkBehindSameHolder(deps, state, parkJob, reactor)
      : undefined;
  if (reparked) return reparked;
  state.emit({ type: 'run.resumed', jobId: delivery.jobId, delivery: delivery.delivery });
  emitWoken(state, background.waitingFor, parkJob);
  const lost = validated.ok ? recordLostAttempts(state, reactor, record, delivery) : []; // the last job's worker was lost mid-job (decision 098)
  if (!validated.ok)
    return void (await finish(state, {
      status: 'failed',
      step: undefined,
      error: new ReactorError('input_invalid', 'persisted input no longer validates'),
      validation: validated.issues,
    }));
  if (state.stopped) throw state.stopped; // stopped before it began (a shutdown deadline): nothing is undone, the job is handed back
  // A cancel request picked up at the start of a job ends with the reason it was asked with (decision 106).
  // The lost worker's attempts are recorded with it, and compensated as bodies that ran (decision 159).
  if (root.signal.aborted)
    return void (await rollbackRecorded(deps, reactor, withLost(record, state, lost), abortReason(root.signal.reason)));
  if (record.background?.fanOutRollback) return resumeFanOutRollback(deps, reactor, record); // its rollback waited on a fan-out map's elements
  return runSlice(state, reactor, workerDriver(deps, state, reactor, delivery, root, lease, background));
}

/**
 * The worker driver of a slice ({@link runSlice}): admission parks instead of waiting, the job's
 * settings are given once admitted, a step parked on contention keeps the reactor-level holds, a
 * stopped job settles nothing, and every suspension is a park, a pause or a later job.
 */
function workerDriver(
  deps: BackgroundDeps,
  state: RunState,
  reactor: AnyReactorDefinition,
  delivery: JobDelivery,
  root: AbortController,
  lease: JobLease,
  background: BackgroundState,
): SliceDriver<After> {
  return {
    admit: (specs) =>
      admitWork(state, deps.coordination, specs, state.input, {
        reactor: reactor.name,
        abort: root,
        orderedTicket: background.ordered,
        adopt: background.parkedHolds !== undefined,
      }),
    refused: (error) => refused(deps, state, error, reactor.coordination),
    admitted: (admitted) => {
      if (admitted) state.waited();
      state.setBackground({
        ...cleared(background, 'waitingFor', 'retryAt', 'parkedHolds'),
        lastJob: { worker: state.worker, marksStarts: state.marksStarts }, // what a job after a lost one reads (decision 098)
      });
      state.bindWork({
        sleepWoken: wokenSleep(state, background.waitingFor, delivery), // promoted early by engine.wake: the sleep completes now
        contentionCap: deps.options.contentionCap,
        fanOut: fanOutRuntime(deps),
        terminalSave: lease.saveAndRelease,
      });
    },
    starting: () => carryFirstStarts(state, reactor), // durable mode: the first steps' starts ride on this checkpoint (decision 098)
    frame: { def: reactor, input: state.input, prefix: '', signal: root.signal, owned: root }, // nothing watches root once the graph runs (decision 030)
    releaseAs: (outcome) => {
      // A step parked on contention: the reactor-level holds are kept (detached) and re-adopted at resume.
      const stepParks = outcome?.status === 'yielded' && outcome.suspension.kind === 'contention';
      if (stepParks) state.setBackground({ ...backgroundOf(state), parkedHolds: { owner: state.holderId } });
      // A stopped job keeps the execution's ordered position (like a retry): the worker that resumes it goes on in its turn.
      return stepParks ? 'parked' : state.stopped ? 'yielded' : (outcome?.status ?? 'failed');
    },
    released: () => {
      const stopped = state.stopped;
      if (stopped) throw stopped; // nothing more is written or emitted as an outcome (decision 064)
    },
    suspended: (step) => suspended(deps, state, reactor, background.waitingFor, step),
    finished: async (outcome) => void (await finish(state, outcome)),
  };
}

/** The worker driver's handler of each kind of suspension. */
function suspended(
  deps: BackgroundDeps,
  state: RunState,
  reactor: AnyReactorDefinition,
  woken: WaitingFor | undefined,
  step: string,
): SuspensionHandlers<Promise<After>> {
  return {
    pause: async () => void (await pauseRun(state, reactor)),
    failurePause: async (s) => void (await pauseOnFailure(state, reactor, s)), // holds released as for a yield; no job left
    fanOut: (s) => parkOnFanOut(deps, state, s.park), // a fan-out map's elements run (or are undone) as jobs
    awaitUnit: (s) => parkReader(deps, state, s.error),
    // Park like a reactor-level refusal (the release wakes it), at the step that yielded: a composed child's own declarations name no step.
    contention: (s) => refused(deps, state, s.error, undefined, woken, step),
    sleep: (s) => parkOnSleep(deps, state, s.wait), // a delayed job at its wake time
    retry: async (s) => void (await requeue(deps, state, s.delayMs, 'retry')),
  };
}

/** `run.woken`: this job is the one the execution parked with, delivered before its fallback was due (a release promoted it). */
function emitWoken(state: RunState, waiting: WaitingFor | undefined, delivery: JobDelivery): void {
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
}

/** `record` with the attempts this job recorded for a lost worker, and the events it emitted so far. */
function withLost(record: ExecutionRecord, state: RunState, lost: readonly LostAttempt[]): ExecutionRecord {
  if (lost.length === 0) return record;
  const steps = { ...record.steps };
  for (const { step } of lost) {
    const recorded = state.steps[step];
    if (recorded !== undefined) steps[step] = recorded;
  }
  return { ...record, steps, trace: [...state.trace] };
}

/** The reason a job's root was aborted with: a cancel's own reason, else the error's message. */
function abortReason(reason: unknown): string {
  if (reason instanceof CancelledError) {
    const asked = (reason.details as { reason?: unknown } | undefined)?.reason;
    if (typeof asked === 'string') return asked;
  }
  return (reason as Error).message;
}
