/**
 * Pausing an execution at its interrupts: the `paused` record and result, and the delayed job of
 * each active timeout.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import { findInterrupt } from '../../../dsl/interrupt.js';
import { JOB_FORMAT_VERSION, type ExecutionJob, type JobQueue } from '../../../ports/queue.js';
import type { InterruptWait } from '../../../ports/store.js';
import type { PausedRun } from '../../model/results.js';
import type { RunState } from '../../run/run-state.js';
import { scheduleDeadlineOnPause } from '../deadline.js';

/** The job id of an interrupt's active timeout. */
export const timeoutJobId = (executionId: string, step: string): string => `${executionId}:timeout:${step}`;

/** True when `jobId` is the active-timeout job of an interrupt of `executionId`. */
export const isTimeoutJob = (executionId: string, jobId: string): boolean =>
  jobId.startsWith(`${executionId}:timeout:`);

/**
 * Removes the timeout jobs of `waits` of `executionId` that have a timeout, where the queue can
 * ({@link JobQueue.discard}): their waits ended another way (an event resumed them, the execution
 * ended), so the jobs would only be delivered to change nothing. A job that stays (a worker has
 * it, the queue cannot discard, Redis is away) is still harmless: delivered, it finds no open wait due.
 */
export async function discardTimeoutJobs(
  queue: JobQueue | undefined,
  executionId: string,
  waits: readonly InterruptWait[],
): Promise<void> {
  if (queue?.discard === undefined) return;
  for (const wait of waits)
    if (wait.timeoutAt !== undefined) await queue.discard(timeoutJobId(executionId, wait.step)).catch(() => false);
}

/** What a paused run shows it waits for. */
export function waitsOf(interrupts: readonly InterruptWait[]): PausedRun['interrupts'] {
  return interrupts
    .filter((w) => w.resumedAt === undefined)
    .map((w) => ({
      step: w.step,
      ...(w.correlationId === undefined ? {} : { correlationId: w.correlationId }),
      ...(w.event === undefined ? {} : { event: w.event.name }),
      ...(w.timeoutAt === undefined ? {} : { timeoutAt: w.timeoutAt }),
    }));
}

/** Persists the execution as `paused` (with its trace) and schedules active timeouts. */
export async function pauseRun(state: RunState, reactor: AnyReactorDefinition): Promise<PausedRun> {
  const interrupts = waitsOf(state.interrupts);
  state.emit({ type: 'run.paused', interrupts });
  await state.checkpoint('paused', {}, { withTrace: true });
  for (const wait of state.interrupts) await scheduleTimeout(state, reactor, wait);
  await scheduleDeadlineOnPause(state, reactor); // woken at the reactor's deadline (decision 081)
  // An event sent between a wait's registration and this park found it not parked: re-check the log (decision 149).
  if (state.interrupts.some((w) => w.event !== undefined && w.resumedAt === undefined)) state.parkedOnEvents();
  return {
    status: 'paused',
    executionId: state.executionId,
    reactor: state.reactor,
    trace: state.trace,
    steps: state.steps,
    rollbackFailures: state.rollbackFailures,
    replay: false,
    pausedOn: { kind: 'interrupt' },
    interrupts,
  };
}

async function scheduleTimeout(state: RunState, reactor: AnyReactorDefinition, wait: InterruptWait): Promise<void> {
  // A wait for an event has only active timeouts: no resume comes to check a lazy one.
  const active = wait.event !== undefined || findInterrupt(reactor, wait.step)?.interrupt?.timeoutStrategy === 'active';
  if (wait.resumedAt !== undefined || wait.timeoutAt === undefined || !active) return;
  if (!state.queue) {
    state.logger.warn(
      { step: wait.step },
      wait.event === undefined
        ? `interrupt "${wait.step}": an active timeout needs a queue (background execution); it is checked lazily, when a resume arrives`
        : `waitForEvent "${wait.step}": a timeout needs a queue (background execution); without one it never passes, and events after it are not matched`,
    );
    return;
  }
  // One job per interrupt (a re-pause enqueues the same id, which the queue adds once).
  const job: ExecutionJob = { v: JOB_FORMAT_VERSION, executionId: state.executionId, reactor: state.reactor };
  await state.queue.enqueue(job, {
    jobId: timeoutJobId(state.executionId, wait.step),
    delayMs: Math.max(0, wait.timeoutAt - state.clock.now()),
  });
}
