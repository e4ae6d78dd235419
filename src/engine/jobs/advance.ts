/**
 * One job of an execution in a worker, under its liveness lease: rebuild the run from the
 * record, admit the reactor-level declarations, run the graph, then persist what the graph's
 * outcome calls for — finished, paused, parked (on a key, an async unit, a fan-out map) or
 * re-enqueued for a retry.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { validateContract } from '../../dsl/contract.js';
import { ReactorError } from '../../errors.js';
import { admitWork, finish } from '../execution/execute.js';
import { pauseRun } from '../execution/interrupt/pause.js';
import { pauseOnFailure } from '../execution/failure-pause.js';
import { rollbackRecorded } from '../execution/operations.js';
import { carryFirstStarts, runFrame, type GraphOutcome } from '../graph/scheduler.js';
import { backgroundOf, cleared } from '../model/background.js';
import { onSuspension, type SuspensionHandlers } from '../model/suspension.js';
import type { JobDelivery } from '../ports/queue.js';
import type { ExecutionRecord, WaitingFor } from '../ports/store.js';
import type { RunState } from '../run/run-state.js';
import { parkReader } from './async/park.js';
import { advanceUnit } from './async/unit-worker.js';
import type { After, BackgroundDeps } from './deps.js';
import { fanOutRuntime, parkOnFanOut, resumeFanOutRollback } from './fanout/park.js';
import { recordLostAttempts } from './lost-attempts.js';
import { refused, reparkBehindSameHolder } from './park.js';
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
  // A fallback job that finds the key held by the holder it parked behind parks again: one attempt spent, no new trace entry (decision 097).
  const reparked =
    record.status === 'parked' && validated.ok && !root.signal.aborted
      ? await reparkBehindSameHolder(deps, state, delivery, reactor)
      : undefined;
  if (reparked) return reparked;
  state.emit({ type: 'run.resumed', jobId: delivery.jobId, delivery: delivery.delivery });
  emitWoken(state, background.waitingFor, delivery);
  if (validated.ok) recordLostAttempts(state, reactor, record, delivery); // the last job's worker was lost mid-job (decision 098)
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
  let outcome: GraphOutcome | undefined;
  try {
    carryFirstStarts(state, reactor); // durable mode: the first steps' starts ride on this checkpoint (decision 098)
    await state.progress('running');
    outcome = await runFrame(state, { def: reactor, input: state.input, prefix: '', signal: root.signal, owned: root }); // nothing watches root once the graph runs (decision 030)
  } catch (error) {
    outcome = { status: 'failed', step: undefined, error: error as Error, validation: [] };
  } finally {
    // A step parked on contention: the reactor-level holds are kept (detached) and re-adopted at resume.
    const stepParks = holds !== undefined && outcome?.status === 'yielded' && outcome.suspension.kind === 'contention';
    if (stepParks) state.setBackground({ ...backgroundOf(state), parkedHolds: { owner: state.holderId } });
    // A stopped job keeps the execution's ordered position (like a retry): the worker that resumes it goes on in its turn.
    await holds
      ?.release(stepParks ? 'parked' : state.stopped ? 'yielded' : (outcome?.status ?? 'failed'))
      .catch((error: unknown) =>
        state.logger.warn({ err: error }, 'releasing coordination failed; holds expire by TTL'),
      );
  }
  const stopped = state.stopped;
  if (stopped) throw stopped; // nothing more is written or emitted as an outcome (decision 064)
  return settleOutcome(deps, state, reactor, outcome, background.waitingFor);
}

/** What a worker's graph outcome leaves: paused, parked, re-enqueued, or finished. */
async function settleOutcome(
  deps: BackgroundDeps,
  state: RunState,
  reactor: AnyReactorDefinition,
  outcome: GraphOutcome,
  woken: WaitingFor | undefined,
): Promise<After> {
  if (outcome.status === 'yielded') return onSuspension(outcome.suspension, suspended(deps, state, reactor, woken));
  await finish(state, outcome);
  return undefined;
}

/** The worker driver's handler of each kind of suspension. */
function suspended(
  deps: BackgroundDeps,
  state: RunState,
  reactor: AnyReactorDefinition,
  woken: WaitingFor | undefined,
): SuspensionHandlers<Promise<After>> {
  return {
    pause: async () => void (await pauseRun(state, reactor)),
    failurePause: async (s) => void (await pauseOnFailure(state, reactor, s)), // holds released as for a yield; no job left
    fanOut: (s) => parkOnFanOut(deps, state, s.park), // a fan-out map's elements run (or are undone) as jobs
    awaitUnit: (s) => parkReader(deps, state, s.error),
    contention: (s) => refused(deps, state, s.error, undefined, woken), // park like a reactor-level refusal (the release wakes it)
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
