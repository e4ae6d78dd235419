/**
 * Which execution a step context belongs to, so a direct invocation given a `ctx` can join that
 * execution (its owner, held-key registry and trace). Weak: a context outliving its run is
 * collected with it.
 *
 * @module
 */
import type { StepContext } from '../../dsl/context.js';
import type { RunState } from './run-state.js';

const owners = new WeakMap<StepContext, RunState>();

/** Records that `ctx` was handed to a hook of `run`; returns `ctx`. */
export function bindContext(ctx: StepContext, run: RunState): StepContext {
  owners.set(ctx, run);
  return ctx;
}

/** The execution `ctx` was handed out by, if it came from this process. */
export function runOfContext(ctx: StepContext): RunState | undefined {
  return owners.get(ctx);
}
