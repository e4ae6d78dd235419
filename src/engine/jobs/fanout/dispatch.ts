/**
 * Dispatching a fan-out map's element jobs: in bulk when the queue offers `enqueueMany` (one
 * round trip per chunk on BullMQ), else one `enqueue` at a time. Ids are the element jobs' own,
 * so a dispatch repeated by a redelivered or woken parent adds nothing twice.
 *
 * @module
 */
import { executionJob } from '../../execution/next-job.js';
import { elementIdOf, elementRunJobId } from '../../model/fanout/ids.js';
import type { EnqueueEntry, JobQueue } from '../../../ports/queue.js';

/** Enqueues `entries` with `queue.enqueueMany` when there is one, else one by one in order. */
export async function enqueueAll(queue: JobQueue, entries: readonly EnqueueEntry[]): Promise<void> {
  if (entries.length === 0) return;
  if (queue.enqueueMany) return queue.enqueueMany(entries);
  for (const { job, options } of entries) await queue.enqueue(job, options);
}

/** Enqueues the first job of each element of `indexes` (map `step` of execution `parentId`, reactor `reactor`). */
export function dispatchElements(
  queue: JobQueue,
  at: { readonly parentId: string; readonly step: string; readonly reactor: string },
  indexes: readonly number[],
): Promise<void> {
  return enqueueAll(
    queue,
    indexes.map((index) => {
      const elementId = elementIdOf(at.parentId, at.step, index);
      return { job: executionJob(elementId, at.reactor), options: { jobId: elementRunJobId(elementId) } };
    }),
  );
}
