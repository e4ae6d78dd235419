/**
 * The debounce slot of `engine.start(..., { debounce })` (docs/decisions/086): per reactor and
 * debounce key, the latest start holds a lock for its window. A start written and enqueued (its
 * first job delayed by the window) takes the slot; finding it held by an earlier start, it ends
 * that one `cancelled` (superseded, when it has not begun), frees the slot from it and takes it.
 * Concurrent starts settle it between them the same way: the last to take the slot runs.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { ReactorError, SupersededError } from '../../errors.js';
import { supersedeExecution, type OperationsDeps } from '../execution/operations.js';
import { debounceKey } from '../model/keys.js';
import type { Coordinator } from '../../ports/coordinator.js';

/** Rounds of take / supersede / free before a start gives up on the slot (each round some start wins it). */
const MAX_ROUNDS = 64;

/** The coordinator debounce slots live on; `coordinator_missing` (before anything is written) without one. */
export function needDebounceSlots(deps: Pick<OperationsDeps, 'coordination'>): Coordinator {
  const coordinator = deps.coordination.coordinator;
  if (!coordinator)
    throw new ReactorError('coordinator_missing', 'a debounced start needs a coordinator (its debounce slot)');
  return coordinator;
}

/**
 * Makes `executionId` (a start just written and enqueued) the latest debounced start of
 * `reactor` with `key` for `windowMs`; an earlier start that has not begun ends superseded by it.
 */
export async function takeDebounceSlot(
  deps: OperationsDeps,
  reactor: AnyReactorDefinition,
  executionId: string,
  debounce: { readonly key: string; readonly windowMs: number },
): Promise<void> {
  const coordinator = needDebounceSlots(deps);
  const slot = debounceKey(reactor.name, debounce.key);
  const holder = { owner: `debounce:${executionId}`, executionId };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const taken = await coordinator.lockAcquire({ key: slot, holder, ttlMs: debounce.windowMs, unfenced: true });
    if (taken.acquired) return;
    const earlier = taken.holder;
    if (earlier?.executionId !== undefined && earlier.executionId !== executionId) {
      const cause = new SupersededError({
        executionId: earlier.executionId,
        supersededBy: executionId,
        debounceKey: debounce.key,
      });
      await supersedeExecution(deps, earlier.executionId, cause);
    }
    if (earlier) await coordinator.lockRelease(slot, earlier.owner);
  }
  // Past the bound (as many starts won the slot meanwhile) this start runs without the slot: a
  // later start finds its successor there, not it.
}
