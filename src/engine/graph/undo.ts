/**
 * Undoing what a graph completed, newest first.
 *
 * @module
 */
import type { CompletedEntry } from '../model/outcome.js';
import type { RunState } from '../run/run-state.js';

/**
 * Undoes entries in reverse completion order. With `run`, the order is the recorded one (it
 * survives jobs and replays); without, the order of `entries`.
 */
export async function undoAll(entries: readonly CompletedEntry[], run?: RunState): Promise<void> {
  const seq = (e: CompletedEntry): number => run?.stepRecord(e.step)?.completedSeq ?? 0;
  const ordered = run ? [...entries].sort((a, b) => seq(a) - seq(b)) : entries;
  for (let i = ordered.length - 1; i >= 0; i--) await ordered[i]!.undo();
}
