/**
 * An operator's hold on an execution's liveness lock (cancel, undo, an abandoned fan-out element).
 *
 * A worker writes a job's last checkpoint (`queued` for a retry, `parked`, `pending`) before it
 * lets the lock go: it still enqueues the next job, registers the park, reports the job's end.
 * An operator that reads such a record and finds the lock taken is looking at that tail, not at
 * a run: it waits for the lock rather than treating the execution as running elsewhere
 * (docs/decisions/144). It stops waiting when the record says a job runs it again, or after
 * {@link TAIL_WAIT_MS} (a worker that died in its tail: its lock expires with its lease, and its
 * redelivered job finds the operator's request).
 *
 * @module
 */
import type { Coordinator } from '../../ports/coordinator.js';
import { livenessKey } from '../model/keys.js';

/** How long an operator waits for a job's tail before it leaves the execution to that job. */
export const TAIL_WAIT_MS = 10_000;

/** The operator's hold: `release` lets the lock go (never throws). */
export interface OperatorHold {
  readonly release: () => Promise<void>;
}

/**
 * Takes `executionId`'s liveness lock for an operator. While it is taken and `idle()` (a fresh
 * read of the record) says no job runs the execution, it tries again, backing off from 5 ms to
 * 200 ms, for at most {@link TAIL_WAIT_MS}. Resolves `undefined` when a job runs it (or still
 * holds it at the bound).
 */
export async function operatorHold(
  coordinator: Coordinator,
  executionId: string,
  idle: () => Promise<boolean>,
): Promise<OperatorHold | undefined> {
  const key = livenessKey(executionId);
  const owner = `operator:${executionId}:${crypto.randomUUID()}`;
  const giveUpAt = performance.now() + TAIL_WAIT_MS;
  for (let pause = 5; ; pause = Math.min(200, pause * 2)) {
    const lock = await coordinator.lockAcquire({ key, holder: { owner, executionId }, ttlMs: 60_000 });
    if (lock.acquired)
      return {
        release: () =>
          coordinator.lockRelease(key, owner).then(
            () => undefined,
            () => undefined,
          ),
      };
    if (performance.now() >= giveUpAt || !(await idle())) return undefined;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
