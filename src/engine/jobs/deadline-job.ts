/**
 * A reactor's deadline in a worker (docs/decisions/081). Every job of an execution measures it
 * from the record (its `createdAt`, or a delayed start's time), so it holds across redeliveries:
 * a job entered past it rolls the execution back at once, and one that is running when it passes
 * is aborted like a cancel. An execution that waits with no job running — parked, paused,
 * sleeping, waiting for a retry — is woken by its deadline job (`<executionId>:deadline`),
 * enqueued by its first job (and by a pause: `execution/deadline.ts`), due at the deadline; it rolls back what has not finished, and
 * does nothing once the execution has.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { deadlineJobId, deadlineOf, deadlinePassed, enqueueDeadlineJob, type Deadline } from '../execution/deadline.js';
import { executionJob } from '../execution/next-job.js';
import { rollbackRecorded } from '../execution/operations.js';
import type { JobDelivery } from '../../ports/queue.js';
import { TERMINAL_STATUSES, type ExecutionRecord } from '../../ports/store.js';
import type { BackgroundDeps } from './deps.js';

/** True for the deadline job of `executionId`, also when it comes back (busy, early, handed back). */
export function isDeadlineJob(executionId: string, delivery: Pick<JobDelivery, 'jobId'>): boolean {
  return delivery.jobId.includes(deadlineJobId(executionId));
}

/**
 * The deadline a job of `record` arms: the reactor's, for an execution of its own (not an
 * element of a fan-out map, not an async unit) that has not finished and is not rolling back a
 * failure already; otherwise `undefined`.
 */
export function jobDeadline(
  reactor: Pick<AnyReactorDefinition, 'deadlineMs'>,
  record: ExecutionRecord | undefined,
): Deadline | undefined {
  if (!record || record.element !== undefined || record.unit !== undefined) return undefined;
  if (TERMINAL_STATUSES.has(record.status) || record.status === 'rolling_back') return undefined;
  return deadlineOf(reactor, record);
}

/**
 * On the execution's first job (its job count still 1: a start, a hand-off, a resume of an inline
 * pause), enqueues its deadline job, due at its deadline — once: the job id is fixed, so a
 * redelivered first job adds nothing. Nothing without a deadline, or on a later job.
 */
export async function scheduleDeadlineJob(
  deps: Pick<BackgroundDeps, 'queue' | 'clock'>,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
): Promise<void> {
  const deadline = jobDeadline(reactor, record);
  if (deadline === undefined || (record.background?.jobs ?? 1) > 1) return;
  await enqueueDeadlineJob(deps, reactor.name, deadline);
}

/** What a job does about the deadline before it runs anything: roll back, come back later, or nothing. */
export type DeadlineAction = ((record: ExecutionRecord) => Promise<unknown>) | undefined;

/**
 * Past the deadline (the job's root `signal` aborted with a `DeadlineExceededError`): roll the
 * execution back from its record and end it `cancelled`. A deadline job delivered early comes
 * back when due; one for a reactor without a deadline does nothing. Anything else: `undefined`,
 * the job goes on.
 */
export function deadlineAction(
  deps: BackgroundDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  delivery: JobDelivery,
  signal: AbortSignal,
): DeadlineAction {
  const passed = deadlinePassed(signal);
  if (passed) return (traced) => rollbackRecorded(deps, reactor, traced, passed.message, passed);
  if (!isDeadlineJob(record.id, delivery)) return undefined;
  const deadline = jobDeadline(reactor, record);
  if (deadline === undefined) return () => Promise.resolve(); // no deadline (any more): nothing to do
  return () =>
    deps.queue.enqueue(executionJob(record.id, reactor.name), {
      jobId: `${deadlineJobId(record.id)}:early:${delivery.jobId}:${delivery.delivery}`,
      delayMs: Math.max(1, deadline.deadlineAt - deps.clock.now()),
    });
}
