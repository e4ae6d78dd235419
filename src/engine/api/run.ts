/**
 * `engine.run`: an execution in this process — or, for a reactor with `background: 'all'`, a
 * background start — after the shared acceptance (validation, idempotency claim).
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { withDeadline } from '../execution/deadline.js';
import { execute } from '../execution/execute.js';
import { InlineLease, markUnleased, type InlineLeaseDeps } from '../execution/inline-lease.js';
import { handOffToWorker, startBackground } from '../jobs/start.js';
import type { RunResult } from '../model/results.js';
import type { RunState } from '../run/run-state.js';
import { accept, type AcceptDeps } from './accept.js';
import type { Accepted } from './idempotency.js';
import { needQueue, type EngineParts } from './parts.js';
import type { InternalRunOptions, RunOptions } from './types.js';

/** What {@link runReactor} needs from the engine. */
export type RunDeps = AcceptDeps &
  Pick<EngineParts, 'store' | 'states' | 'background' | 'instrument' | 'inlineLeases' | 'inflight' | 'cancels'>;

/** Runs `reactor` with `input` in this process (in the background for `background: 'all'`) and returns its result. */
export function runReactor(
  deps: RunDeps,
  reactor: AnyReactorDefinition,
  input: unknown,
  options: RunOptions & InternalRunOptions = {},
): Promise<RunResult> {
  const all = reactor.background === 'all';
  return accept(deps, reactor, input, options, all ? 'pending' : 'running', (accepted) =>
    all ? startAll(deps, reactor, accepted) : runInline(deps, reactor, accepted),
  );
}

/** The accepted execution of a `background: 'all'` reactor, started on the queue. */
async function startAll(deps: RunDeps, reactor: AnyReactorDefinition, accepted: Accepted): Promise<RunResult> {
  const { executionId, input, key, retryOf, links, tags } = accepted;
  const plan = { delayMs: 0, ...(tags === undefined ? {} : { tags }) };
  return startBackground(needQueue(deps), reactor, executionId, input, key, retryOf, links, plan);
}

/** The accepted execution, run here: traced, under its liveness lease where it needs one, reachable by `cancel`. */
async function runInline(deps: RunDeps, reactor: AnyReactorDefinition, accepted: Accepted): Promise<RunResult> {
  const { executionId, input, key, retryOf, links, tags } = accepted;
  const state = deps.states.newState({
    executionId,
    rootExecutionId: executionId,
    reactor: reactor.name,
    contract: reactor.contract,
    input,
    idempotencyKey: key,
    retryOf,
    definition: reactor,
    tags,
  });
  const abort = new AbortController();
  // A sleep longer than maxInlineSleepMs hands off too, when there is a queue (decision 077).
  state.bindWork({ sleepHandOff: deps.background !== undefined });
  const handOff =
    reactor.background === undefined && !state.sleepHandOff
      ? undefined
      : (s: RunState) => handOffToWorker(needQueue(deps), s);
  const scope = {
    kind: 'run',
    mode: 'inline',
    executionId,
    rootExecutionId: executionId,
    reactor: reactor.name,
    ...(links === undefined ? {} : { links }),
  } as const;
  const go = (): Promise<RunResult> =>
    deps.instrument.traced(scope, (traceContext) => {
      state.traced(traceContext);
      return withDeadline(state, reactor, abort, () => execute(state, reactor, abort, handOff));
    });
  // With a store and a coordinator other processes share, the run holds its liveness lease (decision 066);
  // on a shared store without that, its records say it is unleased (no sweep takes it for a worker's).
  const promise = deps.inlineLeases
    ? runLeased(deps.inlineLeases, state, abort, go)
    : deps.store.processLocal === true
      ? go()
      : (markUnleased(state, (record) => deps.store.save(record)), go());
  deps.inflight.set(executionId, { abort, done: promise });
  deps.cancels.listen();
  try {
    return await promise;
  } finally {
    deps.inflight.delete(executionId);
  }
}

/**
 * Runs an inline execution under its liveness lease (decision 066): taken before its first record
 * write, renewed while it runs, released by its terminal write or at its end. A lost lease stops
 * the run (its signal is aborted, nothing more is written); without a lease it runs marked unleased.
 */
async function runLeased(
  deps: InlineLeaseDeps,
  state: RunState,
  abort: AbortController,
  go: () => Promise<RunResult>,
): Promise<RunResult> {
  const lease = await InlineLease.take(deps, state.executionId);
  if (!lease) {
    markUnleased(state, (record) => state.store.save(record));
    return go();
  }
  lease.bind(state);
  const relay = (): void => abort.abort(lease.root.signal.reason);
  lease.root.signal.addEventListener('abort', relay, { once: true });
  try {
    return await go();
  } finally {
    lease.root.signal.removeEventListener('abort', relay);
    await lease.end();
  }
}
