/**
 * `engine.wake`: an operator's "wake now" for an execution sleeping in a worker (decision 077):
 * the delayed job it parked with is promoted, and that job completes the sleep step early
 * (`step.woke` with `early: true`, after `run.woken` with primitive `sleep`).
 *
 * @module
 */
import type { EngineParts } from './parts.js';

/** Promotes the wake job of `executionId`'s sleep; false when it is not parked on a sleep (or has no queue, or the job is due already). */
export async function wakeExecution(
  deps: Pick<EngineParts, 'store' | 'background'>,
  executionId: string,
): Promise<boolean> {
  const queue = deps.background?.queue;
  if (!queue) return false;
  const record = await deps.store.get(executionId);
  const waiting = record?.background?.waitingFor;
  if (record?.status !== 'parked' || waiting?.primitive !== 'sleep') return false;
  return queue.promote(waiting.jobId);
}
