/**
 * The engine's admitter: the one object every execution of an engine takes its coordination
 * declarations through (reactor level, steps, composed children, rollback re-takes, invocations
 * inside a run). `createEngine` builds it once, over the engine's coordination deps, and each
 * run state calls it from {@link RunState.admit}.
 *
 * @module
 */
import type { Admission } from '../../coordination/admit.js';
import type { CoordinationSpec } from '../../dsl/coordination.js';
import type { Admit, Admitter, RunState } from '../run/run-state.js';
import { admitWork, type CoordinationDeps } from './execute.js';

/** Admits the work of any execution of one engine over its coordinator and rate limits (see {@link admitWork}). */
export class CoordinationAdmitter implements Admitter {
  readonly #deps: CoordinationDeps;

  /** `deps`: the engine's coordinator, rate limits, wake-on-release hook and worker wait. */
  constructor(deps: CoordinationDeps) {
    this.#deps = deps;
  }

  /** Takes `specs` for work of `state`; in worker mode contention parks instead of waiting. */
  admit(
    state: RunState,
    specs: readonly CoordinationSpec[],
    args: unknown,
    where: Parameters<Admit>[2],
  ): Promise<Admission> {
    return admitWork(state, this.#deps, specs, args, where);
  }
}
