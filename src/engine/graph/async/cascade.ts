/**
 * Cancel cascades (docs/decisions/087): an execution being cancelled — by an operator, by its
 * own parent's cascade, or past its `deadline` — first cancels the unfinished `asyncReactor`
 * children it dispatched (all at once; each cascades to its own), waits for their rollback, and
 * only then undoes its own steps. A dispatch declared with `cancelChildren: false` is left alone,
 * and so is a child that has ended. A failure's rollback cascades nothing: the children are
 * independent executions.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import { findAsyncReactor } from '../../model/async/find-node.js';
import type { RunState } from '../../run/run-state.js';

/** Where a child was dispatched: the dispatching step's path and the reactor it belongs to. */
interface Dispatch {
  readonly path: string;
  readonly reactor: string;
}

/** Cancels the children the nodes of one frame (`def` at `prefix`) dispatched, before that frame's undos. */
export function cancelFrameChildren(run: RunState, def: AnyReactorDefinition, prefix: string): Promise<void> {
  const dispatches = def.nodes
    .filter((n) => n.kind === 'async-reactor' && n.cancelChildren !== false)
    .map((n) => ({ path: prefix + n.name, reactor: def.name }));
  return cancelDispatched(run, dispatches);
}

/** Cancels every child the record of `run` (a replay of a queued or parked execution) says it dispatched. */
export function cancelRecordedChildren(run: RunState, root: AnyReactorDefinition): Promise<void> {
  const dispatches = Object.keys(run.steps).flatMap((path) => {
    const node = findAsyncReactor(root, path);
    return node === undefined || node.cancelChildren === false ? [] : [{ path, reactor: run.reactor }];
  });
  return cancelDispatched(run, dispatches);
}

async function cancelDispatched(run: RunState, dispatches: readonly Dispatch[]): Promise<void> {
  const port = run.async;
  if (port === undefined || dispatches.length === 0) return;
  const reason = `its parent ${run.executionId} was cancelled`;
  await Promise.all(
    dispatches.map(async ({ path, reactor }) => {
      const childId = run.stepRecord(path)?.unitId;
      if (childId === undefined) return;
      const status = await port.cancelChild(childId, reason);
      if (status !== undefined) run.emit({ type: 'async.child_cancelled', step: path, reactor, childId, status });
    }),
  );
}
