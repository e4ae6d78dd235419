/**
 * Step-level ordered-lock positions: a position is taken when an execution first arrives
 * at the step and kept across the step's retries, parks and worker jobs, so the step is passed
 * in arrival order. Kept in this process per run and, for a background execution, in its
 * persisted background state (`stepOrdered`), which travels with every park and retry
 * checkpoint. docs/decisions/022-step-ordered-positions.md.
 *
 * @module
 */
import type { OrderedTicket } from '../../ports/coordinator.js';
import type { RunState } from './run-state.js';

const kept = new WeakMap<RunState, Map<string, OrderedTicket>>();

/** The position this execution holds for the step at `path`, if any. */
export function keptTicket(run: RunState, path: string): OrderedTicket | undefined {
  return kept.get(run)?.get(path) ?? run.background?.stepOrdered?.[path];
}

/** Records the position taken for the step at `path`. */
export function keepTicket(run: RunState, path: string, ticket: OrderedTicket): void {
  let map = kept.get(run);
  if (!map) kept.set(run, (map = new Map()));
  map.set(path, ticket);
  if (run.background !== undefined)
    run.setBackground({ ...run.background, stepOrdered: { ...run.background.stepOrdered, [path]: ticket } });
}

/** Forgets the step's position (it completed, was handed back, or went stale). */
export function dropTicket(run: RunState, path: string): void {
  kept.get(run)?.delete(path);
  if (run.background?.stepOrdered?.[path] === undefined) return;
  const { [path]: _done, ...rest } = run.background.stepOrdered;
  run.setBackground({ ...run.background, stepOrdered: rest });
}
