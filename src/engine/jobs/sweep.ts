/**
 * The recovery sweep (docs/decisions/066): workers look, one at a time, for executions nothing
 * will move on any more — no worker or inline run holds their liveness lease and no job of the
 * queue carries them — and re-enqueue them, or end an abandoned inline run `aborted` when its
 * reactor is unknown here. What it acts on it first takes the liveness lease of, and re-reads
 * under it, so it never races the worker or the inline run that still has the execution.
 *
 * @module
 */
import type { Logger } from '../../dsl/context.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { errorToJSON, InlineRunAbandonedError } from '../../errors.js';
import type { EventHub, EventOf } from '../model/events.js';
import { executionJob } from '../execution/next-job.js';
import { backgroundOf, NO_JOB, priorityOf } from '../model/background.js';
import { cancelRequestKey, livenessKey } from '../model/keys.js';
import { appendToTrace, DEFAULT_MAX_TRACE_ENTRIES } from '../model/trace-bound.js';
import type { Clock } from '../../ports/clock.js';
import type { Coordinator } from '../../ports/coordinator.js';
import type { JobLeases } from '../../ports/job-lease.js';
import type { JobQueue } from '../../ports/queue.js';
import type { ExecutionRecord, Store } from '../../ports/store.js';

/** The coordinator lock that lets one worker sweep at a time (and at most about once per interval). */
export const SWEEP_LOCK_KEY = 'rx-sweep';

/** The statuses a sweep looks at (`rolling_back`: inline runs, and rollbacks waiting on a fan-out map's undos). */
const SWEPT: readonly SweptStatus[] = ['running', 'parked', 'pending', 'rolling_back'];
/** A stored status the sweep looks at (`pending`, which its event names `queued`). */
type SweptStatus = 'pending' | 'parked' | 'running' | 'rolling_back';

/** What one sweep did. */
export interface SweepReport {
  /**
   * False when the sweep lock was held — by a sweep in progress, or one that began less than
   * 0.8 × the interval ago, in any worker — or the engine cannot sweep: nothing was looked at.
   */
  readonly ran: boolean;
  /** When the sweep began (engine clock, ms). */
  readonly startedAt: number;
  /** When it ended (engine clock, ms); `startedAt` when it did not run. */
  readonly finishedAt: number;
  /** Records looked at. */
  readonly checked: number;
  /** Executions re-enqueued. */
  readonly requeued: number;
  /** Inline runs ended `aborted`. */
  readonly aborted: number;
}

/** What the sweep needs from the engine. */
export interface SweepDeps {
  readonly store: Store;
  readonly queue: JobQueue;
  readonly coordinator: Coordinator;
  readonly jobLeases: JobLeases;
  readonly clock: Clock;
  readonly hub: EventHub;
  readonly logger: Logger;
  /** This engine's id (the sweep lock's owner, and part of the lease owner the sweep takes an execution under). */
  readonly workerId: string;
  /** Reactors this engine can run: an inline run of one of them is resumed, of another aborted. */
  readonly registry: ReadonlyMap<string, AnyReactorDefinition>;
  readonly livenessTtlMs: number;
  /** How often each worker tries to sweep; 0: never on a timer. */
  readonly intervalMs: number;
  /** Records looked at per status and sweep. Default 100. */
  readonly batch?: number;
  /** True for an execution running inline in this engine right now (never taken for stranded, lease or not). */
  readonly alive?: (executionId: string) => boolean;
  /** The bound of the traces the sweep appends to (decision 073). Default 1,000. */
  readonly maxTraceEntries?: number;
}

/** Sweeps of one engine: one now ({@link Sweeper.sweep}), or on a timer while workers run ({@link Sweeper.start}). */
export interface Sweeper {
  sweep(signal?: AbortSignal): Promise<SweepReport>;
  /** Starts this engine's sweep timer (once for any number of workers); the returned function stops it. */
  start(track: (work: Promise<void>) => void): () => void;
}

