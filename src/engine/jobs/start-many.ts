/**
 * A bulk background start (`engine.startMany`): the records of many accepted executions written
 * at once, then their first jobs enqueued in one `JobQueue.enqueueMany` (BullMQ `addBulk`),
 * each execution in its own `enqueue` scope (docs/decisions/079).
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { enqueueScope, executionJob, jobOptionsOf } from '../execution/next-job.js';
import type { StartPlan } from '../model/background.js';
import { noInstrument } from '../model/instrument.js';
import type { RunResult } from '../model/results.js';
import type { EnqueueEntry } from '../../ports/queue.js';
import type { RunState } from '../run/run-state.js';
import type { BackgroundDeps } from './deps.js';
import { enqueueAll } from './fanout/dispatch.js';
import { queuedResult, startState } from './start.js';

/** One accepted execution of a bulk start: validated input, no idempotency key, no ordered lock. */
export interface BulkStart {
  readonly reactor: AnyReactorDefinition;
  readonly executionId: string;
  readonly input: Record<string, unknown>;
  readonly plan: StartPlan;
}

/**
 * Writes a pending record for each of `starts` (concurrently), then enqueues their first jobs
 * in one bulk call; resolves with their `queued` results, in order. A failed write or enqueue
 * rejects the call once every write has settled: the executions whose record was written and
 * whose job was not are left to the recovery sweep, as for a failed `start`.
 */
export async function startManyBackground(deps: BackgroundDeps, starts: readonly BulkStart[]): Promise<RunResult[]> {
  if (starts.length === 0) return [];
  const states = starts.map(({ reactor, executionId, input, plan }) => {
    const state = startState(deps, reactor, { executionId, input, plan });
    state.emit({ type: 'run.queued', jobId: firstJobId(state), delayMs: plan.delayMs, reason: 'start' });
    return state;
  });
  const flushed = settleable();
  const saved = states.map((state, i) => writeFirst(deps, state, starts[i]!.plan.delayMs, flushed.promise));
  const written = await Promise.allSettled(saved.map((s) => s.written));
  const entries: EnqueueEntry[] = states.flatMap((state, i) =>
    written[i]!.status === 'fulfilled' ? [firstEntry(state, starts[i]!.plan.delayMs)] : [],
  );
  try {
    await enqueueAll(deps.queue, entries);
    flushed.resolve();
  } catch (error) {
    flushed.reject(error);
  }
  const scopes = await Promise.allSettled(saved.map((s) => s.scope));
  const failure = scopes.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  return states.map(queuedResult);
}

/**
 * Opens `state`'s `enqueue` scope and writes its pending record in it; the scope ends once
 * `flushed` settles (the bulk enqueue). `written` settles with the write.
 */
function writeFirst(
  deps: BackgroundDeps,
  state: RunState,
  delayMs: number,
  flushed: Promise<void>,
): { readonly written: Promise<void>; readonly scope: Promise<void> } {
  const written = settleable();
  const next = { jobId: firstJobId(state), delayMs, reason: 'start' } as const;
  const scope = (deps.instrument ?? noInstrument).traced(enqueueScope(state, next), async (traceContext) => {
    state.traced(traceContext);
    try {
      await state.checkpoint('pending', {}, { withTrace: true });
      written.resolve();
    } catch (error) {
      written.reject(error);
      throw error;
    }
    await flushed;
  });
  scope.catch(() => undefined); // awaited (settled) by the caller
  return { written: written.promise, scope };
}

/** The first job of `state`, as one entry of the bulk enqueue. */
function firstEntry(state: RunState, delayMs: number): EnqueueEntry {
  return {
    job: executionJob(state.executionId, state.reactor),
    options: jobOptionsOf(state, { jobId: firstJobId(state), delayMs, reason: 'start' }),
  };
}

function firstJobId(state: RunState): string {
  return `${state.executionId}:1`;
}

/** A promise settled from outside (Node 20 has no `Promise.withResolvers`). */
function settleable(): { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  promise.catch(() => undefined); // observed by whoever awaits it
  return { promise, resolve, reject };
}
