/**
 * Undoing the completed elements of a fan-out map from their records (no body runs): one
 * element at a time in its turn (an element job in the rollback phase), or every one in this
 * process, highest index first, for an operator's `undo` or `cancel` (decisions 018, 019, 051).
 *
 * @module
 */
import type { AnyReactorDefinition, MapNode } from '../../../dsl/definition.js';
import { runElement } from '../../graph/map-element.js';
import { elementIdOf, elementPathOf, mapIdOf } from '../../model/fanout/ids.js';
import type { FanOutRuntime } from '../../model/fanout/wait.js';
import type { Clock } from '../../../ports/clock.js';
import type { FanOutLedger } from '../../../ports/fanout.js';
import type { JobQueue } from '../../../ports/queue.js';
import type { WaitList } from '../../../ports/wait-list.js';
import type { ElementLink, ExecutionRecord, RollbackFailure, Store } from '../../../ports/store.js';
import type { RunState } from '../../run/run-state.js';
import type { CoordinationDeps } from '../execute.js';
import type { NewState } from '../new-state.js';
import { abandonElementsInline } from './element-abandon.js';

/** What element work needs from the engine (a worker's deps, or an operator's for an inline undo). */
export interface ElementDeps {
  readonly store: Store;
  readonly newState: NewState;
  readonly queue?: JobQueue;
  readonly clock?: Clock;
  readonly waitList?: WaitList | undefined;
  readonly coordination?: CoordinationDeps;
  readonly fanOut?: FanOutLedger | undefined;
}

/** An element record, with the reactor and map node it belongs to. */
export interface ElementOf {
  readonly deps: Pick<ElementDeps, 'newState'>;
  readonly reactor: AnyReactorDefinition;
  readonly record: ExecutionRecord;
}

/** The run state of an element record (`replayOnly`: rebuild what it completed, run no body). */
export function elementState(element: ElementOf, replayOnly: boolean): RunState {
  const { record, reactor } = element;
  return element.deps.newState({
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: reactor.name,
    contract: reactor.contract,
    input: record.input as Record<string, unknown>,
    idempotencyKey: undefined,
    resume: record,
    mode: 'worker',
    replayOnly,
  });
}

/** Undoes one completed element from its record (no body runs) and marks the record undone; returns its undo failures. */
export async function undoElementRecord(
  element: ElementOf & { readonly node: MapNode; readonly link: ElementLink },
): Promise<RollbackFailure[]> {
  const { link, record } = element;
  const state = elementState(element, true);
  const place = {
    path: elementPathOf(link.step, link.index),
    reactor: element.reactor.name,
    signal: new AbortController().signal,
  };
  const rebuilt = await runElement(
    state,
    element.node,
    place,
    (record.input as { readonly item: unknown }).item,
    link.index,
  );
  const before = state.rollbackFailures.length;
  if (rebuilt.kind === 'success') await rebuilt.entry.undo();
  const failed = tagFailures(state, before, link);
  const at = { step: link.step, index: link.index };
  state.emit(
    failed.length > 0
      ? { type: 'map.element_undo_failed', ...at, message: failed.map((f) => f.message).join('; ') }
      : { type: 'map.element_undone', ...at },
  );
  await state.checkpoint('cancelled', { cancelReason: 'undone: the map rolled back' }, { cause: 'element_undone' });
  return failed;
}

/**
 * Undoes a fan-out map's completed elements in this process, highest index first — for an
 * operator's `undo` or `cancel`, which replay the record where they are called. Returns the undo
 * failures in rollback order.
 */
export async function undoElementsInline(
  deps: ElementDeps,
  reactor: AnyReactorDefinition,
  parentId: string,
  step: string,
): Promise<RollbackFailure[]> {
  const node = reactor.byName.get(step);
  if (node?.kind !== 'map' || !deps.fanOut) return [];
  const mapId = mapIdOf(parentId, step);
  const failures: RollbackFailure[] = [];
  // Entering the rollback phase first: a late element job of this map then runs no body.
  let target = (await deps.fanOut.register(mapId, '', 'rollback')).target;
  while (target >= 0) {
    const record = await deps.store.get(elementIdOf(parentId, step, target));
    if (record?.status === 'completed')
      failures.push(...(await undoElementRecord({ deps, reactor, node, record, link: record.element! })));
    target = (await deps.fanOut.undone(mapId, target)).target;
  }
  // What never ran ends now, not when a fallback job or the key's release comes round.
  const ledger = await deps.fanOut.snapshot(mapId);
  const open = (ledger?.statuses ?? []).flatMap((status, index) =>
    status === 'pending' ? [elementIdOf(parentId, step, index)] : [],
  );
  await abandonElementsInline(deps, open, (record) => elementState({ deps, record, reactor }, false));
  return failures;
}

/** The fan-out runtime of an operator's undo or cancel: completed elements are undone in this process. */
export function inlineFanOutRuntime(deps: ElementDeps, reactor: AnyReactorDefinition): FanOutRuntime | undefined {
  if (!deps.fanOut) return undefined;
  return {
    ledger: deps.fanOut,
    queue: deps.queue,
    store: deps.store,
    undoInline: (mapId, step) => undoElementsInline(deps, reactor, mapId.slice(0, -(step.length + 1)), step),
  };
}

/** Marks the rollback failures recorded since `from` with the map step and the element index. */
export function tagFailures(state: RunState, from: number, link: ElementLink): RollbackFailure[] {
  return state.retagRollbackFailures(from, (f) => ({ ...f, mapStep: link.step, elementIndex: link.index }));
}