/** Creates the sweeper of one engine. */
export function createSweeper(deps: SweepDeps): Sweeper {
  if (!Number.isFinite(deps.intervalMs) || deps.intervalMs < 0)
    throw new RangeError(
      `sweepIntervalMs must be a finite number ≥ 0 (0: no sweep timer); got ${String(deps.intervalMs)}`,
    );
  const batch = deps.batch ?? 100;
  // Newest first, a page per status and sweep: the cursor moves on across sweeps and starts over at the end.
  const cursors = new Map<SweptStatus, string>();
  let running: Promise<SweepReport> | undefined;
  let workers = 0;
  let stopTimer: (() => void) | undefined;
  let abort: AbortController | undefined;

  const sweep = (signal?: AbortSignal): Promise<SweepReport> =>
    (running ??= sweepOnce(deps, batch, cursors, signal).finally(() => (running = undefined)));

  return {
    sweep,
    start(track) {
      workers += 1;
      if (workers === 1 && deps.intervalMs > 0) {
        abort = new AbortController();
        const signal = abort.signal;
        stopTimer = deps.clock.every(deps.intervalMs, () => {
          if (running || signal.aborted) return;
          track(
            sweep(signal).then(
              (report) => {
                if (!report.ran) return;
                const level = report.requeued + report.aborted > 0 ? 'info' : 'debug'; // one line per sweep that ran
                deps.logger[level](
                  { sweep: report, workerId: deps.workerId },
                  `recovery sweep: ${report.requeued} re-enqueued, ${report.aborted} aborted of ${report.checked} looked at`,
                );
              },
              (error: unknown) =>
                deps.logger.warn(
                  { err: error, workerId: deps.workerId },
                  'recovery sweep failed; the next one tries again',
                ),
            ),
          );
        });
      }
      let stopped = false;
      return () => {
        if (stopped) return;
        stopped = true;
        workers -= 1;
        if (workers > 0) return;
        stopTimer?.();
        stopTimer = undefined;
        abort?.abort();
      };
    },
  };
}

async function sweepOnce(
  deps: SweepDeps,
  batch: number,
  cursors: Map<SweptStatus, string>,
  signal: AbortSignal | undefined,
): Promise<SweepReport> {
  const startedAt = deps.clock.now();
  const owner = `sweep:${deps.workerId}:${startedAt}`; // one owner per sweep: the lock is never re-entered, also by this engine
  // The lock lapses a little before the next tick of any worker: sweeps run about once per interval, never two at once.
  const lockTtl = Math.max(1, Math.floor((deps.intervalMs > 0 ? deps.intervalMs : deps.livenessTtlMs) * 0.8));
  const lock = await deps.coordinator.lockAcquire({ key: SWEEP_LOCK_KEY, holder: { owner }, ttlMs: lockTtl });
  if (!lock.acquired) return { ran: false, startedAt, finishedAt: startedAt, checked: 0, requeued: 0, aborted: 0 };
  const keepAlive = deps.clock.every(
    Math.max(1, lockTtl / 3),
    () => void deps.coordinator.lockExtend(SWEEP_LOCK_KEY, owner, lockTtl).catch(() => undefined),
  );
  const counts = { checked: 0, requeued: 0, aborted: 0 };
  try {
    for (const status of SWEPT) {
      if (signal?.aborted) break;
      const page = await deps.store.list({
        status,
        limit: batch,
        createdTo: deps.clock.now() - deps.livenessTtlMs,
        ...(cursors.has(status) ? { cursor: cursors.get(status)! } : {}),
      });
      if (page.cursor === undefined) cursors.delete(status);
      else cursors.set(status, page.cursor);
      for (const record of page.records) {
        if (signal?.aborted) break;
        counts.checked += 1;
        const action = await recoverOne(deps, record).catch((error: unknown) => {
          deps.logger.warn(
            { err: error, executionId: record.id, reactor: record.reactor },
            'recovery sweep: could not check or recover an execution; the next sweep tries again',
          );
          return undefined;
        });
        if (action === 'requeued') counts.requeued += 1;
        else if (action === 'aborted') counts.aborted += 1;
      }
    }
  } finally {
    keepAlive();
  }
  return { ran: true, startedAt, finishedAt: deps.clock.now(), ...counts };
}

/** Whether the listed record looks stranded, before anything is asked of the queue or the coordinator. */
function candidate(record: ExecutionRecord, now: number, ttlMs: number): boolean {
  if (record.element !== undefined) return false; // a fan-out element: its parent's map dispatches it again
  const inline = isInlineRun(record);
  if (inline && record.inline?.lease === undefined) return false; // an inline run without a lease: nothing says whether it lives
  // A worker's rollback within a job is redelivered by the queue; one waiting on a fan-out map's undos is a park like the others.
  if (record.status === 'rolling_back' && !inline && record.background?.fanOutRollback === undefined) return false;
  // Not written for a lease length: a worker or an inline run would have renewed its lease; a job just enqueued has been taken.
  if (now - record.updatedAt < ttlMs) return false;
  const background = record.background;
  // A retry not due yet, or a park whose fallback job is not due yet, is carried by that delayed job.
  if (record.status === 'pending' && background?.retryAt !== undefined && now < background.retryAt + ttlMs)
    return false;
  if (
    record.status === 'parked' &&
    background?.waitingFor?.dueAt !== undefined &&
    now < background.waitingFor.dueAt + ttlMs
  )
    return false;
  return true;
}

/** An inline run working on the execution now (a hand-off's `pending` record is a worker's). */
function isInlineRun(record: ExecutionRecord): boolean {
  return record.inline !== undefined && (record.status === 'running' || record.status === 'rolling_back');
}

