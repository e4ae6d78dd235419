/**
 * Runs one step: resolve and validate its arguments, then attempt the body with retries. The
 * one place where exceptions become outcomes.
 *
 * @module
 */
import type { Admission } from '../../coordination/admit.js';
import { isExclusive } from '../../coordination/limits.js';
import { computeKey } from '../../coordination/scope.js';
import type { WorkOutcome } from '../../coordination/holds.js';
import type { CoordinationSpec } from '../../dsl/coordination.js';
import type { BodyNode } from '../../dsl/definition.js';
import { validateContract } from '../../dsl/contract.js';
import { retryDelay } from '../../dsl/retry.js';
import { signalKind, type Failure, type Halt, type Skipped, type Success } from '../../dsl/signals.js';
import {
  ErrorCode,
  NonRetryableError,
  OrderedLockStaleError,
  ReactorError,
  StepTimeoutError,
  ValidationError,
  toError,
} from '../../errors.js';
import { capError, contendedKey, declaredTimeout, noteWait, timedOut, timeoutError } from '../model/contention-wait.js';
import { dropTicket, keepTicket, keptTicket } from './step-tickets.js';
import { stepContext } from './hooks.js';
import { runGuardedRollback } from './rollback-guard.js';
import { resumedAttempt, runTimed } from './step-timeout.js';
import { stepEnd } from '../model/instrument.js';
import type { NodeOutcome } from '../model/outcome.js';
import type { AttemptOutcome, AttemptRun, StepRecord } from '../../ports/store.js';
import { errorSummary, type RunState } from './run-state.js';

/** A step body. */
export type Body = (args: unknown, ctx: unknown) => unknown;
/** A body's outcome, classified. */
export type Classified =
  | { readonly kind: 'success'; readonly value: unknown }
  | { readonly kind: 'skipped'; readonly value: unknown; readonly reason: string }
  | { readonly kind: 'halt'; readonly reason: string; readonly data?: unknown }
  | { readonly kind: 'failure'; readonly error: Error; readonly retryable: boolean };

/** Where a step runs: its display path and its reactor. */
export interface StepPlace {
  readonly path: string;
  readonly reactor: string;
  /** Aborted when the step's frame stops early. */
  readonly signal: AbortSignal;
}

/**
 * Runs a step node with already resolved arguments (`resolve` throws for unresolvable ones).
 * Invalid or unresolvable arguments fail before the body, without retry or compensation.
 */
export async function runStepNode(
  run: RunState,
  node: BodyNode,
  place: StepPlace,
  resolve: () => Record<string, unknown>,
): Promise<NodeOutcome> {
  if (run.replayOnly && !['completed', 'skipped'].includes(run.stepRecord(place.path)?.status ?? ''))
    return { kind: 'skipped', value: undefined };
  let args: Record<string, unknown>;
  try {
    // Arguments an operator gave the step (`engine.retryStep`) replace its own (validated when given).
    args = (run.stepArgs[place.path] as Record<string, unknown> | undefined) ?? resolve();
    if (node.contract) args = await validated(node, place, args);
  } catch (error) {
    const earlier = run.stepRecord(place.path);
    // A lost worker's attempt counts as a started body (decision 098): the step is compensated.
    if (earlier !== undefined && lostAttempt(earlier))
      return failedAfterStart(run, node, place, {}, earlier.attempts, toError(error));
    return notStarted(run, place.path, toError(error));
  }
  const recorded = run.stepRecord(place.path);
  if (recorded?.status === 'completed' || recorded?.status === 'skipped')
    return fromRecord(run, node, place, args, recorded);
  const first = nextAttempt(recorded);
  const scope = {
    kind: 'step',
    executionId: run.executionId,
    reactor: place.reactor,
    step: place.path,
    attempt: first,
  } as const;
  return run.instrument.traced(scope, () => attempts(run, node, place, args, first), stepEnd);
}

/**
 * The number of the next attempt of a step, from its record: a redelivered job resumes the attempt
 * its record shows running (a step with a timeout, decision 075), a start carried by the last
 * checkpoint is that attempt (decision 098), a retrying step (or one with a lost worker's attempt)
 * goes on with the next number.
 */
export function nextAttempt(recorded: StepRecord | undefined): number {
  return (
    resumedAttempt(recorded) ??
    recorded?.started?.attempt ??
    (recorded?.status === 'retrying' ? recorded.attempts + 1 : 1)
  );
}

