/**
 * One execution from admission to its terminal record, shared by the inline path (`engine.run`)
 * and the background path (`jobs/`).
 *
 * @module
 */
import { stepsWithMapResults } from '../run/compact-map.js';
import { admit } from '../../coordination/admit.js';
import type { CoordinationScope } from '../../coordination/scope.js';
import type { CoordinationSpec } from '../../dsl/coordination.js';
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import {
  CancelledError,
  DeadlineExceededError,
  SupersededError,
  ErrorCode,
  HoldLostError,
  ReactorError,
  ValidationError,
  errorFromJSON,
  errorToJSON,
} from '../../errors.js';
import type { Coordinator } from '../../ports/coordinator.js';
import { TERMINAL_STATUSES, type ExecutionRecord } from '../../ports/store.js';
import { pendingStartOf } from '../model/background.js';
import type { RunResult } from '../model/results.js';
import type { Suspension } from '../model/suspension.js';
import { errorSummary, type Admit, type EventDraft, type RunState } from '../run/run-state.js';
import type { Frame } from '../graph/frame.js';
import { runSlice, type FinalOutcome, type SliceDriver } from './slice.js';
import { pauseRun, waitsOf } from './interrupt/pause.js';
import { pauseCauseOf, pauseOnFailure } from './failure-pause.js';

/** What admissions need from the engine. */
export interface CoordinationDeps {
  readonly coordinator: Coordinator | undefined;
  readonly rateLimits: CoordinationScope['rateLimits'];
  /** Wake-on-release hook (background execution). */
  readonly onReleased?: CoordinationScope['onReleased'];
  /** In a worker, how long contention is waited out on the release notification before the execution parks. */
  readonly workerWaitMs?: number;
}

/** Runs an execution in this process: admission, the graph, release, the terminal record (one {@link runSlice}). */
export async function execute(
  state: RunState,
  reactor: AnyReactorDefinition,
  root: AbortController = new AbortController(),
  handOff?: (state: RunState) => Promise<RunResult>,
): Promise<RunResult> {
  state.emit({ type: 'run.started', input: state.redactedInput });
  const handoff =
    handOff && reactor.background !== undefined && reactor.background !== 'all' ? reactor.background : undefined;
  return runSlice(
    state,
    reactor,
    inlineDriver(state, reactor, {
      root,
      frame: { def: reactor, input: state.input, prefix: '', signal: root.signal, handoff, owned: root },
      // Inline, every suspension but a pause is a hand-off: the rest of the run goes to a worker.
      otherwise: () => handOff!(state),
    }),
  );
}

/** What differs between the inline drivers (`engine.run`, an inline resume). */
export interface InlineSlice {
  /** Its root controller (a lost hold aborts it). */
  readonly root: AbortController;
  /** The declarations as this driver takes them (an inline resume with a queue does not wait for a busy lock). */
  readonly specs?: ((specs: readonly CoordinationSpec[]) => readonly CoordinationSpec[]) | undefined;
  /** A refused admission this driver handles itself (undefined: the run fails with its error). */
  readonly refused?: ((error: Error) => Promise<RunResult> | undefined) | undefined;
  /** After the admission, before the graph. */
  readonly admitted?: () => void;
  /** The root frame. */
  readonly frame: Frame;
  /** Every suspension but a pause: a hand-off (a run), or a failure (a resume cannot wait). */
  readonly otherwise: (suspension: Suspension, step: string) => Promise<RunResult>;
}

/**
 * The inline driver: admission waits as declared, a refusal fails the run, a pause pauses (at
 * interrupts, or on a failure), every other suspension goes to `otherwise`.
 */
export function inlineDriver(
  state: RunState,
  reactor: AnyReactorDefinition,
  slice: InlineSlice,
): SliceDriver<RunResult> {
  return {
    admit: (specs) =>
      state.admit(slice.specs ? slice.specs(specs) : specs, state.input, { reactor: reactor.name, abort: slice.root }),
    refused: (error) =>
      slice.refused?.(error) ?? finish(state, { status: 'failed', step: undefined, error, validation: [] }),
    ...(slice.admitted ? { admitted: slice.admitted } : {}),
    frame: slice.frame,
    suspended: (step) => {
      const otherwise = (suspension: Suspension): Promise<RunResult> => slice.otherwise(suspension, step);
      return {
        pause: () => pauseRun(state, reactor),
        failurePause: (s) => pauseOnFailure(state, reactor, s),
        retry: otherwise,
        sleep: otherwise,
        contention: otherwise,
        awaitUnit: otherwise,
        fanOut: otherwise,
      };
    },
    finished: (outcome) => finish(state, outcome),
  };
}