/** The name users see for the status the sweep found (decision 107: a stored `pending` is `queued`). */
function recoveredStatusName(status: SweptStatus): EventOf<'run.recovered'>['status'] {
  return status === 'pending' ? 'queued' : status;
}

/** The jobs the record names: its latest regular job, the one a park waits for, the one a sweep enqueued. */
function knownJobs(record: ExecutionRecord): string[] {
  if (isInlineRun(record)) return [];
  const background = record.background;
  const jobs = background?.jobs ?? 1;
  const ids = new Set<string>();
  if (jobs > 0) ids.add(`${record.id}:${jobs}`);
  if (background?.waitingFor) ids.add(background.waitingFor.jobId);
  if (background?.recovered) ids.add(background.recovered.jobId);
  return [...ids];
}

async function recoverOne(deps: SweepDeps, listed: ExecutionRecord): Promise<'requeued' | 'aborted' | undefined> {
  if (deps.alive?.(listed.id) === true || !candidate(listed, deps.clock.now(), deps.livenessTtlMs)) return undefined;
  const jobs = knownJobs(listed);
  if (jobs.length > 0) {
    if (!deps.queue.jobStates) return undefined; // the queue cannot say: leave it alone
    const places = await deps.queue.jobStates(jobs);
    if (places.some((p) => p === 'queued' || p === 'returned' || p === 'active')) return undefined;
  } else if (!isInlineRun(listed) && !deps.queue.jobStates) return undefined;
  const key = livenessKey(listed.id);
  if ((await deps.coordinator.lockState(key)) !== undefined) return undefined; // a worker or the inline run is alive
  // Take the execution as a job would: nobody else works on it while we decide, and we decide on what is stored now.
  const owner = `sweep:${deps.workerId}:${listed.id}`;
  const entered = await deps.jobLeases.enterJob({
    lease: { key, holder: { owner, executionId: listed.id }, ttlMs: deps.livenessTtlMs },
    executionId: listed.id,
    cancel: { key: cancelRequestKey(listed.id), bucket: 'requested' },
  });
  if (!entered.acquired) return undefined;
  let released = false;
  try {
    const record = entered.record;
    if (!record || record.status !== listed.status || record.updatedAt !== listed.updatedAt) return undefined; // it moved on meanwhile
    const inline = isInlineRun(record);
    const now = deps.clock.now();
    const count = (record.background?.recovered?.count ?? 0) + 1;
    const status = recoveredStatusName(record.status as SweptStatus);
    const reason = inline ? 'inline_lost' : 'no_job';
    const base = { executionId: record.id, rootExecutionId: record.rootId, reactor: record.reactor, at: now } as const;
    const { inline: _inline, ...rest } = record;
    if (inline && (record.status === 'rolling_back' || !deps.registry.has(record.reactor))) {
      // Nobody here can continue it: end it with the cause. Its completed steps are not undone.
      const step = Object.entries(record.steps).find(([, s]) => s.status === 'running')?.[0];
      const error = new InlineRunAbandonedError({
        executionId: record.id,
        reactor: record.reactor,
        step,
        rollingBack: record.status === 'rolling_back',
      });
      const event: EventOf<'run.recovered'> = {
        ...base,
        type: 'run.recovered',
        reason,
        action: 'aborted',
        status,
        count,
      };
      const aborted: ExecutionRecord = {
        ...rest,
        status: 'aborted',
        error: errorToJSON(error),
        ...(step === undefined ? {} : { failedStep: step }),
        trace: appendToTrace(record.trace, deps.maxTraceEntries ?? DEFAULT_MAX_TRACE_ENTRIES, event),
        updatedAt: now,
      };
      await deps.jobLeases.saveAndRelease(aborted, key, owner);
      released = true;
      deps.hub.emit(event);
      return 'aborted';
    }
    const jobId = `${record.id}:sweep:${count}`;
    const event: EventOf<'run.recovered'> = {
      ...base,
      type: 'run.recovered',
      reason,
      action: 'requeued',
      status,
      count,
      jobId,
    };
    const background = { ...backgroundOf(record, NO_JOB), recovered: { jobId, count, at: now } };
    // The record names the job before it exists: a sweep that finds it missing (the enqueue failed) tries again.
    const requeued: ExecutionRecord = {
      ...rest,
      background,
      trace: appendToTrace(record.trace, deps.maxTraceEntries ?? DEFAULT_MAX_TRACE_ENTRIES, event),
      updatedAt: now,
    };
    await deps.jobLeases.saveAndRelease(requeued, key, owner);
    released = true;
    await deps.queue.enqueue(executionJob(record.id, record.reactor), { jobId, ...priorityOf(background) });
    deps.hub.emit(event);
    return 'requeued';
  } finally {
    if (!released) await deps.coordinator.lockRelease(key, owner).catch(() => undefined);
  }
}
