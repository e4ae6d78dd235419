/**
 * Starts an `asyncReactor` child: an independent execution (its own root, so its own coordination
 * owner), linked to its dispatcher by `parentId`, accepted like a background start.
 *
 * @module
 */
import { computeKey } from '../../../coordination/scope.js';
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import { handOffToWorker, type BackgroundDeps } from '../../jobs/background.js';
import type { TraceContext } from '../../ports/store.js';

/** Persists the child as pending (an ordered-lock position taken now, like any background start) and enqueues its first job; a child that exists already is left alone. */
export async function startChild(
  deps: BackgroundDeps,
  child: AnyReactorDefinition,
  childId: string,
  input: Record<string, unknown>,
  parentId: string,
  traceContext?: TraceContext,
): Promise<void> {
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
  });
  // The child's jobs join its dispatcher's trace (docs/decisions/028).
  state.traceContext = traceContext;
  const ordered = child.coordination.find((s) => s.kind === 'ordered_lock');
  if (ordered) {
    const key = computeKey(ordered, input, { reactor: child.name, step: undefined });
    const ticket = await deps.coordination.coordinator!.orderedTicket(key);
    state.background = { jobs: 1, contention: 0, ordered: { key, nonce: ticket.nonce, epoch: ticket.epoch } };
  }
  await handOffToWorker(deps, state);
}