/** True when the record holds an attempt a lost worker may have run (decision 098). */
function lostAttempt(recorded: StepRecord): boolean {
  return (
    recorded.runs?.some(
      (r) => r.outcome === 'worker_lost' || r.outcome === 'may_have_run' || r.outcome === 'interrupted',
    ) ?? false
  );
}

/** The attempts of a step's body from `first` on, with its coordination around each. */
async function attempts(
  run: RunState,
  node: BodyNode,
  place: StepPlace,
  args: Record<string, unknown>,
  first: number,
): Promise<NodeOutcome> {
  // A worker job's attempts, logged into the step record with the record of their outcome
  // (decision 098); an inline run's are in the trace its caller gets (the hot path logs nothing).
  const ran: AttemptRun[] | undefined = run.mode === 'worker' ? [] : undefined;
  const logged = <T>(outcome: T): T => {
    if (ran !== undefined && ran.length > 0) run.logAttempt(place.path, ran.splice(0));
    return outcome;
  };
  for (let attempt = first; ; attempt++) {
    let guarded: Guarded | undefined;
    if (node.coordination.length > 0) {
      const admission = await admitStep(run, node, place, args);
      if (admission.kind === 'refused') {
        // In a worker, a busy key parks the execution (the body never started; nothing is compensated; an ordered position is kept),
        // under contentionCap and until the wait has lasted its declaration's contentionTimeout (docs/decisions/068, 097).
        const error = refusalInWorker(run, node.coordination, admission.error, {
          args,
          reactor: place.reactor,
          step: place.path,
        });
        if (error === undefined)
          return { kind: 'yield', step: place.path, suspension: { kind: 'contention', error: admission.error } };
        dropTicket(run, place.path);
        // A position of a batch that was drained, reset or passed over: the step is skipped, like a strict chain (gate parity).
        if (error instanceof OrderedLockStaleError) return skippedAtGate(run, place, attempt, 'ordered_lock_stale');
        // An earlier attempt ran the body: the step started, so it is compensated like any failure.
        if (attempt > 1) return logged(failedAfterStart(run, node, place, args, attempt - 1, error));
        return notStarted(run, place.path, error);
      }
      if (admission.kind === 'halt') {
        dropTicket(run, place.path);
        return logged(skippedAtGate(run, place, attempt, admission.reason));
      }
      guarded = admission;
    }
    // A worker job that stops (shutdown deadline, lost lease) starts no body (docs/decisions/069).
    const stoppedBefore = run.stopped;
    if (stoppedBefore) {
      await guarded?.release('yielded');
      throw stoppedBefore;
    }
    // Durable mode: the attempt's start is on the record before its body runs (decision 098).
    const mark = run.attemptStarting(place.path, attempt);
    const unmarked = mark && (await markFailure(mark));
    if (unmarked) {
      await guarded?.release('yielded');
      if (run.stopped) throw run.stopped;
      if (attempt > 1) return logged(failedAfterStart(run, node, place, args, attempt - 1, unmarked));
      return notStarted(run, place.path, unmarked);
    }
    run.emit({ type: 'step.started', step: place.path, attempt, reactor: place.reactor });
    const out = await attemptBody(run, node, place, args, attempt, guarded?.signal);
    // A body that fails once its job stops was interrupted, not failed: no retry is counted, nothing
    // is recorded or compensated, the ordered position is kept; it runs again where the execution resumes.
    const stopped = out.kind === 'failure' ? run.stopped : undefined;
    if (guarded)
      await guarded.release(
        stopped ? 'yielded' : releaseOutcome(out, attempt < node.retry.maxAttempts && !place.signal.aborted),
      );
    if (stopped) throw stopped;
    ran?.push({ attempt, worker: run.worker, outcome: OUTCOMES[out.kind] }); // its times are in the trace
    if (out.kind === 'success' || out.kind === 'skipped') {
      run.setStep(place.path, {
        status: out.kind === 'success' ? 'completed' : 'skipped',
        attempts: attempt,
        result: out.value,
      });
      logged(undefined);
      if (out.kind === 'skipped') {
        run.emit({ type: 'step.skipped', step: place.path, reason: out.reason, reactor: place.reactor });
        return { kind: 'skipped', value: out.value };
      }
      run.emit({ type: 'step.succeeded', step: place.path, attempt, reactor: place.reactor });
      const undo = node.hooks.undo as ((r: unknown, a: unknown, c: unknown) => unknown) | undefined;
      const entry = {
        step: place.path,
        undo: async () =>
          undo
            ? runGuardedRollback(run, node, place, args, 'undo', () =>
                undo(out.value, args, rollbackContext(run, place, attempt)),
              )
            : undefined,
      };
      return { kind: 'success', value: out.value, entry };
    }
    if (out.kind === 'halt') {
      run.setStep(place.path, { status: 'halted', attempts: attempt });
      logged(undefined);
      run.emit({ type: 'step.halted', step: place.path, reason: out.reason, reactor: place.reactor });
      return {
        kind: 'halt',
        step: place.path,
        reason: out.reason,
        ...(out.data === undefined ? {} : { data: out.data }),
      };
    }
    const retry = out.retryable && attempt < node.retry.maxAttempts && !place.signal.aborted;
    if (retry) {
      const delayMs = retryDelay(node.retry, attempt);
      run.emit({
        type: 'step.retrying',
        step: place.path,
        attempt: attempt + 1,
        delayMs,
        error: errorSummary(out.error),
        reactor: place.reactor,
      });
      if (run.mode === 'worker') {
        // The engine owns retries: a worker never sleeps a retry delay; the execution is re-enqueued.
        run.setStep(place.path, { status: 'retrying', attempts: attempt, error: errorSummary(out.error) });
        return logged({ kind: 'yield', step: place.path, suspension: { kind: 'retry', delayMs } });
      }
      await run.clock.sleep(delayMs, place.signal);
      continue;
    }
    return logged(failedAfterStart(run, node, place, args, attempt, out.error));
  }
}

