/**
 * A sleep step in a worker (docs/time.md#sleeps, decision 077): the execution parks on a delayed
 * job due at the sleep's wake time (status `parked`, `waitingFor { primitive: 'sleep' }`), so it
 * holds no worker slot and no liveness lease while it sleeps; the job, delivered at the wake time
 * or promoted early by `engine.wake`, runs the graph again and the sleep completes.
 *
 * @module
 */
import { nextJob } from '../execution/next-job.js';
import { SLEEP_WAKE_LEAD_MS } from '../graph/sleep.js';
import type { SleepWait } from '../model/suspension.js';
import type { JobDelivery } from '../../ports/queue.js';
import type { WaitingFor } from '../../ports/store.js';
import type { RunState } from '../run/run-state.js';
import type { After, BackgroundDeps } from './deps.js';

/** Parks `state` until `sleep.wakeAt`: checkpointed `parked` with its delayed job, then that job enqueued. */
export async function parkOnSleep(deps: BackgroundDeps, state: RunState, sleep: SleepWait): Promise<After> {
  const delayMs = Math.max(0, sleep.wakeAt - state.clock.now());
  await nextJob(deps, state, {
    status: 'parked',
    reason: 'park',
    delayMs,
    earlyMs: SLEEP_WAKE_LEAD_MS,
    update: (background, { jobId }) => {
      const waitingFor: WaitingFor = {
        primitive: 'sleep',
        key: sleep.step,
        step: sleep.step,
        attempt: 0,
        jobId,
        dueAt: sleep.wakeAt,
      };
      return { ...background, waitingFor };
    },
  });
  return undefined;
}

/**
 * The sleep a job wakes early: this job is the one the execution parked on a sleep with, delivered
 * before the wake time (an operator's `engine.wake` promoted it). Its path, or undefined.
 */
export function wokenSleep(
  state: RunState,
  waiting: WaitingFor | undefined,
  delivery: JobDelivery,
): string | undefined {
  if (waiting?.primitive !== 'sleep' || waiting.jobId !== delivery.jobId || waiting.dueAt === undefined)
    return undefined;
  // Up to SLEEP_WAKE_LEAD_MS early is the queue's early delivery (the sleep waits out the rest); a timer may fire a few ms early.
  return state.clock.now() < waiting.dueAt - SLEEP_WAKE_LEAD_MS - 5 ? waiting.key : undefined;
}
