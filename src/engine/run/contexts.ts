/**
 * Which execution a step context belongs to, so a direct invocation given a `ctx` can join that
 * execution (its owner, held-key registry and trace). The run rides on the context itself, in a
 * private field: nothing to look up or clean up, invisible to the hook (its own properties are the
 * {@link StepContext}'s, so a spread copy reads the same, and belongs to no run), and collected
 * with the context. A weak map from context to run cost more per step than a trivial body: an
 * identity hash and an ephemeron entry for every context.
 *
 * @module
 */
import type { Logger, StepContext } from '../../dsl/context.js';
import type { RunState } from './run-state.js';

/** What a context is built from: everything but `progress`, which reports to the run. */
export type ContextFields = Omit<StepContext, 'progress'>;

/** A step context handed out by a run of this process. */
class HookContext implements StepContext {
  readonly executionId: string;
  readonly rootExecutionId: string;
  readonly reactor: string;
  readonly step: string;
  readonly attempt: number;
  readonly signal: AbortSignal;
  readonly logger: Logger;
  readonly heldKeys: ReadonlySet<string>;
  readonly fencingToken: (key?: string) => string | undefined;
  readonly progress: (data: unknown) => void;
  readonly #run: RunState;

  constructor(fields: ContextFields, run: RunState) {
    this.executionId = fields.executionId;
    this.rootExecutionId = fields.rootExecutionId;
    this.reactor = fields.reactor;
    this.step = fields.step;
    this.attempt = fields.attempt;
    this.signal = fields.signal;
    this.logger = fields.logger;
    this.heldKeys = fields.heldKeys;
    this.fencingToken = fields.fencingToken;
    const { step, attempt } = fields;
    this.progress = (data) => run.reportProgress(step, attempt, data);
    this.#run = run;
  }

  /** The run `ctx` was handed out by, if it is a context of this kind. */
  static runOf(ctx: StepContext): RunState | undefined {
    return #run in ctx ? ctx.#run : undefined;
  }
}

/** `fields` as a context handed to a hook of `run`. */
export function bindContext(fields: ContextFields, run: RunState): StepContext {
  return new HookContext(fields, run);
}

/** The execution `ctx` was handed out by, if it came from this process. */
export function runOfContext(ctx: StepContext): RunState | undefined {
  return HookContext.runOf(ctx);
}
