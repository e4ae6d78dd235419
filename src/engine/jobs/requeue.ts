/**
 * A retry in a worker: the execution's next attempt is a delayed job; its record says when that
 * job is due, so an early delivery waits for it.
 *
 * @module
 */
import { nextJob, type NextJobDeps } from '../execution/next-job.js';
import type { RunState } from '../run/run-state.js';

/** Re-enqueues an execution for a later attempt (a retry delay); the record says when it is due. */
export async function requeue(deps: NextJobDeps, state: RunState, delayMs: number, reason: 'retry'): Promise<void> {
  await nextJob(deps, state, {
    status: 'pending',
    reason,
    delayMs,
    update: (background) => ({ ...background, retryAt: state.clock.now() + delayMs }),
  });
}
