/**
 * A sleep step inside a run (docs/time.md#sleeps, decision 077): its wake time is computed once,
 * when it starts, and kept in its step record (`running`, `wakeAt`); it completes once the engine
 * clock reaches it. In a worker it yields a {@link SleepWait} (the job parks the execution on a
 * delayed job, `jobs/sleep-park.ts`); inline it waits on the clock up to `maxInlineSleepMs`, then
 * hands the run off to a worker, or fails with `sleep_needs_worker` when it cannot.
 *
 * @module
 */
import type { SleepNode } from '../../dsl/definition.js';
import type { SleepResult } from '../../dsl/sleep.js';
import { ReactorError, SleepNeedsWorkerError, toError } from '../../errors.js';
import type { NodeOutcome } from '../model/outcome.js';
import { resolveArg, type ArgScope } from '../model/resolve-args.js';
import { errorSummary, type RunState } from '../run/run-state.js';
import { notStarted, type StepPlace } from '../run/step-runner.js';

/**
 * How close to its wake time a sleep in a worker waits in-process instead of parking, in ms; its
 * wake job may be delivered that much early (`EnqueueOptions.earlyMs`), so that fetching the job
 * and loading the record happen before the wake time, not after it (decision 093). A job
 * delivered earlier than this is an operator's early wake.
 */
export const SLEEP_WAKE_LEAD_MS = 50;

/** Runs a sleep node: completes at its wake time, or yields until then (see the module). */
export async function runSleep(
  run: RunState,
  node: SleepNode,
  place: StepPlace,
  scope: ArgScope,
): Promise<NodeOutcome> {
  const recorded = run.stepRecord(place.path);
  const entry = { step: place.path, undo: async () => undefined }; // a sleep has nothing to undo
  if (recorded?.status === 'completed') return { kind: 'success', value: recorded.result, entry };
  if (run.replayOnly) return { kind: 'skipped', value: undefined }; // a rollback replay: it never completed
  let wakeAt = recorded?.status === 'running' ? recorded.wakeAt : undefined;
  if (wakeAt === undefined) {
    try {
      wakeAt = wakeTimeOf(node, scope, run.clock.now(), place.path);
    } catch (error) {
      return notStarted(run, place.path, toError(error));
    }
    run.setStep(place.path, { status: 'running', attempts: 1, wakeAt });
    run.emit({ type: 'step.started', step: place.path, attempt: 1, reactor: place.reactor });
    run.emit({ type: 'step.sleeping', step: place.path, wakeAt, reactor: place.reactor });
  }
  const woken = run.sleepWoken === place.path;
  const remaining = wakeAt - run.clock.now();
  if (remaining <= 0 || woken) return woke(run, place, wakeAt);
  if (run.mode === 'worker' && remaining > SLEEP_WAKE_LEAD_MS)
    return {
      kind: 'yield',
      step: place.path,
      suspension: { kind: 'sleep', wait: { step: place.path, wakeAt }, delayMs: remaining },
    };
  if (run.mode !== 'worker' && remaining > run.maxInlineSleepMs) {
    if (run.sleepHandOff)
      return {
        kind: 'yield',
        step: place.path,
        suspension: { kind: 'sleep', wait: { step: place.path, wakeAt }, delayMs: 0 },
      };
    const error = new SleepNeedsWorkerError({
      step: place.path,
      sleepMs: remaining,
      maxInlineSleepMs: run.maxInlineSleepMs,
    });
    return failed(run, place, error);
  }
  // A timer may fire a millisecond before the wall clock reaches its time: wait out any rest.
  for (let rest = remaining; rest > 0; rest = wakeAt - run.clock.now()) {
    await run.clock.sleep(rest, place.signal);
    if (place.signal.aborted) return failed(run, place, abortError(place.signal.reason));
  }
  return woke(run, place, wakeAt);
}

/** The wake time of a sleep starting `now`: `for` after now, or its `until` argument as epoch ms. */
function wakeTimeOf(node: SleepNode, scope: ArgScope, now: number, path: string): number {
  const spec = node.sleep;
  if (spec.kind === 'for') return now + spec.ms;
  const value = resolveArg(node.args!['until']!, scope, path, 'until');
  const at = value instanceof Date ? value.getTime() : value;
  if (typeof at === 'number' && Number.isFinite(at)) return Math.ceil(at);
  throw new ReactorError(
    'sleep_until_invalid',
    `sleep "${path}": until must give a valid Date or epoch milliseconds (got ${value instanceof Date ? 'an invalid Date' : (JSON.stringify(value) ?? typeof value)})`,
    { details: { step: path } },
  );
}

function woke(run: RunState, place: StepPlace, wakeAt: number): NodeOutcome {
  const wokeAt = run.clock.now();
  const result: SleepResult = { wakeAt, wokeAt, early: wokeAt < wakeAt };
  run.setStep(place.path, { status: 'completed', attempts: 1, result });
  run.emit({ type: 'step.woke', step: place.path, wakeAt, early: result.early, reactor: place.reactor });
  run.emit({ type: 'step.succeeded', step: place.path, attempt: 1, reactor: place.reactor });
  return { kind: 'success', value: result, entry: { step: place.path, undo: async () => undefined } };
}

function failed(run: RunState, place: StepPlace, error: Error): NodeOutcome {
  run.setStep(place.path, { status: 'failed', attempts: 1, error: errorSummary(error) });
  run.emit({
    type: 'step.failed',
    step: place.path,
    attempt: 1,
    error: errorSummary(error),
    started: true,
    reactor: place.reactor,
  });
  return { kind: 'failure', step: place.path, error, validation: [], compensate: undefined };
}

/** Why an inline sleep stopped early: the frame's abort reason (a cancel, a lost hold, a sibling's failure). */
function abortError(reason: unknown): Error {
  return toError(reason);
}