/** Takes declarations for work of `state` (in worker mode nothing waits: contention parks instead). */
export function admitWork(
  state: RunState,
  deps: CoordinationDeps,
  specs: readonly CoordinationSpec[],
  args: unknown,
  where: Parameters<Admit>[2],
): ReturnType<typeof admit> {
  if (!deps.coordinator) {
    const error = new ReactorError(
      'coordinator_missing',
      `reactor "${where.reactor}" declares coordination but the engine has no coordinator; pass createEngine({ coordinator })`,
    );
    return Promise.resolve({ kind: 'refused', error });
  }
  const holder = {
    owner: state.holderId,
    executionId: state.executionId,
    reactor: where.reactor,
    ...(where.step === undefined ? {} : { step: where.step }),
  };
  // A declaration's `wait` is the in-process budget; in a worker, contention is waited out for
  // `workerWaitMs` and then parks (rate limits park at once, for exactly their retry-after).
  const workerWait = deps.workerWaitMs ?? 0;
  const taken =
    state.mode === 'worker' && where.ownWaits !== true
      ? specs.map((s) => ('waitMs' in s ? { ...s, waitMs: s.kind === 'rate_limit' ? 0 : workerWait } : s))
      : specs;
  // An async unit's step-level ordered position is taken on its first arrival and kept on its record.
  const unitTicket = where.step !== undefined && state.unit !== undefined ? state.background?.ordered : undefined;
  return admit(taken, args, {
    coordinator: deps.coordinator,
    orderedTicket: where.orderedTicket ?? unitTicket,
    keepOrderedOnContention: unitTicket !== undefined,
    ...where.stepOrdered,
    adopt: where.adopt,
    keepOrderedUntilFinal: unitTicket !== undefined,
    onReleased: deps.onReleased,
    clock: state.clock,
    reactor: where.reactor,
    step: where.step,
    holder,
    startId:
      where.startId ??
      (where.step === undefined ? `${state.executionId}:${where.reactor}` : `${state.executionId}:${where.step}`),
    rateLimits: deps.rateLimits,
    heldKeys: state.heldKeys,
    fencingTokens: state.fencingTokens,
    emit: (event) =>
      state.emit({
        ...event,
        reactor: where.reactor,
        ...(where.step === undefined ? {} : { step: where.step }),
      } as unknown as EventDraft),
    onLost: (primitive, key) =>
      where.abort.abort(new HoldLostError({ reactor: where.reactor, step: where.step, primitive, key })),
  });
}

/** A terminal outcome (inline runs never yield); see `slice.ts`. */
export type { FinalOutcome };

/** Ends an execution with a terminal outcome: its event, its terminal record, its result. */
export async function finish(state: RunState, outcome: FinalOutcome): Promise<RunResult> {
  if (outcome.status === 'failed' && outcome.error instanceof CancelledError)
    return cancelled(state, outcome.error.details.reason);
  if (outcome.status === 'failed' && outcome.error instanceof DeadlineExceededError)
    return cancelled(state, outcome.error.message, outcome.error); // rolled back like a cancel (docs/decisions/081)
  const base = {
    executionId: state.executionId,
    reactor: state.reactor,
    trace: state.trace,
    steps: state.steps,
    rollbackFailures: state.rollbackFailures,
    replay: false,
  };
  if (outcome.status === 'completed') {
    state.emit({ type: 'run.completed' });
    await state.checkpoint('completed', { value: outcome.value }).catch(() => undefined);
    return { ...base, status: 'completed', value: outcome.value };
  }
  if (outcome.status === 'halted') {
    state.emit({ type: 'run.halted', step: outcome.step, reason: outcome.reason });
    await state
      .checkpoint('halted', {
        haltReason: outcome.reason,
        ...(outcome.step === undefined ? {} : { failedStep: outcome.step }),
        ...(outcome.data === undefined ? {} : { haltData: outcome.data }),
      })
      .catch(() => undefined);
    const data = outcome.data === undefined ? {} : { data: outcome.data };
    return { ...base, status: 'halted', haltedStep: outcome.step, reason: outcome.reason, ...data };
  }
  state.emit({ type: 'run.failed', step: outcome.step, error: errorSummary(outcome.error) });
  await state
    .checkpoint('failed', {
      error: errorToJSON(outcome.error),
      ...(outcome.step === undefined ? {} : { failedStep: outcome.step }),
    })
    .catch(() => undefined);
  return {
    ...base,
    status: 'failed',
    error: outcome.error,
    failedStep: outcome.step,
    validationErrors: outcome.validation,
  };
}

