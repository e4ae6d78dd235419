/**
 * A step's `timeout`: one attempt of its body raced against a deadline on the engine's clock
 * (docs/time.md, docs/decisions/075). At the deadline the attempt's signal is aborted with a
 * {@link StepTimeoutError} and the attempt fails at once, whether the body settles or not; a
 * body that settles later is ignored.
 *
 * @module
 */
import { StepTimeoutError } from '../../errors.js';
import type { StepRecord } from '../../ports/store.js';
import type { RunState } from './run-state.js';

/** The attempt being timed: its step, number and the signal it runs under (frame stop, lost holds). */
export interface TimedAttempt {
  readonly path: string;
  readonly reactor: string;
  readonly attempt: number;
  readonly signal: AbortSignal;
}

/** Marks the deadline's side of the race (no body result can be it). */
const EXPIRED: unique symbol = Symbol('expired');

/**
 * The attempt a step resumes: a `running` record with an attempt start time is an attempt a
 * worker began and did not finish (its job was redelivered), resumed under the same number.
 * Undefined: none to resume.
 */
export function resumedAttempt(recorded: StepRecord | undefined): number | undefined {
  return recorded?.status === 'running' && recorded.attemptStartedAt !== undefined ? recorded.attempts : undefined;
}

/**
 * Runs one attempt's body (`start`, given the signal it must see as `ctx.signal`) under
 * `timeoutMs`. Records the attempt's start in the step record (carried by the next checkpoint)
 * or, resuming a recorded attempt, measures from its recorded start. Returns the body's result,
 * or the {@link StepTimeoutError} the attempt failed with.
 */
export async function runTimed<T>(
  run: RunState,
  timeoutMs: number,
  where: TimedAttempt,
  start: (signal: AbortSignal) => Promise<T>,
): Promise<T | StepTimeoutError> {
  const startedAt = startOf(run, where);
  run.setStep(where.path, { status: 'running', attempts: where.attempt, attemptStartedAt: startedAt });
  const error = new StepTimeoutError({ step: where.path, attempt: where.attempt, timeoutMs });
  const remaining = startedAt + timeoutMs - run.clock.now();
  if (remaining <= 0) return timedOut(run, where, error, false);
  const controller = new AbortController();
  const follow = (): void => controller.abort(where.signal.reason);
  if (where.signal.aborted) follow();
  else where.signal.addEventListener('abort', follow, { once: true });
  const deadline = deadlineAfter(run, remaining);
  let settled = false;
  const body = start(controller.signal).finally(() => (settled = true));
  const first = await Promise.race([body, deadline.expired]);
  deadline.clear();
  where.signal.removeEventListener('abort', follow);
  if (first !== EXPIRED) return first;
  controller.abort(error);
  await nextTurn();
  if (!settled) ignoreLate(run, where, body);
  return timedOut(run, where, error, !settled);
}

/**
 * When the attempt's time started: the recorded start of a resumed attempt, or of the attempt
 * just before it when a lost worker ran that one (its deadline survives the redelivery,
 * docs/decisions/098), else now.
 */
function startOf(run: RunState, where: TimedAttempt): number {
  const recorded = run.stepRecord(where.path);
  if (recorded?.attemptStartedAt === undefined) return run.clock.now();
  if (resumedAttempt(recorded) === where.attempt) return recorded.attemptStartedAt;
  const last = recorded.runs?.[recorded.runs.length - 1];
  const inherited = last?.outcome === 'worker_lost' && last.attempt === where.attempt - 1;
  return inherited ? recorded.attemptStartedAt : run.clock.now();
}

/** A one-shot timer on the engine's clock (so a manual clock drives it). */
function deadlineAfter(run: RunState, ms: number): { readonly expired: Promise<typeof EXPIRED>; clear(): void } {
  let cancel: (() => void) | undefined;
  const expired = new Promise<typeof EXPIRED>((resolve) => {
    cancel = run.clock.every(ms, () => {
      cancel?.();
      resolve(EXPIRED);
    });
  });
  return { expired, clear: () => cancel?.() };
}

/** One event-loop turn: what a body does right when its signal aborts (reject, clean up) happens first. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A body still running past its failed attempt: whatever it settles with is ignored (and logged). */
function ignoreLate(run: RunState, where: TimedAttempt, body: Promise<unknown>): void {
  void body.then(
    () =>
      run
        .stepLogger(where.path)
        .warn(
          { attempt: where.attempt },
          'a timed-out step body settled after its attempt failed; its result is ignored',
        ),
    () => undefined,
  );
}

/** Reports the timeout (unless the job stopped: then nothing is reported) and returns its error. */
function timedOut(
  run: RunState,
  where: TimedAttempt,
  error: StepTimeoutError,
  ignoredSignal: boolean,
): StepTimeoutError {
  if (!run.stopped)
    run.emit({
      type: 'step.timed_out',
      step: where.path,
      attempt: where.attempt,
      timeoutMs: error.details.timeoutMs,
      ignoredSignal,
      reactor: where.reactor,
    });
  return error;
}
