/**
 * A worker's job of an execution: take the execution's liveness lease (one job at a time, in any
 * process), read the record and the cancel flag under it, route the job — an element of a
 * fan-out map, a paused execution, a due retry, or the run itself — and release the lease; work
 * the job leaves (a self-wake, a dispatch) runs only once the lease is free. State lives in the
 * store; a job carries ids only (docs/decisions/007, 040, 064).
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { CancelledError, LeaseLostError, ReactorError, WorkerShutdownError } from '../../errors.js';
import { monotonicNow } from '../../coordination/deadline.js';
import { fastPathsOf } from '../../coordination/fast-paths.js';
import { cancelRequestKey, livenessKey } from '../model/keys.js';
import { requestedCancelReason } from '../execution/cancels.js';
import { noInstrument } from '../model/instrument.js';
import { priorityOf } from '../model/background.js';
import type { Coordinator } from '../../ports/coordinator.js';
import type { JobEnterRequest, JobEnterResult, JobLeases } from '../../ports/job-lease.js';
import type { ExecutionJob, JobDelivery } from '../../ports/queue.js';
import { TERMINAL_STATUSES, type ExecutionRecord, type TraceContext } from '../../ports/store.js';
import { JobLiveness } from '../run/job-liveness.js';
import { armDeadline } from '../execution/deadline.js';
import { advance, type JobLease } from './advance.js';
import { deadlineAction, jobDeadline, scheduleDeadlineJob } from './deadline-job.js';
import type { After, BackgroundDeps } from './deps.js';
import { processElementJob } from './fanout/element-job.js';
import { interruptJob, isInterruptJob } from './interrupt/jobs.js';
import { busyJobId } from './park.js';
import { versionGate } from './version-gate.js';

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
  const { live, sentAt } = await takeLease(deps, coordinator, leases, request);
  if (!live.acquired) {
    // Another job of this execution is still finishing (here: come back shortly), or another
    // worker has it, or a dead one's lease has not lapsed yet (come back when it lapses).
    const ours = live.holder?.owner.startsWith(`${deps.workerId}:`) ?? false;
    const delayMs = ours ? 20 : Math.min(deps.options.parkFallbackMs, Math.max(50, live.ttlMs));
    await deps.queue.enqueue(payload, { jobId: busyJobId(id, delivery), delayMs }); // still the same job for a park (`requeuedJobOf`)
    return;
  }
  // The lease fences every write of this job and stops it at its local deadline (decision 064).
  const liveness: JobLiveness = new JobLiveness(
    { clock: deps.clock, coordinator, leases },
    { executionId: id, key: liveKey, owner, ttlMs: deps.options.livenessTtlMs, sentAt },
    () => {
      if (!root.signal.aborted)
        void coordinator.periodIsMarked(request.cancel.key, request.cancel.bucket).then(
          (marked) => (marked ? cancelRequested() : undefined),
          () => undefined,
        );
    },
  );
  const root = liveness.root;
  const untrack = deps.cancels?.track(id, root); // a cancel announced elsewhere aborts it at once (decision 053)
  // The reason travels with the request, as the marker's note (decision 106).
  const cancelRequested = async (): Promise<void> => {
    const reason = await requestedCancelReason(coordinator, id);
    if (!root.signal.aborted) root.abort(new CancelledError(id, reason));
  };
  if (live.cancelRequested) await cancelRequested();
  const disarmDeadline = armDeadline(deps.clock, jobDeadline(reactor, live.record), root); // from the record: across redeliveries (decision 081)
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
  let routed: Routed = { after: undefined };
  try {
    routed = await routeJob(deps, reactor, payload, delivery, live.record, { root, lease });
  } catch (error) {
    if (!(error instanceof LeaseLostError) && !(liveness.stopped instanceof WorkerShutdownError)) throw error; // store gone past the tolerance: BullMQ delivers the job again
  } finally {
    untrack?.();
    disarmDeadline();
    shutdown?.removeEventListener('abort', onShutdown);
    if (deps.liveJobs?.get(id) === liveness.binding) deps.liveJobs.delete(id);
    liveness.end();
    try {
      // Handed back: the record stays at its last checkpoint and a new job resumes it at once, on
      // another worker; it is enqueued before the lease is free, and the lease is freed only now
      // that every step body of this job has returned (no two bodies overlap).
      if (!released && liveness.stopped instanceof WorkerShutdownError)
        await deps.queue.enqueue(payload, {
          jobId: `${id}:handback:${delivery.jobId}:${delivery.delivery}`,
          ...priorityOf(live.record?.background),
        });
    } finally {
      if (!released) await coordinator.lockRelease(liveKey, owner).catch(() => undefined);
    }
  }
  if (!routed) return; // handled in full under the lease
  // A job that lost its lease leaves the execution to the worker that holds it now: it writes and wakes nothing.
  // A handed-back one completes its delivery (nothing for stall detection to redeliver).
  const stopped = liveness.stopped;
  if (stopped instanceof LeaseLostError && stopped.details.how === 'expired') {
    // Its deadline passed with nobody known to hold the lease (a frozen process, an outage): a job
    // continues the execution — it waits for the lease if another worker took it (decision 064).
    await deps.queue.enqueue(payload, {
      jobId: `${id}:lapsed:${delivery.jobId}:${delivery.delivery}`,
      delayMs: 0,
      ...priorityOf(live.record?.background),
    });
    return;
  }
  if (stopped instanceof LeaseLostError || stopped instanceof WorkerShutdownError) return;
  if (stopped) throw stopped;
  // Only now may this execution's next job run here or elsewhere.
  await routed.after?.();
}

/**
 * Takes the execution's liveness lease and, under it, reads the record and the cancel flag: one
 * round trip (docs/decisions/040). While another process's job of this execution is finishing
 * (say, a park checkpoint), waits for its release, briefly. `sentAt`: when the answer's request
 * left (the lease's local deadline counts from it, decision 064).
 */
