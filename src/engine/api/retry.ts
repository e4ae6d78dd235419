/**
 * `engine.retry`: a failed, halted, cancelled or aborted execution run again as a new execution
 * linked to it (`retryOf`, with its tags), in the background when the engine has a queue.
 *
 * @module
 */
import { retrySource } from '../execution/operations.js';
import type { RunResult } from '../model/results.js';
import { linkRetry } from './retry-link.js';
import { runReactor, type RunDeps } from './run.js';
import { startReactor } from './start.js';
import type { EngineParts } from './parts.js';

/** Runs the execution `executionId` again and records the link in its trace. */
export async function retryExecution(
  deps: RunDeps & Pick<EngineParts, 'operations' | 'hub' | 'clock' | 'logger' | 'maxTraceEntries'>,
  executionId: string,
): Promise<RunResult> {
  const source = await retrySource(deps.operations, executionId);
  const retried = await (deps.background ? startReactor : runReactor)(deps, source.reactor, source.input, {
    retryOf: executionId,
    ...(source.tags === undefined ? {} : { tags: source.tags }),
    ...(source.traceContext === undefined ? {} : { retryTrace: source.traceContext }),
  });
  await linkRetry(deps, executionId, retried.executionId);
  return retried;
}
