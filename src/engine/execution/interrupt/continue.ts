/**
 * After an accepted resume: continue the execution in this process, or hand it to a worker (the
 * interrupt asks for it, or the reactor's own lock / semaphore / rate limit is busy right now).
 *
 * @module
 */
import type { CoordinationSpec } from '../../../dsl/coordination.js';
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import { ContentionError, RateLimitedError, ReactorError } from '../../../errors.js';
import type { EventHub } from '../../model/events.js';
import { finish, inlineDriver, type CoordinationDeps } from '../execute.js';
import { runSlice } from '../slice.js';
import { livenessKey } from '../../model/keys.js';
import { NO_JOB } from '../../model/background.js';
import type { NewState } from '../new-state.js';
import { nextJobDeferred } from '../next-job.js';
import type { Clock } from '../../../ports/clock.js';
import type { JobQueue } from '../../../ports/queue.js';
import type { ExecutionRecord, Store } from '../../../ports/store.js';
import type { RunResult } from '../../model/results.js';
import type { RunState } from '../../run/run-state.js';
import { noInstrument, type Instrument } from '../../model/instrument.js';
import { armStateDeadline } from '../deadline.js';
import type { InlineLease } from '../inline-lease.js';

/** What continuing a resumed execution needs from the engine. */
export interface ContinueDeps {
  readonly store: Store;
  readonly clock: Clock;
  readonly hub: EventHub;
  readonly queue: JobQueue | undefined;
  readonly coordination: CoordinationDeps;
  readonly newState: NewState;
  /** Inline runs of this process (so `engine.cancel` reaches a resumed one). */
  readonly live: Map<string, { readonly abort: AbortController; readonly done: Promise<RunResult> }>;
  /** Brackets an inline resume in a `run` scope (a span in the execution's trace). Default: none. */
  readonly instrument?: Instrument;
}

const LIVENESS_TTL_MS = 60_000;

/**
 * Runs `fn` holding the execution's liveness lock (no worker works on it meanwhile); waits up to
 * about 2 s for a worker's job to finish. `undefined` when the lock stayed busy.
 */
export async function withLiveness<T>(
  deps: Pick<ContinueDeps, 'coordination' | 'clock'>,
  executionId: string,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  const coordinator = deps.coordination.coordinator;
  if (!coordinator)
    throw new ReactorError('coordinator_missing', 'resuming an execution needs a coordinator (liveness locks)');
  const key = livenessKey(executionId);
  const owner = `resume:${executionId}:${crypto.randomUUID()}`;
  for (let i = 0; ; i++) {
    const lock = await coordinator.lockAcquire({ key, holder: { owner, executionId }, ttlMs: LIVENESS_TTL_MS });
    if (lock.acquired) break;
    if (i >= 100) return undefined;
    await deps.clock.sleep(20);
  }
  const stop = deps.clock.every(
    LIVENESS_TTL_MS / 3,
    () => void coordinator.lockExtend(key, owner, LIVENESS_TTL_MS).catch(() => undefined),
  );
  try {
    return await fn();
  } finally {
    stop();
    await coordinator.lockRelease(key, owner).catch(() => undefined);
  }
}

function stateOf(
  deps: ContinueDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  mode: 'inline' | 'worker',
): RunState {
  return deps.newState({
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: reactor.name,
    contract: reactor.contract,
    input: record.input as Record<string, unknown>,
    idempotencyKey: record.idempotencyKey,
    resume: record,
    mode,
  });
}

/**
 * Emits what continued the execution, on its state, where it continues (`background`: in a
 * worker). Default: `interrupt.resumed` at `step`; an operator's action on a failed step passes its own.
 */
export type Announce = (state: RunState, mode: 'inline' | 'background') => void;

const resumedAt =
  (step: string): Announce =>
  (state, mode) =>
    state.emit({ type: 'interrupt.resumed', step, mode });

