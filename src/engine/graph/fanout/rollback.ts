/**
 * Rollback of a graph that may meet fan-out maps: compensate the failed steps, undo completed
 * ones newest first — and stop at a fan-out map whose completed elements must first be undone by
 * jobs, answering where to park (decision 019).
 *
 * @module
 */
import type { CompletedEntry, NodeOutcome } from '../../model/outcome.js';
import type { RunState } from '../../run/run-state.js';
import { undoAll } from '../undo.js';
import { FanOutRollbackWait, type FanOutPark } from '../../model/fanout/wait.js';

type Failed = Extract<NodeOutcome, { kind: 'failure' }>;

/** Where the rollback parks: at a fan-out map, with the completed steps still to undo after it. */
export type RollbackPark = Omit<FanOutPark, 'failedStep' | 'error'>;

/** Compensates `failures`, then undoes `completed` newest first; a fan-out map on the way parks the rollback there. */
export async function rollBackOrPark(
  run: RunState,
  failures: readonly Failed[],
  completed: readonly CompletedEntry[],
): Promise<RollbackPark | undefined> {
  let wait: FanOutRollbackWait | undefined;
  for (const failure of failures) {
    try {
      await failure.compensate?.();
    } catch (error) {
      if (!(error instanceof FanOutRollbackWait)) throw error;
      wait ??= error; // the other failures are still compensated; every completed step is undone after the elements
    }
  }
  if (wait) return parkAt(wait, undefined);
  return undoOrPark(run, completed);
}

/** Undoes `completed` newest first; parks at a fan-out map with elements to undo (the newer entries are undone by then). */
export async function undoOrPark(
  run: RunState,
  completed: readonly CompletedEntry[],
): Promise<RollbackPark | undefined> {
  try {
    await undoAll(completed, run);
    return undefined;
  } catch (error) {
    if (error instanceof FanOutRollbackWait) return parkAt(error, error.seq);
    throw error;
  }
}

function parkAt(wait: FanOutRollbackWait, below: number | undefined): RollbackPark {
  return {
    mapId: wait.mapId,
    step: wait.step,
    phase: 'rollback',
    dispatch: [],
    target: wait.target,
    settled: wait.total,
    total: wait.total,
    below,
  };
}
