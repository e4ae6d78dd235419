/**
 * `engine.resume`: find the paused execution (by id or correlation id) and its interrupt, check
 * the timeout, validate the payload (an invalid one is counted), claim the resume atomically
 * (exactly one claimant wins), then continue the run inline or hand it to a worker.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../../dsl/definition.js';
import { findInterrupt, validatePayload, type InterruptSpec } from '../../../dsl/interrupt.js';
import {
  InterruptTimeoutError,
  ReactorError,
  ResumePayloadError,
  ResumeRefusedError,
  type FieldIssue,
  type ResumeRefusal,
} from '../../../errors.js';
import type { InterruptClaims } from '../../../ports/interrupt-claims.js';
import { statusName, TERMINAL_STATUSES, type ExecutionRecord, type InterruptWait } from '../../../ports/store.js';
import type { RunResult } from '../../model/results.js';
import { continueInline, prepareWorker, withLiveness, type ContinueDeps } from '../../execution/interrupt/continue.js';
import { failPaused } from '../../execution/interrupt/fail.js';
import { discardTimeoutJobs } from '../../execution/interrupt/pause.js';
import { versionFor } from '../../model/versions.js';

/**
 * How long a won resume claim stops other resumes before the payload is in the record. It covers
 * the liveness wait (up to ~2 s) and one record write; a winner that dies leaves it to lapse.
 */
export const RESUME_CLAIM_TTL_MS = 60_000;

/** Where a resume goes: an execution id, or the correlation id of its interrupt. */
export type ResumeTarget = string | { readonly correlationId: string };

/** Options of `engine.resume`. */
export interface ResumeOptions {
  /** The interrupt's step path (`approve`, `review.approve`); needed only when several interrupts wait. */
  readonly step?: string;
}

/** What resuming needs from the engine. */
export interface ResumeDeps extends ContinueDeps {
  readonly claims: InterruptClaims | undefined;
  readonly registry: ReadonlyMap<string, AnyReactorDefinition>;
  /** Every registered definition by fingerprint: a resume continues on the one the execution ran with (decision 082). */
  readonly versions?: ReadonlyMap<string, AnyReactorDefinition>;
}

interface Found {
  readonly record: ExecutionRecord;
  readonly reactor: AnyReactorDefinition;
  readonly wait: InterruptWait;
  readonly spec: InterruptSpec;
}

/** Resumes a paused execution with `payload`; see {@link ResumeDeps}. Refusals throw typed errors; outcomes are returned. */
export async function resumeExecution(
  deps: ResumeDeps,
  target: ResumeTarget,
  payload: unknown,
  options: ResumeOptions = {},
): Promise<RunResult> {
  const claims = deps.claims;
  if (!claims)
    throw new ResumeRefusedError(
      { executionId: typeof target === 'string' ? target : undefined, reason: 'unsupported' },
      'the engine store does not implement interrupt claims (MemoryStore and RedisStore do)',
    );
  const found = await locate(deps, claims, target, options);
  const { record, wait, spec } = found;
  if (wait.timeoutAt !== undefined && deps.clock.now() >= wait.timeoutAt) return timedOut(deps, found);
  const validated = await validatePayload(spec, payload);
  if (!validated.ok) return invalidPayload(deps, found, validated.issues);
  const claimant = `${record.id}:${crypto.randomUUID()}`;
  const claim = await claims.claimResume(record.id, wait.step, claimant, RESUME_CLAIM_TTL_MS);
  if (!claim.claimed)
    throw refuse(deps, found, 'already_resumed', 'another resume was accepted first (already resumed)');
  // Until the payload is in the record the claim is all that stops a second resume; one that is
  // not used (refused, busy, failed) is given back at once, so "try again" can succeed.
  let written = false;
  let outcome;
  try {
    outcome = await withLiveness(deps, record.id, async () => {
      const fresh = await deps.store.get(record.id);
      if (fresh?.status !== 'paused') throw refuse(deps, found, 'not_paused', `it is ${fresh?.status ?? 'gone'} now`);
      // The record, not the claim, is the lasting answer: a lapsed claim never resumes an interrupt twice.
      if (fresh.interrupts?.find((w) => w.step === wait.step)?.resumedAt !== undefined)
        throw refuse(deps, found, 'already_resumed', 'its interrupt was already resumed');
      const interrupts = (fresh.interrupts ?? []).map((w) =>
        w.step === wait.step ? { ...w, payload: validated.value, resumedAt: deps.clock.now() } : w,
      );
      const resumed = { ...fresh, interrupts };
      const background = spec.resume === 'background' || found.reactor.background === 'all';
      if (background && deps.queue) {
        const worker = await prepareWorker(deps, found.reactor, resumed, wait.step, 'resume');
        written = true;
        return { worker };
      }
      await deps.store.save({ ...resumed, status: 'running', updatedAt: deps.clock.now() }); // the payload is durable before anything runs
      written = true;
      return { next: resumed };
    });
  } finally {
    if (!written) await claims.releaseResume(record.id, wait.step, claimant).catch(() => undefined);
  }
  if (outcome === undefined) throw refuse(deps, found, 'not_paused', 'another process is working on it; try again');
  await discardTimeoutJobs(deps.queue, record.id, [wait]); // resumed: its active timeout's job is moot (decision 160)
  if (outcome.worker) {
    await outcome.worker.enqueue(); // off the liveness lock, so the worker can take the execution at once
    return outcome.worker.result;
  }
  // Inline: continue in this process (a busy reactor-level key hands it to a worker instead).
  return continueInline(deps, found.reactor, outcome.next, wait.step);
}

