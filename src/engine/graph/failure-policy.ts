/**
 * The `onFailure` policy at the root frame of an execution: whether the failures a graph stopped
 * on pause the execution for an operator instead of rolling it back (docs/decisions/100).
 *
 * @module
 */
import type { AnyReactorDefinition, GraphNode } from '../../dsl/definition.js';
import type { FailureWait } from '../model/suspension.js';

/** The failure the execution pauses on, or undefined when it rolls back. */
export function failurePauseOf(
  def: AnyReactorDefinition,
  failures: readonly { readonly step: string; readonly error: Error }[],
): FailureWait | undefined {
  const first = failures[0];
  if (!first) return undefined;
  // Every failure must be one of the reactor's own plain steps that pauses; anything else rolls back as before.
  const pauses = failures.every((f) => pausesOnFailure(def, def.byName.get(f.step)));
  return pauses ? { kind: 'failurePause', step: first.step, error: first.error } : undefined;
}

/** True for a top-level plain step (not async, an interrupt or a sleep) whose policy, or else its reactor's, is `'pause'`. */
export function pausesOnFailure(def: AnyReactorDefinition, node: GraphNode | undefined): boolean {
  if (node?.kind !== 'step') return false;
  return (node.onFailure ?? def.onFailure ?? 'rollback') === 'pause';
}