/**
 * Ends an execution as cancelled (its rollback has run). `cause`: what cancelled it when the
 * engine did (a {@link DeadlineExceededError}), kept in the record and the result.
 */
export async function cancelled(
  state: RunState,
  reason: string,
  cause?: DeadlineExceededError | SupersededError,
): Promise<RunResult> {
  if (cause instanceof DeadlineExceededError) state.emit({ type: 'run.deadline_exceeded', ...pick(cause.details) });
  if (cause instanceof SupersededError)
    state.emit({
      type: 'run.superseded',
      supersededBy: cause.details.supersededBy,
      debounceKey: cause.details.debounceKey,
    });
  state.emit({ type: 'run.cancelled', reason });
  await state
    .checkpoint('cancelled', { cancelReason: reason, ...(cause ? { cancelCause: errorToJSON(cause) } : {}) })
    .catch(() => undefined);
  return {
    executionId: state.executionId,
    reactor: state.reactor,
    trace: state.trace,
    steps: state.steps,
    rollbackFailures: state.rollbackFailures,
    replay: false,
    status: 'cancelled',
    reason,
    ...(cause ? { cause } : {}),
    ...supersededByOf(cause),
  };
}

/** `{ supersededBy }` of a cancel's cause when it is a {@link SupersededError} (also one revived from a record). */
function supersededByOf(cause: Error | undefined): { readonly supersededBy?: string } {
  return cause instanceof SupersededError ? { supersededBy: cause.details.supersededBy } : {};
}

/** The event fields of a deadline's details. */
function pick(details: DeadlineExceededError['details']): { deadlineAt: number; deadlineMs: number } {
  return { deadlineAt: details.deadlineAt, deadlineMs: details.deadlineMs };
}

/** The result of a run whose input failed validation (nothing persisted, nothing taken). */
export function invalidInput(
  reactor: AnyReactorDefinition,
  executionId: string,
  issues: ValidationError['issues'],
): RunResult {
  const summary = issues.map((i) => `${i.path || '(input)'}: ${i.message}`).join('; ');
  const error = new ValidationError(
    ErrorCode.InputInvalid,
    `reactor "${reactor.name}": invalid input (${summary})`,
    issues,
    { reactor: reactor.name },
  );
  return {
    status: 'failed',
    executionId,
    reactor: reactor.name,
    error,
    failedStep: undefined,
    validationErrors: issues,
    trace: [],
    steps: {},
    rollbackFailures: [],
    replay: false,
  };
}

/** `{ cause, supersededBy }` of a cancelled record, as far as it has them. */
function causeOf(record: ExecutionRecord): { readonly cause?: Error; readonly supersededBy?: string } {
  if (record.cancelCause === undefined) return {};
  const cause = errorFromJSON(record.cancelCause);
  return { cause, ...supersededByOf(cause) };
}

/** Rebuilds a result from a persisted record (replays across processes). */
export function fromRecord(record: ExecutionRecord): RunResult {
  const base = {
    executionId: record.id,
    reactor: record.reactor,
    ...(record.tags === undefined ? {} : { tags: record.tags }),
    trace: record.trace ?? [],
    steps: stepsWithMapResults(record),
    rollbackFailures: record.rollbackFailures,
    replay: true,
  };
  if (record.status === 'cancelled')
    return {
      ...base,
      status: 'cancelled',
      reason: record.cancelReason ?? '',
      ...causeOf(record),
    };
  if (record.status === 'parked' && record.background?.waitingFor)
    return { ...base, status: 'parked', waitingFor: record.background.waitingFor };
  if (record.status === 'pending' || record.status === 'parked')
    return { ...base, status: 'queued', ...pendingStartOf(record) };
  if (record.status === 'paused')
    return { ...base, status: 'paused', pausedOn: pauseCauseOf(record), interrupts: waitsOf(record.interrupts ?? []) };
  if (!TERMINAL_STATUSES.has(record.status)) return { ...base, status: 'running' };
  if (record.status === 'completed') return { ...base, status: 'completed', value: record.value };
  if (record.status === 'halted')
    return {
      ...base,
      status: 'halted',
      haltedStep: record.failedStep,
      reason: record.haltReason ?? '',
      ...(record.haltData === undefined ? {} : { data: record.haltData }),
    };
  const error = errorFromJSON(record.error ?? { name: 'Error', message: `execution ended ${record.status}` });
  const issues = (error.details.issues as ValidationError['issues'] | undefined) ?? [];
  return { ...base, status: 'failed', error, failedStep: record.failedStep, validationErrors: issues };
}
