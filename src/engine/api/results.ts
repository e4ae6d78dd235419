/**
 * `engine.result` and `engine.wait`: an execution's current result, read from its record.
 *
 * @module
 */
import { ExecutionNotFoundError } from '../../errors.js';
import { fromRecord } from '../execution/execute.js';
import type { RunResult } from '../model/results.js';
import type { EngineParts } from './parts.js';

/** Options of {@link waitFor}. */
export interface WaitOptions {
  /** How long to poll before returning the current state. Default 30 s. */
  readonly timeoutMs?: number;
  /** How long between two reads. Default 20 ms. */
  readonly pollMs?: number;
}

/** The current result of an execution from its record; undefined when there is none. */
export async function currentResult(
  deps: Pick<EngineParts, 'store'>,
  executionId: string,
): Promise<RunResult | undefined> {
  const record = await deps.store.get(executionId);
  return record ? { ...fromRecord(record), replay: false } : undefined;
}

/**
 * Polls the record until the execution is terminal or paused, or the timeout passes (then the
 * current state). Rejects with {@link ExecutionNotFoundError} as soon as a poll finds no record.
 */
export async function waitFor(
  deps: Pick<EngineParts, 'store' | 'clock'>,
  executionId: string,
  options: WaitOptions = {},
): Promise<RunResult> {
  const deadline = deps.clock.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const current = await currentResult(deps, executionId);
    // No record: nothing will ever write one (never started, expired, or lost with a store that does not persist).
    if (!current) throw new ExecutionNotFoundError(executionId);
    if (
      ['completed', 'failed', 'halted', 'cancelled', 'paused'].includes(current.status) ||
      deps.clock.now() >= deadline
    )
      return current;
    await deps.clock.sleep(options.pollMs ?? 20);
  }
}