/** How each kind of body outcome ends its attempt in the attempt log. */
const OUTCOMES: Readonly<Record<Classified['kind'], AttemptOutcome>> = {
  success: 'succeeded',
  skipped: 'skipped',
  halt: 'halted',
  failure: 'failed',
};

/** Waits for an attempt's start mark to be written: the error of a write that failed (the body must not run), or undefined. */
async function markFailure(write: Promise<void>): Promise<Error | undefined> {
  try {
    await write;
    return undefined;
  } catch (error) {
    return toError(error);
  }
}

/**
 * One attempt of the body, its `ctx.signal` the step's (or, under step-level holds, `held`); under
 * the step's `timeout` when it declares one: past the deadline the attempt fails with a
 * retryable {@link StepTimeoutError}, settled or not (docs/decisions/075).
 */
async function attemptBody(
  run: RunState,
  node: BodyNode,
  place: StepPlace,
  args: Record<string, unknown>,
  attempt: number,
  held: AbortSignal | undefined,
): Promise<Classified> {
  const start = async (signal: AbortSignal): Promise<Classified> => {
    const ctx = stepContext(run, signal === place.signal ? place : { ...place, signal }, attempt);
    return classify(await invoke(node.hooks.run as Body, args, ctx));
  };
  const signal = held ?? place.signal;
  if (node.timeoutMs === undefined) return start(signal);
  const where = { path: place.path, reactor: place.reactor, attempt, signal };
  const out = await runTimed(run, node.timeoutMs, where, start);
  return out instanceof StepTimeoutError ? { kind: 'failure', error: out, retryable: true } : out;
}

/** Admission skipped the step (a marked period, a failed strict chain, a stale ordered position). */
function skippedAtGate(run: RunState, place: StepPlace, attempt: number, reason: string): NodeOutcome {
  run.setStep(place.path, { status: 'skipped', attempts: attempt - 1 });
  run.emit({ type: 'step.skipped', step: place.path, reason, reactor: place.reactor });
  return { kind: 'skipped', value: undefined };
}

/** The step's body ran (in this attempt or an earlier one) and the step failed: it will be compensated. */
function failedAfterStart(
  run: RunState,
  node: BodyNode,
  place: StepPlace,
  args: Record<string, unknown>,
  attempt: number,
  error: Error,
): NodeOutcome {
  run.setStep(place.path, { status: 'failed', attempts: attempt, error: errorSummary(error) });
  run.emit({
    type: 'step.failed',
    step: place.path,
    attempt,
    error: errorSummary(error),
    started: true,
    reactor: place.reactor,
  });
  const compensate = node.hooks.compensate as ((e: Error, a: unknown, c: unknown) => unknown) | undefined;
  return {
    kind: 'failure',
    step: place.path,
    error,
    validation: [],
    compensate: async () =>
      compensate
        ? runGuardedRollback(run, node, place, args, 'compensate', () =>
            compensate(error, args, rollbackContext(run, place, attempt)),
          )
        : undefined,
  };
}

