/**
 * The background part of the async port (`run/async/port.ts`), built from the engine's
 * background deps: the dispatching side of `asyncStep` / `asyncReactor` reaches the store, the
 * queue and the coordinator through it, and starts `asyncReactor` children like background starts.
 *
 * @module
 */
import { computeKey } from '../../coordination/scope.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import type { AsyncBackground, ChildStart } from '../run/async/port.js';
import type { BackgroundDeps } from './deps.js';
import { handOffToWorker } from './start.js';

/** The async port's background path over `deps` (the engine's, when it has a queue). */
export function asyncBackground(deps: BackgroundDeps): AsyncBackground {
  return {
    store: deps.store,
    queue: deps.queue,
    coordinator: deps.coordination.coordinator,
    startChild: (child, start) => startChild(deps, child, start),
  };
}

/**
 * Starts an `asyncReactor` child: an independent execution (its own root, so its own coordination
 * owner), linked to its dispatcher by `parentId`. Persists it as pending (an ordered-lock position
 * taken now, like any background start) and enqueues its first job; a child that exists already
 * is left alone.
 */
async function startChild(deps: BackgroundDeps, child: AnyReactorDefinition, start: ChildStart): Promise<void> {
  const { childId, input, parentId } = start;
  if (await deps.store.get(childId)) return;
  const state = deps.newState({
    executionId: childId,
    rootExecutionId: childId,
    reactor: child.name,
    contract: child.contract,
    input,
    idempotencyKey: undefined,
    mode: 'worker',
    parentId,
    definition: child, // its jobs run on this definition of the child (decision 082)
  });
  // The child's jobs join its dispatcher's trace (docs/decisions/028).
  state.traced(start.traceContext);
  const ordered = child.coordination.find((s) => s.kind === 'ordered_lock');
  if (ordered) {
    const key = computeKey(ordered, input, { reactor: child.name, step: undefined });
    const ticket = await deps.coordination.coordinator!.orderedTicket(key);
    state.setBackground({ jobs: 1, contention: 0, ordered: { key, nonce: ticket.nonce, epoch: ticket.epoch } });
  }
  await handOffToWorker(deps, state);
}
