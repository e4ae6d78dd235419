/**
 * Jobs of a paused execution in a worker: an interrupt's active timeout fails the run when it is
 * due, and so does a `.waitForEvent` step's timeout with `onTimeout: 'fail'`; one whose
 * `onTimeout` gives a value completes the step with it and hands the run on to its next job. Any
 * other job of a paused execution (a stray redelivery) changes nothing.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import { findInterrupt } from '../../../dsl/interrupt.js';
import { findEventWait } from '../../../dsl/wait-for-event-nodes.js';
import { EventWaitTimeoutError, InterruptTimeoutError, toError } from '../../../errors.js';
import type { After, BackgroundDeps } from '../deps.js';
import type { JobDelivery } from '../../../ports/queue.js';
import type { ExecutionRecord, InterruptWait } from '../../../ports/store.js';
import { failPaused } from '../../execution/interrupt/fail.js';
import { isTimeoutJob } from '../../execution/interrupt/pause.js';
import { executionJob, nextJobDeferred } from '../../execution/next-job.js';
import { NO_JOB } from '../../model/background.js';

/** True when a worker must hand this job to {@link interruptJob} instead of advancing the execution. */
export function isInterruptJob(record: ExecutionRecord, delivery: JobDelivery): boolean {
  return record.status === 'paused' || isTimeoutJob(record.id, delivery.jobId);
}

/**
 * Processes a job of a paused execution (or a timeout job of a resumed one), holding its liveness
 * lock; what it leaves for after the lock is released (the next job of a wait completed by its
 * timeout's value).
 */
export async function interruptJob(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  delivery: JobDelivery,
): Promise<After> {
  if (record.status !== 'paused' || !isTimeoutJob(record.id, delivery.jobId)) return undefined;
  const now = deps.clock.now();
  const active = (record.interrupts ?? []).filter(
    (w) =>
      w.resumedAt === undefined &&
      w.timeoutAt !== undefined &&
      (w.event !== undefined || findInterrupt(reactor, w.step)?.interrupt?.timeoutStrategy === 'active'),
  );
  const due = active.find((w) => w.timeoutAt! <= now + 5);
  if (!due) {
    // Delivered early (a clock skew between processes): come back when the first one is due.
    const next = Math.min(...active.map((w: InterruptWait) => w.timeoutAt!));
    if (Number.isFinite(next))
      await deps.queue.enqueue(executionJob(record.id, record.reactor), {
        jobId: `${delivery.jobId}@${now}`,
        delayMs: next - now,
      });
    return undefined;
  }
  if (due.event !== undefined) return eventWaitTimedOut(deps, reactor, record, due);
  const error = new InterruptTimeoutError({
    executionId: record.id,
    step: due.step,
    timeoutAt: due.timeoutAt!,
    strategy: 'active',
  });
  await failPaused(deps, reactor, record, {
    step: due.step,
    error,
    events: [{ type: 'interrupt.timed_out', step: due.step, strategy: 'active', timeoutAt: due.timeoutAt! }],
  });
  return undefined;
}

/**
 * A `.waitForEvent` step's timeout passed (decision 150): with `onTimeout: 'fail'` the run rolls
 * back and ends failed with `EventWaitTimeoutError`; with a function, the step completes with its
 * value and the run goes on in its next job (a function that throws fails the run the same way).
 * Either way the wait's registration is dropped.
 */
async function eventWaitTimedOut(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  due: InterruptWait,
): Promise<After> {
  const state = due.event!;
  await deps.eventWaits
    ?.remove({ event: state.name, matchKey: state.matchKey, kind: 'resume', executionId: record.id, ref: due.step })
    .catch(() => undefined);
  const onTimeout = findEventWait(reactor, due.step)?.wait.onTimeout ?? { kind: 'fail' as const };
  const timedOut = (kind: 'fail' | 'value') =>
    ({
      type: 'wait.timed_out',
      step: due.step,
      event: state.name,
      timeoutAt: due.timeoutAt!,
      onTimeout: kind,
    }) as const;
  let value: unknown;
  let failure: Error | undefined;
  if (onTimeout.kind === 'value') {
    try {
      value = (onTimeout.value as (args: unknown) => unknown)(state.args);
    } catch (error) {
      failure = toError(error);
    }
  }
  if (onTimeout.kind === 'fail' || failure !== undefined) {
    const error =
      failure ??
      new EventWaitTimeoutError({
        executionId: record.id,
        step: due.step,
        event: state.name,
        timeoutAt: due.timeoutAt!,
      });
    await failPaused(deps, reactor, record, { step: due.step, error, events: [timedOut('fail')] });
    return undefined;
  }
  const resumed: ExecutionRecord = {
    ...record,
    interrupts: (record.interrupts ?? []).map((w) =>
      w === due ? { ...w, payload: value, resumedAt: deps.clock.now(), event: { ...state, timedOut: true } } : w,
    ),
  };
  const run = deps.newState({
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: reactor.name,
    contract: reactor.contract,
    input: record.input as Record<string, unknown>,
    idempotencyKey: record.idempotencyKey,
    resume: resumed,
    mode: 'worker',
  });
  run.emit(timedOut('value'));
  return nextJobDeferred({ queue: deps.queue }, run, { reason: 'resume', none: NO_JOB }); // enqueued once the lock is free
}