/** What a step's admission took: released right after the attempt's body. */
interface Guarded {
  readonly kind: 'admitted';
  /** The step's signal, also aborted when one of the step's holds is lost. */
  readonly signal: AbortSignal;
  release(outcome: WorkOutcome): Promise<void>;
}

/**
 * Takes the step's declarations for these (validated) arguments, in the fixed order, owned by
 * the execution (re-entrant with its reactor-level and outer holds).
 */
/** The exclusive keys (locks, limit-1 semaphores) a step declares; keys that cannot be computed are left to admission to report. */
function exclusiveKeys(node: BodyNode, args: unknown, place: StepPlace): string[] {
  const keys: string[] = [];
  for (const spec of node.coordination) {
    const scope = { reactor: place.reactor, step: place.path };
    if ((spec.kind !== 'lock' && spec.kind !== 'semaphore') || !isExclusive(spec, args, scope)) continue;
    try {
      keys.push(`${spec.kind}:${computeKey(spec, args, { reactor: place.reactor, step: place.path })}`);
    } catch {
      // reported by admission
    }
  }
  return keys;
}

async function admitStep(
  run: RunState,
  node: BodyNode,
  place: StepPlace,
  args: unknown,
): Promise<Guarded | Exclude<Admission, { kind: 'admitted' }>> {
  const abort = new AbortController();
  const follow = (): void => abort.abort(place.signal.reason);
  if (place.signal.aborted) follow();
  else place.signal.addEventListener('abort', follow, { once: true });
  const leave = await run.siblings.enter(exclusiveKeys(node, args, place));
  const admission = await run.admit(node.coordination, args, {
    reactor: place.reactor,
    step: place.path,
    abort,
    ...orderedWhere(run, node, place),
  });
  if (admission.kind !== 'admitted') {
    place.signal.removeEventListener('abort', follow);
    leave();
    return admission;
  }
  return {
    kind: 'admitted',
    signal: abort.signal,
    release: async (outcome) => {
      place.signal.removeEventListener('abort', follow);
      if (outcome !== 'yielded') dropTicket(run, place.path);
      await admission.holds
        .release(outcome)
        .catch((error: unknown) =>
          run.stepLogger(place.path).warn({ err: error }, 'releasing step coordination failed; holds expire by TTL'),
        );
      leave();
    },
  };
}

/** True when this worker may still park on contention (under the contention cap, counted for every primitive). */
function mayPark(run: RunState): boolean {
  return (
    run.mode === 'worker' && run.contentionCap !== undefined && (run.background?.contention ?? 0) < run.contentionCap
  );
}

/**
 * What a refusal of `specs` (a step's declarations, or a composed child's reactor-level ones)
 * leads to: undefined to park the execution on it — in a worker, under `contentionCap`, with the
 * wait it continues (or starts) noted — or the error the work fails with: the refusal itself, or,
 * once the wait has lasted the declaration's `contentionTimeout`, a `ContentionError` saying so
 * (docs/decisions/068, 097). `on`: where the declarations were admitted (their keys' arguments).
 */
export function refusalInWorker(
  run: RunState,
  specs: readonly CoordinationSpec[],
  refusal: Error,
  on: { readonly args: unknown; readonly reactor: string; readonly step: string | undefined },
): Error | undefined {
  const contended = contendedKey(refusal);
  if (run.mode !== 'worker' || run.contentionCap === undefined || contended === undefined) return refusal;
  const spent = run.background?.contention ?? 0;
  if (spent >= run.contentionCap) return capError(refusal, spent, run.contentionCap); // over the cap: it fails here
  const wait = noteWait(
    run,
    contended.primitive,
    contended.key,
    contended.step,
    declaredTimeout(specs, contended.primitive, { key: contended.key, ...on }),
  );
  const now = run.clock.now();
  return timedOut(wait, now) ? timeoutError(refusal, wait, now) : undefined;
}

/**
 * A step-level ordered lock keeps its position across the step's attempts: the kept one is
 * re-entered, a fresh one is remembered. In-process, a caller that gives up hands it back; a
 * worker that parks keeps it.
 */