async function locate(
  deps: ResumeDeps,
  claims: InterruptClaims,
  target: ResumeTarget,
  options: ResumeOptions,
): Promise<Found> {
  const correlationId = typeof target === 'string' ? undefined : target.correlationId;
  const executionId = typeof target === 'string' ? target : await claims.correlation(target.correlationId);
  if (executionId === undefined)
    throw new ResumeRefusedError(
      { executionId: undefined, correlationId, reason: 'unknown_correlation' },
      'no paused execution waits on it',
    );
  const stored = await deps.store.get(executionId);
  if (!stored)
    throw new ResumeRefusedError({ executionId, reason: 'not_found' }, 'no such execution (or its record expired)');
  const registered = deps.registry.get(stored.reactor);
  if (!registered)
    throw new ReactorError(
      'reactor_unknown',
      `cannot resume execution ${executionId}: reactor "${stored.reactor}" is not registered with this engine (engine.register)`,
      { details: { reactor: stored.reactor } },
    );
  // The definition the execution ran with, or one migrating from it (decision 082).
  const { reactor, record } = versionFor(stored, registered, deps.versions, 'resume');
  const matches = (record.interrupts ?? []).filter(
    (w) =>
      w.event === undefined && // a wait for an event is resumed by sending it
      (options.step === undefined || w.step === options.step) &&
      (correlationId === undefined || w.correlationId === correlationId),
  );
  const open = matches.filter((w) => w.resumedAt === undefined);
  const info = {
    executionId,
    step: options.step ?? matches[0]?.step,
    correlationId,
    status: statusName(record.status),
  };
  const refused = (reason: ResumeRefusal, hint: string): ResumeRefusedError =>
    rejected(deps, record, new ResumeRefusedError({ ...info, reason }, hint));
  if (record.status === 'paused' && record.pausedOn)
    throw refused(
      'paused_on_failure',
      `it is paused on the failure of step "${record.pausedOn.step}", not at an interrupt; use retryStep, skipStep or rollback`,
    );
  if (matches.length > 0 && open.length === 0) throw refused('already_resumed', 'its interrupt was already resumed');
  if (record.status !== 'paused') throw refused('not_paused', stateHint(record.status));
  if (open.length !== 1)
    throw refused(
      'no_such_interrupt',
      open.length === 0
        ? `it waits at ${waitList(record)}`
        : `several interrupts wait (${waitList(record)}); pass { step }`,
    );
  const wait = open[0]!;
  const spec = findInterrupt(reactor, wait.step)?.interrupt;
  if (!spec)
    throw refused(
      'no_such_interrupt',
      `reactor "${reactor.name}" has no interrupt "${wait.step}" (was the definition changed?)`,
    );
  return { record, reactor, wait, spec };
}

