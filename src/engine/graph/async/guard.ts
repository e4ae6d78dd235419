/**
 * The hand-off guard (R-12, SC-007): an async unit or child execution that declares a lock (or a
 * limit-1 semaphore) on a key its dispatching execution holds would wait for its own dispatcher.
 * The dispatch is refused before anything is persisted or queued.
 *
 * @module
 */
import { isExclusive } from '../../../coordination/limits.js';
import { computeKey } from '../../../coordination/scope.js';
import type { HolderInfo } from '../../../ports/coordinator.js';
import { HandOffRefusedError } from '../../../errors.js';
import type { RunState } from '../../run/run-state.js';
import type { Declared } from '../../model/async/child-declarations.js';

/** Where the dispatch happens and what it dispatches. */
export interface HandOff {
  /** The dispatching step's path and reactor. */
  readonly step: string;
  readonly reactor: string;
  readonly kind: 'step' | 'reactor';
  /** The declarations the unit will take, and what their keys are computed from. */
  readonly declared: readonly Declared[];
}

/**
 * The refusal when a declared exclusive key is in the execution's held-key registry (reactor-level
 * and step-level holds alike); undefined when the hand-off is safe. A key that cannot be computed
 * here is left to the unit to report.
 */
export async function refuseHandOff(run: RunState, handOff: HandOff): Promise<HandOffRefusedError | undefined> {
  for (const declared of handOff.declared) {
    const held = heldKey(run, declared);
    if (!held) continue;
    const { primitive, key } = held;
    const holder = await describeHolder(run, primitive, key);
    run.emit({ type: 'async.refused', step: handOff.step, reactor: handOff.reactor, primitive, key, holder });
    const by = declared.declaredBy === undefined ? {} : { declaredBy: declared.declaredBy };
    return new HandOffRefusedError({
      reactor: handOff.reactor,
      step: handOff.step,
      kind: handOff.kind,
      primitive,
      key,
      executionId: run.executionId,
      holder,
      ...by,
    });
  }
  return undefined;
}

/** The first exclusive key of `declared` the execution holds; keys that cannot be computed here are skipped. */
function heldKey(run: RunState, declared: Declared): { primitive: 'lock' | 'semaphore'; key: string } | undefined {
  for (const spec of declared.specs) {
    if ((spec.kind !== 'lock' && spec.kind !== 'semaphore') || !isExclusive(spec, declared.args, declared.keyScope))
      continue;
    let key: string;
    try {
      key = computeKey(spec, declared.args, declared.keyScope);
    } catch {
      continue;
    }
    if (run.heldKeys.has(`${spec.kind}:${key}`)) return { primitive: spec.kind, key };
  }
  return undefined;
}

async function describeHolder(run: RunState, primitive: 'lock' | 'semaphore', key: string): Promise<string> {
  const coordinator = run.async?.background?.coordinator;
  let holder: HolderInfo | undefined;
  try {
    if (primitive === 'lock') holder = (await coordinator?.lockState(key))?.holder;
    else
      holder = (await coordinator?.semaphoreState(key, 1))?.holders.find((h) =>
        h.holder.owner.startsWith(run.rootExecutionId),
      )?.holder;
  } catch {
    holder = undefined;
  }
  if (holder === undefined) return `held by execution ${run.rootExecutionId}`;
  const by =
    holder.step === undefined
      ? `reactor-level, reactor "${holder.reactor ?? run.reactor}"`
      : `by step "${holder.step}" of reactor "${holder.reactor ?? run.reactor}"`;
  return `held ${by}, owner ${holder.owner}`;
}