function orderedWhere(run: RunState, node: BodyNode, place: StepPlace): Partial<Parameters<RunState['admit']>[2]> {
  if (!node.coordination.some((s) => s.kind === 'ordered_lock')) return {};
  const parks = mayPark(run);
  return {
    orderedTicket: keptTicket(run, place.path),
    stepOrdered: {
      onOrderedTicket: (ticket) => keepTicket(run, place.path, ticket),
      handBackOnTimeout: !parks,
      keepPositionOnRefusal: parks,
    },
  };
}

/**
 * How an attempt ended, for its holds: only a success marks a period; a failure that will be
 * retried keeps its ordered position for the retry ('yielded').
 */
function releaseOutcome(out: Classified, mayRetry: boolean): WorkOutcome {
  if (out.kind === 'success') return 'completed';
  if (out.kind === 'failure') return out.retryable && mayRetry ? 'yielded' : 'failed';
  return 'halted';
}

/** A step completed (or skipped) in an earlier job of this execution: its body never runs again. */
function fromRecord(
  run: RunState,
  node: BodyNode,
  place: StepPlace,
  args: Record<string, unknown>,
  recorded: StepRecord,
): NodeOutcome {
  if (recorded.status === 'skipped') return { kind: 'skipped', value: recorded.result };
  const undo = node.hooks.undo as ((r: unknown, a: unknown, c: unknown) => unknown) | undefined;
  const attempt = recorded.attempts;
  const entry = {
    step: place.path,
    undo: async () =>
      undo
        ? runGuardedRollback(run, node, place, args, 'undo', () =>
            undo(recorded.result, args, rollbackContext(run, place, attempt)),
          )
        : undefined,
  };
  return { kind: 'success', value: recorded.result, entry };
}

/** Rollback hooks get a context of their own: the step's signal was aborted when the run stopped. */
function rollbackContext(run: RunState, place: StepPlace, attempt: number): ReturnType<typeof stepContext> {
  return stepContext(run, { ...place, signal: new AbortController().signal }, attempt);
}

async function validated(
  node: BodyNode,
  place: StepPlace,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const outcome = await validateContract(node.contract!, args);
  if (outcome.ok) return outcome.value;
  const summary = outcome.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  throw new ValidationError(
    ErrorCode.ArgumentsInvalid,
    `step "${place.path}" of reactor "${place.reactor}": invalid arguments (${summary})`,
    outcome.issues,
    {
      step: place.path,
      reactor: place.reactor,
    },
  );
}

/** A failure before the body started: recorded, not retried, not compensated. */
export function notStarted(run: RunState, step: string, error: Error): NodeOutcome {
  run.setStep(step, { status: 'failed', attempts: 0, error: errorSummary(error) });
  run.emit({ type: 'step.failed', step, attempt: 0, error: errorSummary(error), started: false });
  return {
    kind: 'failure',
    step,
    error,
    validation: error instanceof ValidationError ? error.issues : [],
    compensate: undefined,
  };
}

/** A throw caught from a body (a class of our own, so no returned value can pass for it). */
class Thrown {
  readonly error: Error;
  constructor(error: Error) {
    this.error = error;
  }
}

/** Calls a body; a throw becomes a {@link Thrown} value. */
export async function invoke(body: Body, args: unknown, ctx: unknown): Promise<unknown> {
  try {
    return await body(args, ctx);
  } catch (error) {
    return new Thrown(toError(error));
  }
}

/** How a body's return value (or throw) ends an attempt. */
export function classify(out: unknown): Classified {
  if (out instanceof Thrown) return { kind: 'failure', error: out.error, retryable: !isNonRetryable(out.error) };
  switch (signalKind(out)) {
    case 'success':
      return { kind: 'success', value: (out as Success<unknown>).value };
    case 'skipped':
      return { kind: 'skipped', value: (out as Skipped<unknown>).value, reason: (out as Skipped<unknown>).reason };
    case 'halt':
      return { kind: 'halt', reason: (out as Halt).reason, data: (out as Halt).data };
    case 'failure': {
      const f = out as Failure;
      return { kind: 'failure', error: f.error, retryable: f.retryable && !isNonRetryable(f.error) };
    }
    case undefined:
      return { kind: 'success', value: out };
  }
}

function isNonRetryable(error: Error): boolean {
  return error instanceof NonRetryableError || (ReactorError.is(error) && error.code === ErrorCode.NonRetryable);
}
