/**
 * The next job of an execution: the job number goes up by one (job ids are
 * `<executionId>:<n>`), the background state records it with whatever goes with the job (what
 * the execution waits for, when a retry is due), the record is checkpointed, then the job is
 * enqueued. Every park, retry and hand-off of a running execution goes through here.
 *
 * @module
 */
import { backgroundOf, priorityOf } from '../model/background.js';
import { noInstrument, type Instrument } from '../model/instrument.js';
import type { WorkScope } from '../model/work-scope.js';
import { JOB_FORMAT_VERSION, type EnqueueOptions, type ExecutionJob, type JobQueue } from '../../ports/queue.js';
import type { BackgroundState } from '../../ports/store.js';
import type { RunState } from '../run/run-state.js';

/** The number and id of an execution's next job. */
export interface JobTicket {
  /** The job's number: the execution's `background.jobs` from now on. */
  readonly jobs: number;
  /** `<executionId>:<jobs>`. */
  readonly jobId: string;
}

/** What enqueueing a job needs from the engine. */
export interface NextJobDeps {
  readonly queue: JobQueue;
  /** Brackets the checkpoint and the enqueue in an `enqueue` scope (a span). Default: none. */
  readonly instrument?: Instrument | undefined;
}

/** What goes with a next job (see {@link nextJob}). */
export interface NextJobPlan {
  /** The status the execution is checkpointed with before its job is enqueued. */
  readonly status: 'pending' | 'parked' | 'rolling_back';
  /** Why: the `run.queued` event's reason (and the `enqueue` scope's). */
  readonly reason: 'retry' | 'park';
  /** The job's delay, in ms. */
  readonly delayMs: number;
  /** How much earlier than its delay the job may be delivered (`EnqueueOptions.earlyMs`). Default 0. */
  readonly earlyMs?: number;
  /** The background state that goes with the job, from the current one with `jobs` set already. Default: that one. */
  readonly update?: (background: BackgroundState, job: JobTicket) => BackgroundState;
  /** Emits the job's own events, after the update and before `run.queued`. */
  readonly announce?: (job: JobTicket) => void;
  /** `false`: no `run.queued` event (a re-park that leaves no trace entry, an element's retry). */
  readonly queued?: boolean;
  /** `false`: checkpoint and enqueue outside an `enqueue` scope. */
  readonly traced?: boolean;
  /** The background state of an execution that has none yet. Default `FIRST_JOB`. */
  readonly none?: BackgroundState;
}

/** The job payload of an execution (or of an element or unit record): ids only. */
export function executionJob(executionId: string, reactor: string): ExecutionJob {
  return { v: JOB_FORMAT_VERSION, executionId, reactor };
}

/** Persists `state` with its next job (see {@link NextJobPlan}) and enqueues that job; returns the job. */
export async function nextJob(deps: NextJobDeps, state: RunState, plan: NextJobPlan): Promise<JobTicket> {
  const job = claimJob(state, plan);
  const next = { jobId: job.jobId, delayMs: plan.delayMs, reason: plan.reason };
  if (plan.queued !== false) state.emit({ type: 'run.queued', ...next });
  const early = plan.earlyMs ? { earlyMs: plan.earlyMs } : {};
  if (plan.traced !== false) {
    await enqueueTraced(deps, state, { ...next, ...early }, plan.status);
    return job;
  }
  await state.checkpoint(plan.status, {}, { withTrace: true });
  await deps.queue.enqueue(executionJob(state.executionId, state.reactor), {
    jobId: job.jobId,
    delayMs: plan.delayMs,
    ...early,
    ...priorityOf(state.background),
  });
  return job;
}

/**
 * {@link nextJob} for a resumed execution handed to a worker: persisted `pending` now, its job
 * (without a delay) enqueued by the returned function — to call once the execution's liveness
 * lock is released, or the worker that takes the job at once finds it busy.
 */
export async function nextJobDeferred(
  deps: Pick<NextJobDeps, 'queue'>,
  state: RunState,
  plan: Pick<NextJobPlan, 'none'> & { readonly reason: 'resume' | 'busy' },
): Promise<() => Promise<void>> {
  const { jobId } = claimJob(state, plan);
  state.emit({ type: 'run.queued', jobId, delayMs: 0, reason: plan.reason });
  await state.checkpoint('pending', {}, { withTrace: true });
  return () =>
    deps.queue.enqueue(executionJob(state.executionId, state.reactor), { jobId, ...priorityOf(state.background) });
}

/**
 * Checkpoints the execution and enqueues its next job, in an `enqueue` scope. A new execution
 * gets its trace context here (persisted by the checkpoint, before any worker can read it).
 */
export async function enqueueTraced(
  deps: NextJobDeps,
  state: RunState,
  next: {
    readonly jobId: string;
    readonly delayMs: number;
    readonly earlyMs?: number;
    readonly reason: 'start' | 'retry' | 'park';
  },
  status: NextJobPlan['status'],
): Promise<void> {
  await (deps.instrument ?? noInstrument).traced(
    enqueueScope(state, { jobId: next.jobId, delayMs: next.delayMs, reason: next.reason }),
    async (traceContext) => {
      state.traced(traceContext);
      await state.checkpoint(status, {}, { withTrace: true });
      await deps.queue.enqueue(executionJob(state.executionId, state.reactor), jobOptionsOf(state, next));
    },
  );
}

/** The `enqueue` scope (a span) of `state`'s job `next`. */
export function enqueueScope(
  state: RunState,
  next: { readonly jobId: string; readonly delayMs: number; readonly reason: 'start' | 'retry' | 'park' },
): WorkScope {
  return {
    kind: 'enqueue',
    executionId: state.executionId,
    reactor: state.reactor,
    ...next,
    ...(state.traceContext === undefined ? {} : { traceContext: state.traceContext }),
    ...(state.traceLinks === undefined ? {} : { links: state.traceLinks }),
  };
}

/**
 * The queue options of `state`'s job `next`: its id, its delay (a start's only when delayed) and
 * the execution's priority.
 */
export function jobOptionsOf(
  state: RunState,
  next: { readonly jobId: string; readonly delayMs: number; readonly earlyMs?: number; readonly reason: string },
): EnqueueOptions {
  return {
    jobId: next.jobId,
    ...(next.reason === 'start' && next.delayMs === 0 ? {} : { delayMs: next.delayMs }),
    ...(next.earlyMs ? { earlyMs: next.earlyMs } : {}),
    ...priorityOf(state.background),
  };
}

/** The number and id `state`'s next job will have (nothing changes). `none`: as in {@link NextJobPlan}. */
export function upcomingJob(state: RunState, none?: BackgroundState): JobTicket {
  const jobs = backgroundOf(state, none).jobs + 1;
  return { jobs, jobId: `${state.executionId}:${jobs}` };
}

/** Takes the next job number into `state.background` with what `plan` updates, and emits the job's own events. */
function claimJob(state: RunState, plan: Pick<NextJobPlan, 'update' | 'announce' | 'none'>): JobTicket {
  const job = upcomingJob(state, plan.none);
  const next = { ...backgroundOf(state, plan.none), jobs: job.jobs };
  state.setBackground(plan.update ? plan.update(next, job) : next);
  plan.announce?.(job);
  return job;
}
