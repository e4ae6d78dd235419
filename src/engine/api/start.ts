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
import type { ExecutionJob, JobDelivery } from '../../ports/queue.js';
import { accept, type AcceptDeps } from './accept.js';
import { needQueue, type EngineParts } from './parts.js';
import { needDebounceSlots, takeDebounceSlot } from './start-debounce.js';
import { checkOptionsObject, checkStartReactor } from './start-entry.js';
import { startPlan } from './start-options.js';
import type { InternalRunOptions, StartOptions } from './types.js';

/**
 * Accepts a run for background execution: checks its start options (`start_options_invalid`),
 * validates the input, claims its key, persists a pending record and enqueues its first job
 * (delayed until its start time, with its priority); a debounced one then takes its debounce
 * slot, superseding the earlier start it finds there. Rejects with `queue_missing` without a queue,
 * and with `start_options_invalid` for a reactor that is not a built definition (a name).
 */
export async function startReactor(
  deps: AcceptDeps & Pick<EngineParts, 'background' | 'clock' | 'operations'>,
  reactor: AnyReactorDefinition,
  input: unknown,
  options: StartOptions & InternalRunOptions = {},
): Promise<RunResult> {
  checkStartReactor(reactor);
  checkOptionsObject(options);
  const background = needQueue(deps);
  const plan = startPlan(options, deps.clock.now());
  if (plan.debounce) needDebounceSlots(deps.operations);
  return accept(
    deps,
    reactor,
    input,
    options,
    'pending',
    async ({ executionId, input: valid, key, retryOf, links }) => {
      const started = await startBackground(background, reactor, executionId, valid, key, retryOf, links, plan);
      // Written and enqueued first, so that a later start finds a record to supersede (docs/decisions/086).
      if (plan.debounce && started.status === 'queued')
        await takeDebounceSlot(deps.operations, reactor, executionId, plan.debounce);
      return started;
    },
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
