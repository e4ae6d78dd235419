/**
 * The BullMQ queue as operators see it ({@link QueueInspector}): job counts by state, the first
 * delayed, active and waiting jobs, and the workers online (BullMQ's `getWorkers`: the Redis
 * clients named after the queue). A worker's concurrency travels in its BullMQ worker name
 * (`<host>-<pid>-c<concurrency>`), set by `createBullmqConsumer`.
 *
 * @module
 */
import type { Job, Queue } from 'bullmq';
import type { QueueJobView, QueueSnapshot, QueueWorkerView } from '../ports/queue-inspector.js';
import { fromBullmqJobId } from './job-id.js';
import { hostWorkerName } from './worker-name.js';

/**
 * The states counted. No `paused`: BullMQ 6 has no such state (a paused queue keeps its jobs in
 * `waiting`), and BullMQ 5 counts its `paused` list by itself, after these, whenever `waiting` is asked for.
 */
const STATES = ['waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed'] as const;

/** The BullMQ worker name of a consumer of this process running `concurrency` jobs at once. */
export function workerName(concurrency: number): string {
  return `${hostWorkerName()}-c${concurrency}`;
}

/** A worker as `getWorkers` lists it: its name and concurrency from the name {@link workerName} gave it. */
export function workerView(client: Readonly<Record<string, string>>): QueueWorkerView {
  const raw = client['rawname'] ?? client['name'] ?? '';
  const named = /:w:(.+)$/.exec(raw)?.[1];
  const concurrency = named === undefined ? undefined : /-c(\d+)$/.exec(named)?.[1];
  const age = Number(client['age']);
  return {
    name: named === undefined ? '(unnamed worker)' : concurrency === undefined ? named : named.replace(/-c\d+$/, ''),
    ...(concurrency === undefined ? {} : { concurrency: Number(concurrency) }),
    ...(client['addr'] === undefined ? {} : { address: client['addr'] }),
    ...(Number.isFinite(age) ? { ageMs: age * 1000 } : {}),
  };
}

function jobView(job: Job): QueueJobView {
  const data = (job.data ?? {}) as { executionId?: unknown; reactor?: unknown };
  const due = job.delay > 0 ? job.timestamp + job.delay : undefined;
  return {
    jobId: job.id === undefined ? '' : fromBullmqJobId(job.id),
    executionId: typeof data.executionId === 'string' ? data.executionId : '',
    reactor: typeof data.reactor === 'string' ? data.reactor : '',
    addedAt: job.timestamp,
    ...(due === undefined ? {} : { dueAt: due }),
    ...(job.processedOn === undefined ? {} : { startedAt: job.processedOn }),
    deliveries: job.attemptsStarted,
    ...(job.opts.priority === undefined || job.opts.priority === 0 ? {} : { priority: job.opts.priority }),
  };
}

/** Reads `queue` for the queue view. */
export async function inspectBullmq(queue: Queue, options: { readonly limit?: number } = {}): Promise<QueueSnapshot> {
  const limit = Math.max(1, Math.min(options.limit ?? 20, 500));
  const [counts, delayed, active, waiting, workers] = await Promise.all([
    queue.getJobCounts(...STATES),
    queue.getJobs(['delayed'], 0, limit - 1, true),
    queue.getJobs(['active'], 0, limit - 1, true),
    queue.getJobs(['waiting', 'prioritized'], 0, limit - 1, true),
    queue.getWorkers(),
  ]);
  const firstWaiting = waiting.map((j) => j?.timestamp).filter((t): t is number => Number.isFinite(t));
  return {
    name: queue.name,
    counts,
    ...(firstWaiting.length === 0 ? {} : { oldestWaitingAt: Math.min(...firstWaiting) }),
    delayed: delayed
      .filter((j): j is Job => j !== undefined)
      .map(jobView)
      .sort((a, b) => (a.dueAt ?? 0) - (b.dueAt ?? 0)),
    active: active.filter((j): j is Job => j !== undefined).map(jobView),
    waiting: waiting.filter((j): j is Job => j !== undefined).map(jobView),
    workers: workers.map((w) => workerView(w as Record<string, string>)),
    at: Date.now(),
  };
}
