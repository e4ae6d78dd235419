/**
 * `engine.result` and `engine.wait`: an execution's current result, read from its record.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { ExecutionNotFoundError, ExecutionReactorMismatchError } from '../../errors.js';
import { fromRecord } from '../execution/execute.js';
import type { RunResult } from '../model/results.js';
import type { EngineParts } from './parts.js';

import type { ExecutionHandle, ResultOf, Started, WaitOptions } from './types.js';

/**
 * The current result of an execution from its record; undefined when there is none. Given a
 * `reactor`, a record of another reactor rejects with {@link ExecutionReactorMismatchError}.
 */
export async function currentResult(
  deps: Pick<EngineParts, 'store'>,
  executionId: string,
  reactor?: AnyReactorDefinition,
): Promise<RunResult | undefined> {
  const record = await deps.store.get(executionId);
  if (!record) return undefined;
  if (reactor !== undefined && record.reactor !== reactor.name)
    throw new ExecutionReactorMismatchError(executionId, reactor.name, record.reactor);
  return { ...fromRecord(record), replay: false };
}

/** Whether the second argument of `engine.result` / `engine.wait` is a reactor (else wait options). */
export function isReactor(value: unknown): value is AnyReactorDefinition {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'reactor';
}

/**
 * Polls the record until the execution is terminal or paused, or the timeout passes (then the
 * current state). Rejects with {@link ExecutionNotFoundError} as soon as a poll finds no record.
 */
export async function waitFor(
  deps: Pick<EngineParts, 'store' | 'clock'>,
  executionId: string,
  options: WaitOptions = {},
  reactor?: AnyReactorDefinition,
): Promise<RunResult> {
  const deadline = deps.clock.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const current = await currentResult(deps, executionId, reactor);
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

/**
 * `started` with the {@link ExecutionHandle} methods of its execution added, not enumerable (a
 * JSON copy or an equality check sees the plain result).
 */
export function withHandle<R extends AnyReactorDefinition>(
  deps: Pick<EngineParts, 'store' | 'clock'>,
  reactor: R,
  started: RunResult,
): Started<R> {
  const handle: ExecutionHandle<R> = {
    result: () => currentResult(deps, started.executionId, reactor) as Promise<ResultOf<R> | undefined>,
    wait: (options) => waitFor(deps, started.executionId, options, reactor) as Promise<ResultOf<R>>,
  };
  return Object.defineProperties(
    { ...started },
    {
      result: { value: handle.result, enumerable: false },
      wait: { value: handle.wait, enumerable: false },
    },
  ) as Started<R>;
}
