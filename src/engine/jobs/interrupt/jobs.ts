/**
 * Jobs of a paused execution in a worker: an interrupt's active timeout fails the run when it is
 * due; any other job of a paused execution (a stray redelivery) changes nothing.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import { findInterrupt } from '../../../dsl/interrupt.js';
import { InterruptTimeoutError } from '../../../errors.js';
import type { BackgroundDeps } from '../deps.js';
import type { JobDelivery } from '../../../ports/queue.js';
import type { ExecutionRecord, InterruptWait } from '../../../ports/store.js';
import { failPaused } from '../../execution/interrupt/fail.js';
import { isTimeoutJob } from '../../execution/interrupt/pause.js';
import { executionJob } from '../../execution/next-job.js';

/** True when a worker must hand this job to {@link interruptJob} instead of advancing the execution. */
export function isInterruptJob(record: ExecutionRecord, delivery: JobDelivery): boolean {
  return record.status === 'paused' || isTimeoutJob(record.id, delivery.jobId);
}

/** Processes a job of a paused execution (or a timeout job of a resumed one), holding its liveness lock. */
export async function interruptJob(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  delivery: JobDelivery,
): Promise<void> {
  if (record.status !== 'paused' || !isTimeoutJob(record.id, delivery.jobId)) return;
  const now = deps.clock.now();
  const active = (record.interrupts ?? []).filter(
    (w) =>
      w.resumedAt === undefined &&
      w.timeoutAt !== undefined &&
      findInterrupt(reactor, w.step)?.interrupt?.timeoutStrategy === 'active',
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
    return;
  }
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
}