/** Publishes a refused resume of a known execution as an `interrupt.rejected` event (not persisted: nothing changed). */
function rejected(
  deps: Pick<ResumeDeps, 'hub' | 'clock'>,
  record: ExecutionRecord,
  error: ResumeRefusedError,
): ResumeRefusedError {
  const step = typeof error.details.step === 'string' ? error.details.step : '';
  const reason = error.details.reason;
  deps.hub.emit({
    type: 'interrupt.rejected',
    step,
    reason,
    message: error.message,
    executionId: record.id,
    rootExecutionId: record.rootId,
    reactor: record.reactor,
    at: deps.clock.now(),
  });
  return error;
}

function stateHint(status: string): string {
  if (status === 'rolling_back') return 'it is rolling back';
  if (TERMINAL_STATUSES.has(status as ExecutionRecord['status'])) return `it is ${status} (finished)`;
  return `it is ${status}, not paused`;
}

function waitList(record: ExecutionRecord): string {
  return (
    (record.interrupts ?? [])
      .filter((w) => w.resumedAt === undefined)
      .map((w) => `"${w.step}"`)
      .join(', ') || 'no interrupt'
  );
}

/** Records a refused resume as an event (not persisted: the record belongs to the accepted resume) and returns the error. */
function refuse(
  deps: ResumeDeps,
  found: Found,
  reason: 'already_resumed' | 'not_paused',
  hint: string,
): ResumeRefusedError {
  return rejected(
    deps,
    found.record,
    new ResumeRefusedError({ executionId: found.record.id, step: found.wait.step, reason }, hint),
  );
}

/** The timeout passed (lazy check, or an active one whose job has not run yet): the run rolls back and ends failed. */
async function timedOut(deps: ResumeDeps, found: Found): Promise<never> {
  const { record, wait, spec } = found;
  const error = new InterruptTimeoutError({
    executionId: record.id,
    step: wait.step,
    timeoutAt: wait.timeoutAt!,
    strategy: spec.timeoutStrategy,
  });
  await withLiveness(deps, record.id, async () => {
    const fresh = await deps.store.get(record.id);
    if (fresh?.status !== 'paused') return;
    await failPaused(deps, found.reactor, fresh, {
      step: wait.step,
      error,
      events: [
        { type: 'interrupt.timed_out', step: wait.step, strategy: spec.timeoutStrategy, timeoutAt: wait.timeoutAt! },
      ],
    });
  });
  throw error;
}

/** Counts an invalid payload (under the liveness lock); the last allowed one rolls the run back. Always throws. */
async function invalidPayload(deps: ResumeDeps, found: Found, issues: readonly FieldIssue[]): Promise<never> {
  const { record, wait, spec } = found;
  const error = await withLiveness(deps, record.id, async () => {
    const fresh = await deps.store.get(record.id);
    const current = fresh?.interrupts?.find((w) => w.step === wait.step && w.resumedAt === undefined);
    if (fresh?.status !== 'paused' || !current)
      throw refuse(deps, found, 'not_paused', `it is ${fresh?.status ?? 'gone'} now`);
    const attempt = current.invalidAttempts + 1;
    const exhausted = spec.maxAttempts !== 0 && attempt >= spec.maxAttempts;
    const counted = {
      ...fresh,
      interrupts: (fresh.interrupts ?? []).map((w) => (w === current ? { ...w, invalidAttempts: attempt } : w)),
    };
    const invalid = new ResumePayloadError(
      { executionId: record.id, step: wait.step, attempt, maxAttempts: spec.maxAttempts, exhausted },
      issues,
    );
    const event = {
      type: 'interrupt.payload_invalid' as const,
      step: wait.step,
      attempt,
      maxAttempts: spec.maxAttempts,
      issues,
    };
    if (exhausted) {
      await failPaused(deps, found.reactor, counted, { step: wait.step, error: invalid, events: [event] });
      return invalid;
    }
    const state = deps.newState({
      executionId: record.id,
      rootExecutionId: record.rootId,
      reactor: found.reactor.name,
      contract: found.reactor.contract,
      input: record.input as Record<string, unknown>,
      idempotencyKey: record.idempotencyKey,
      resume: counted,
      mode: 'worker',
    });
    state.emit(event);
    await state.checkpoint('paused', {}, { withTrace: true });
    return invalid;
  });
  throw error ?? refuse(deps, found, 'not_paused', 'another process is working on it; try again');
}
