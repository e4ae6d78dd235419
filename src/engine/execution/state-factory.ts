/**
 * The engine's factory of run states: every {@link RunState} of an engine is built here, bound to
 * the engine's ports, its {@link Admitter}, its {@link SettleListener} and its async port, and —
 * for an execution whose worker job runs in this process — to that job's lease (decision 064).
 *
 * @module
 */
import type { AsyncPort } from '../run/async/port.js';
import { RunState, type Admitter, type JobBinding, type RunStateInit, type SettleListener } from '../run/run-state.js';
import type { NewState } from './new-state.js';

/** The part of {@link RunStateInit} every state of one engine shares: its ports and tunables. */
export type StateBase = Pick<
  RunStateInit,
  | 'store'
  | 'interruptClaims'
  | 'eventWaits'
  | 'onEventWaitsParked'
  | 'clock'
  | 'hub'
  | 'logger'
  | 'maxConcurrency'
  | 'checkpointIntervalMs'
  | 'maxTraceEntries'
  | 'maxInlineSleepMs'
  | 'queue'
  | 'instrument'
  | 'worker'
  | 'published'
>;

/** What {@link StateFactory} binds every state to. */
export interface StateFactoryDeps {
  readonly base: StateBase;
  /** Takes every state's coordination declarations. */
  readonly admitter: Admitter;
  /** Told of every terminal record a state saves. */
  readonly settleListener: SettleListener;
}

/** Builds the run states of one engine. */
export class StateFactory {
  readonly #deps: StateFactoryDeps;
  #async: AsyncPort | undefined;
  /**
   * The lease bindings of the jobs this process runs now, by execution id: the background path
   * registers each job's binding here, and a worker-mode state of that execution binds to it.
   */
  readonly liveJobs = new Map<string, JobBinding>();

  /** `deps`: what every state is bound to; the async port follows with {@link useAsync}. */
  constructor(deps: StateFactoryDeps) {
    this.#deps = deps;
  }

  /**
   * Sets the async port every state built from now on gets. Called once, before the first state:
   * the port carries the background deps, which carry {@link newState}, so it comes after them.
   */
  useAsync(port: AsyncPort): void {
    this.#async = port;
  }

  /** Builds the state of an execution (a property, so it can be handed on as a function). */
  readonly newState: NewState = (init) => {
    const { base, admitter, settleListener } = this.#deps;
    // Object.assign, not a spread of two objects: the spread built a slow dictionary-mode object per run (docs/decisions/030).
    const state = new RunState(Object.assign({ admitter, async: this.#async, settleListener }, base, init));
    // A state of an execution whose job runs here writes under that job's lease (decision 064).
    const job = init.mode === 'worker' && this.liveJobs.size > 0 ? this.liveJobs.get(init.executionId) : undefined;
    if (job) state.bindJob(job);
    return state;
  };
}