async function takeLease(
  deps: BackgroundDeps,
  coordinator: Coordinator,
  leases: JobLeases,
  request: JobEnterRequest,
): Promise<{ readonly live: JobEnterResult; readonly sentAt: number }> {
  const { key, holder } = request.lease;
  const enter = () =>
    leases.enterJob(request).catch(async (error: unknown) => {
      await coordinator.lockRelease(key, holder.owner).catch(() => undefined); // the reply may have been lost after the lease was taken
      throw error;
    });
  let sentAt = monotonicNow(deps.clock);
  let live = await enter();
  const busyUntil = deps.clock.now() + deps.options.livenessWaitMs;
  while (
    !live.acquired &&
    !(live.holder?.owner.startsWith(`${deps.workerId}:`) ?? false) &&
    deps.clock.now() < busyUntil
  ) {
    await fastPathsOf(coordinator).waitForChange(
      deps.clock,
      'lock',
      key,
      Math.min(live.ttlMs, busyUntil - deps.clock.now()),
    );
    sentAt = monotonicNow(deps.clock);
    live = await enter();
  }
  return { live, sentAt };
}

/** What a routed job leaves: work for once the lease is free; `undefined` when it was handled in full. */
type Routed = { readonly after: After } | undefined;

/**
 * Routes a job holding the lease: an element of a fan-out map, a redelivery of finished work, a
 * job of a paused execution, an early delivery of a retry (deferred to its due time), or the run.
 */
async function routeJob(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  payload: ExecutionJob,
  delivery: JobDelivery,
  record: ExecutionRecord | undefined,
  held: { readonly root: AbortController; readonly lease: JobLease },
): Promise<Routed> {
  if (!record) return undefined; // expired
  if (!TERMINAL_STATUSES.has(record.status)) {
    // A fan-out element carries its map's definition stamp: it is gated like its parent.
    const gated = await versionGate(deps, reactor, payload, record, held.lease);
    if (!gated) return undefined; // left for a worker with the record's definition (decision 082)
    ({ reactor, record } = gated);
  }
  const id = payload.executionId;
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
  const withTrace = (traceContext: TraceContext | undefined): ExecutionRecord =>
    traceContext ? { ...record, traceContext } : record;
  if (record.element !== undefined)
    return void (await traced(scope, async (traceContext) =>
      (await processElementJob(deps, reactor, withTrace(traceContext), delivery, held.root.signal))?.(),
    ));
  if (TERMINAL_STATUSES.has(record.status)) return undefined; // a redelivery of finished work
  const deadline = deadlineAction(deps, reactor, record, delivery, held.root.signal);
  if (deadline) return void (await traced(scope, (traceContext) => deadline(withTrace(traceContext)))); // past it, or a deadline job early
  if (isInterruptJob(record, delivery))
    return {
      after: await traced(scope, (traceContext) => interruptJob(deps, reactor, withTrace(traceContext), delivery)),
    }; // paused: only a timeout acts
  const retryAt = record.background?.retryAt;
  if (record.status === 'pending' && retryAt !== undefined && retryAt - deps.clock.now() > 25) {
    // A stale or early delivery must not skip the retry backoff.
    await deps.queue.enqueue(payload, {
      jobId: `${id}:due:${delivery.jobId}:${delivery.delivery}`,
      delayMs: retryAt - deps.clock.now(),
      ...priorityOf(record.background),
    });
    return undefined;
  }
  await scheduleDeadlineJob(deps, reactor, record); // on its first job: the deadline's wake-up (decision 081)
  const after = await traced(scope, (traceContext) =>
    advance(deps, reactor, withTrace(traceContext), delivery, held.root, held.lease),
  );
  return { after };
}
