/**
 * `engine.start` and `engine.process`: a run accepted for background execution, and one job of
 * a background execution (what a worker calls).
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { processJob } from '../jobs/process-job.js';
import { startBackground } from '../jobs/start.js';
import type { RunResult } from '../model/results.js';
import type { ExecutionJob, JobDelivery } from '../ports/queue.js';
import { accept, type AcceptDeps } from './accept.js';
import { needQueue, type EngineParts } from './parts.js';
import type { InternalRunOptions, RunOptions } from './types.js';

/**
 * Accepts a run for background execution: validates the input, claims its key, persists a
 * pending record and enqueues its first job. Rejects with `queue_missing` without a queue.
 */
export async function startReactor(
  deps: AcceptDeps & Pick<EngineParts, 'background'>,
  reactor: AnyReactorDefinition,
  input: unknown,
  options: RunOptions & InternalRunOptions = {},
): Promise<RunResult> {
  const background = needQueue(deps);
  return accept(deps, reactor, input, options, 'pending', ({ executionId, input: valid, key, retryOf, links }) =>
    startBackground(background, reactor, executionId, valid, key, retryOf, links),
  );
}

/** Processes one job of a reactor this engine knows (`reactor_unknown` otherwise). */
export async function processOne(
  deps: Pick<EngineParts, 'registry' | 'background'>,
  job: ExecutionJob,
  delivery: JobDelivery,
): Promise<void> {
  const reactor = deps.registry.forJob(job.reactor);
  await processJob(needQueue(deps), reactor, job, delivery);
}