/** Persists the resumed execution as pending and enqueues its next job; the caller gets `queued`. */
export async function toWorker(
  deps: ContinueDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  step: string,
  reason: 'resume' | 'busy',
  announce: Announce = resumedAt(step),
): Promise<RunResult> {
  const handOff = await prepareWorker(deps, reactor, record, step, reason, announce);
  await handOff.enqueue();
  return handOff.result;
}

/**
 * Persists the resumed execution as pending; `enqueue` adds its job. Call `enqueue` after
 * releasing the liveness lock, or the worker that takes the job at once finds it busy and
 * comes back only when the lock could have lapsed.
 */
export async function prepareWorker(
  deps: ContinueDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  step: string,
  reason: 'resume' | 'busy',
  announce: Announce = resumedAt(step),
): Promise<{ readonly result: RunResult; enqueue(): Promise<void> }> {
  const state = stateOf(deps, reactor, record, 'worker');
  announce(state, 'background');
  // A resumed execution that never had a job (it paused inline) gets job 1.
  const enqueue = await nextJobDeferred({ queue: deps.queue! }, state, { reason, none: NO_JOB });
  const result: RunResult = {
    status: 'queued',
    executionId: state.executionId,
    reactor: state.reactor,
    trace: state.trace,
    steps: state.steps,
    rollbackFailures: state.rollbackFailures,
    replay: false,
  };
  return { result, enqueue };
}

/** With a queue, a busy reactor-level lock or semaphore is not waited for inline: the resume goes to a worker. */
const noWait = (spec: CoordinationSpec): CoordinationSpec =>
  spec.kind === 'lock' || spec.kind === 'semaphore' ? { ...spec, waitMs: 0 } : spec;

/**
 * Continues a resumed execution in this process (its record, saved `running`, holds the accepted
 * payload). With `lease` (the execution's inline liveness lease, taken by the caller) its writes
 * are fenced and marked by it as an inline run's, a lost lease stops it, and the lease is given
 * back at its end: no other process continues it meanwhile, and the sweep leaves it alone.
 */
export async function continueInline(
  deps: ContinueDeps,
  reactor: AnyReactorDefinition,
  record: ExecutionRecord,
  step: string,
  announce: Announce = resumedAt(step),
  lease?: InlineLease,
): Promise<RunResult> {
  const state = stateOf(deps, reactor, record, 'inline');
  const root = new AbortController();
  lease?.bind(state);
  const relay = (): void => root.abort(lease?.root.signal.reason);
  lease?.root.signal.addEventListener('abort', relay, { once: true });
  const disarm = armStateDeadline(state, reactor, root); // past the reactor's deadline it rolls back (decision 081)
  const scope = {
    kind: 'run',
    mode: 'inline',
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: record.reactor,
    ...(record.traceContext === undefined ? {} : { traceContext: record.traceContext }),
  } as const;
  const done = (deps.instrument ?? noInstrument).traced(scope, async (traceContext): Promise<RunResult> => {
    state.traced(traceContext);
    const driver = inlineDriver(state, reactor, {
      root,
      specs: deps.queue ? (specs) => specs.map(noWait) : undefined,
      refused: (error) =>
        deps.queue && (error instanceof ContentionError || error instanceof RateLimitedError)
          ? toWorker(deps, reactor, record, step, 'busy', announce)
          : undefined,
      admitted: () => announce(state, 'inline'),
      frame: { def: reactor, input: state.input, prefix: '', signal: root.signal },
      // An inline resume pauses again (at an interrupt, or on a failure); it cannot wait any other way.
      otherwise: (_suspension, at) =>
        finish(state, {
          status: 'failed',
          step: at,
          error: new ReactorError('unexpected_yield', 'an inline resume cannot yield'),
          validation: [],
        }),
    });
    return runSlice(state, reactor, driver);
  });
  deps.live.set(record.id, { abort: root, done });
  try {
    return await done;
  } finally {
    disarm();
    deps.live.delete(record.id);
    lease?.root.signal.removeEventListener('abort', relay);
    await lease?.end();
  }
}
