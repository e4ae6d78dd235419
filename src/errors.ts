/**
 * Every error ts-reactor produces, as data: a stable `code`, a `cause`, structured fields and a
 * JSON round trip (`toJSON()` / {@link errorFromJSON}), because errors cross process boundaries.
 *
 * @module
 */

import {
  ErrorCode,
  type ContendedPrimitive,
  type ErrorDetails,
  type FanOutDetails,
  type FieldIssue,
  type PrimitiveName,
  type ResumeRefusal,
  type FailureAction,
  type FailureActionRefusal,
} from './error-codes.js';

export * from './error-codes.js';

const BRAND = Symbol.for('ts-reactor.error');

/** The JSON shape of a serialized error. */
export interface ErrorJSON {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly cause?: ErrorJSON;
  readonly stack?: string;
}

/**
 * The code a `ReactorError` may carry: an {@link ErrorCode}, or — on a {@link RemoteError} (or an
 * error from a newer version) rebuilt from JSON — the code of the foreign error it came from
 * (`ECONNREFUSED` …).
 */
export type AnyErrorCode = ErrorCode | (string & Record<never, never>);

/** The `details` of an error of code `C`: {@link ErrorDetails}`[C]`, or an untyped record when `C` is not one known code. */
export type DetailsOf<C extends AnyErrorCode> = string extends C
  ? Readonly<Record<string, unknown>>
  : C extends ErrorCode
    ? Readonly<ErrorDetails[C]>
    : Readonly<Record<string, unknown>>;

/** The options of a `ReactorError` of code `C`: a `cause`, and `details` (required when the code has required fields). */
export type ReactorErrorOptions<C extends AnyErrorCode> = {
  readonly cause?: unknown;
} & (OptionalDetails<C> extends true
  ? { readonly details?: ErrorDetails[C & ErrorCode] }
  : { readonly details: ErrorDetails[C & ErrorCode] });

type OptionalDetails<C extends AnyErrorCode> = [C & ErrorCode] extends [never]
  ? true
  : Record<never, never> extends ErrorDetails[C & ErrorCode]
    ? true
    : false;

/**
 * Base class of every ts-reactor error. `code` is stable across versions: an {@link ErrorCode}
 * (constructing one with any other code does not compile). `details` holds the structured
 * fields of that code ({@link ErrorDetails}), typed on an error of a specific class
 * (`ContentionError` …) or one narrowed with `ReactorError.is(error, code)`.
 *
 * @example
 * ```ts
 * if (ReactorError.is(error, 'reactor_unknown')) console.log(error.details.reactor);
 * ```
 */
export class ReactorError<
  C extends AnyErrorCode = AnyErrorCode,
  D extends Readonly<Record<string, unknown>> = DetailsOf<C>,
> extends Error {
  readonly [BRAND] = true;
  readonly code: C;
  readonly details: D;

  /** @param code One of {@link ErrorCode}. */
  constructor(
    code: C & ErrorCode,
    message: string,
    ...[options]: OptionalDetails<C> extends true
      ? [options?: ReactorErrorOptions<C>]
      : [options: ReactorErrorOptions<C>]
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ReactorError';
    this.code = code;
    this.details = Object.freeze({ ...(options?.details ?? {}) }) as D;
  }

  /** True for any ts-reactor error, also across realms and after a JSON round trip. */
  static is(value: unknown): value is ReactorError;
  /** True for a ts-reactor error of `code` (its `details` are then typed by {@link ErrorDetails}). */
  static is<C extends ErrorCode>(value: unknown, code: C): value is ReactorError<C>;
  static is(value: unknown, code?: string): boolean {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[BRAND] === true &&
      (code === undefined || (value as { code?: unknown }).code === code)
    );
  }

  /** Serializable form; see {@link errorFromJSON}. */
  toJSON(): ErrorJSON {
    return errorToJSON(this);
  }
}

/** A reactor or step definition is not valid; thrown when it is built. */
export class DefinitionError extends ReactorError<'definition_invalid'> {
  readonly reactor: string;
  readonly step: string | undefined;
  constructor(message: string, reactor: string, step?: string) {
    super(ErrorCode.Definition, message, { details: { reactor, ...(step === undefined ? {} : { step }) } });
    this.name = 'DefinitionError';
    this.reactor = reactor;
    this.step = step;
  }
}

/** Reactor inputs or step arguments failed their contract. Never retried. */
export class ValidationError extends ReactorError<
  'input_invalid' | 'arguments_invalid',
  Readonly<ErrorDetails['arguments_invalid']>
> {
  readonly issues: readonly FieldIssue[];
  constructor(
    code: typeof ErrorCode.InputInvalid | typeof ErrorCode.ArgumentsInvalid,
    message: string,
    issues: readonly FieldIssue[],
    details: Omit<ErrorDetails['arguments_invalid'], 'issues'> = {},
  ) {
    super(code, message, { details: { ...details, issues } });
    this.name = 'ValidationError';
    this.issues = issues;
  }
}

/** An argument source, path or transform threw. The step never started; never retried. */
export class ArgumentResolutionError extends ReactorError<'argument_resolution_failed'> {
  constructor(step: string, argument: string, cause: unknown) {
    super(
      ErrorCode.ArgumentResolution,
      `step "${step}": argument "${argument}" could not be resolved: ${messageOf(cause)}`,
      {
        cause,
        details: { step, argument },
      },
    );
    this.name = 'ArgumentResolutionError';
  }
}

/**
 * Throw from a step body to fail without any further retry.
 *
 * @example
 * ```ts
 * if (card.expired) throw new NonRetryableError('card expired');
 * ```
 */
export class NonRetryableError extends ReactorError<'non_retryable'> {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(ErrorCode.NonRetryable, message, options);
    this.name = 'NonRetryableError';
  }
}

/**
 * An attempt of a step body ran past the step's `timeout` (code `step_timed_out`): the body's
 * `ctx.signal` was aborted with this error and the attempt failed at the deadline. Retryable:
 * the step's retry policy decides whether another attempt runs; after the last one the step
 * fails and is compensated like any failure.
 */
export class StepTimeoutError extends ReactorError<'step_timed_out'> {
  constructor(info: { step: string; attempt: number; timeoutMs: number }) {
    super(
      ErrorCode.StepTimedOut,
      `step "${info.step}": attempt ${info.attempt} timed out after ${info.timeoutMs} ms; raise the step's timeout, or make the body finish sooner`,
      { details: { ...info } },
    );
    this.name = 'StepTimeoutError';
  }
}

/**
 * A start option of `engine.start` or `engine.startMany` is not valid (code
 * `start_options_invalid`): a `delay` that is not a duration ≥ 0, an `at` that is not a valid
 * date or epoch time, both `delay` and `at`, a `priority` that is not an integer in
 * 1..2,097,151. Thrown before anything is validated, claimed or written.
 */
export class StartOptionsError extends ReactorError<'start_options_invalid'> {
  constructor(info: { option: string; value: string; entry?: number }, problem: string) {
    super(
      ErrorCode.StartOptionsInvalid,
      `${info.entry === undefined ? '' : `startMany entry ${info.entry}: `}start option ${info.option} ${problem}; got ${info.value}`,
      { details: { ...info } },
    );
    this.name = 'StartOptionsError';
  }
}

/**
 * The `tags` of `engine.run`, `engine.start` or a `startMany` entry break a limit (code
 * `tags_invalid`; docs/limits.md): too many, a key or value too long, empty, or with characters a
 * tag may not hold. Thrown before anything is claimed or written; `details.tag` names the key.
 */
export class TagsInvalidError extends ReactorError<'tags_invalid'> {
  constructor(info: { tag: string; value: string; entry?: number }, problem: string) {
    super(
      ErrorCode.TagsInvalid,
      `${info.entry === undefined ? '' : `startMany entry ${info.entry}: `}${info.tag === 'tags' ? 'tags' : `tag ${JSON.stringify(info.tag)}`} ${problem}; got ${info.value}`,
      { details: { ...info } },
    );
    this.name = 'TagsInvalidError';
  }
}

/**
 * An option of a runtime factory (`createRedisRuntime`, `createEmbeddedEngine`, `createTestEngine`,
 * `createRedisBackend`, `createBullmqQueue`) is not valid, or not one that factory can honour
 * (code `runtime_option_invalid`): a `recordTtlMs` that is neither a positive integer nor
 * `Infinity`, a `recordTtlMs` beside a `store` of your own (set it on that store), a
 * `jobRetention` age or count out of range. Thrown before any connection opens or anything is
 * written; `details.option` names the option, `details.factory` the factory.
 */
export class RuntimeOptionError extends ReactorError<'runtime_option_invalid'> {
  constructor(info: { factory: string; option: string; value: string }, problem: string) {
    super(ErrorCode.RuntimeOptionInvalid, `${info.factory}: ${info.option} ${problem}; got ${info.value}`, {
      details: { ...info },
    });
    this.name = 'RuntimeOptionError';
  }
}

/**
 * A filter of `engine.list` is not valid (code `list_filter_invalid`): a limit out of bounds, a
 * cursor this store did not hand out, a time range that is not one, an unknown status, or tags
 * that break the tag limits. `details.field` names the filter field.
 */
export class ListFilterError extends ReactorError<'list_filter_invalid'> {
  constructor(info: { field: string; value: string }, problem: string) {
    super(ErrorCode.ListFilterInvalid, `list filter ${info.field} ${problem}; got ${info.value}`, {
      details: { ...info },
    });
    this.name = 'ListFilterError';
  }
}

/**
 * A schedule's definition is not valid (code `schedule_invalid`): `details.field` names the
 * option at fault (`cron.pattern`, `cron.tz`, `every`, …), `details.reason` says why.
 */
export class ScheduleInvalidError extends ReactorError<'schedule_invalid'> {
  constructor(info: { schedule: string; field: string; reason: string; issues?: readonly FieldIssue[] }) {
    super(ErrorCode.ScheduleInvalid, `schedule "${info.schedule}": ${info.field} ${info.reason}`, {
      details: { ...info },
    });
    this.name = 'ScheduleInvalidError';
  }
}

/** No schedule has that id (code `schedule_not_found`). */
export class ScheduleNotFoundError extends ReactorError<'schedule_not_found'> {
  constructor(schedule: string) {
    super(ErrorCode.ScheduleNotFound, `no schedule "${schedule}"`, { details: { schedule } });
    this.name = 'ScheduleNotFoundError';
  }
}

/**
 * A sleep step of an inline run would wait longer than the engine's `maxInlineSleepMs`, and the
 * run cannot hand off to a worker (code `sleep_needs_worker`): the engine has no queue, or the run
 * is an inline resume. The step fails; the steps before it are undone (docs/time.md#sleeps).
 */
export class SleepNeedsWorkerError extends ReactorError<'sleep_needs_worker'> {
  constructor(info: { step: string; sleepMs: number; maxInlineSleepMs: number }) {
    super(
      ErrorCode.SleepNeedsWorker,
      `sleep "${info.step}": ${info.sleepMs} ms is longer than an inline run waits (maxInlineSleepMs ${info.maxInlineSleepMs}); give the engine a queue so a worker sleeps it, run the reactor in the background, or raise maxInlineSleepMs`,
      { details: { ...info } },
    );
    this.name = 'SleepNeedsWorkerError';
  }
}

/** A persisted execution record is larger than the configured limit. */
export class RecordTooLargeError extends ReactorError<'record_too_large'> {
  /**
   * `mapStates`: the map whose element states (kept apart from the record) were too large.
   * `entry`: the index of the `startMany` entry whose first record it is.
   */
  constructor(executionId: string, bytes: number, limit: number, mapStates?: string, entry?: number) {
    super(
      ErrorCode.RecordTooLarge,
      mapStates === undefined
        ? `${entry === undefined ? '' : `startMany entry ${entry}: `}execution ${executionId}: record is ${bytes} bytes, over the ${limit}-byte limit; keep step results small (store blobs elsewhere and return ids)`
        : `execution ${executionId}: the element states of map "${mapStates}" are ${bytes} bytes, over the ${limit}-byte limit (maxMapStateBytes); return smaller element results or split the map`,
      {
        details: {
          executionId,
          bytes,
          limit,
          ...(mapStates === undefined ? {} : { mapStates }),
          ...(entry === undefined ? {} : { entry }),
        },
      },
    );
    this.name = 'RecordTooLargeError';
  }
}

/**
 * A map's source has more elements than the map's `maxElements` (code `map_too_large`): the map
 * fails before any element runs, and the run rolls back like any failed step.
 */
export class MapTooLargeError extends ReactorError<'map_too_large'> {
  constructor(step: string, elements: number, limit: number) {
    super(
      ErrorCode.MapTooLarge,
      `map "${step}": the source has ${elements} elements, over the map's limit of ${limit} (maxElements); raise maxElements on the map, or split the collection across runs (docs/limits.md)`,
      { details: { step, elements, limit } },
    );
    this.name = 'MapTooLargeError';
  }
}

/** A persisted record carries a schema version this code does not read. */
export class RecordVersionError extends ReactorError<'record_version_mismatch'> {
  constructor(found: unknown, expected: number) {
    super(
      ErrorCode.RecordVersion,
      `persisted record has schema version ${String(found)}, this version of ts-reactor reads ${expected}`,
      {
        details: { found, expected },
      },
    );
    this.name = 'RecordVersionError';
  }
}

/** A non-Error value was thrown from user code; the value is kept in `details.value`. */
export class WrappedThrowError extends ReactorError<'wrapped_throw'> {
  constructor(value: unknown) {
    super(ErrorCode.Wrapped, `a non-Error value was thrown: ${safeString(value)}`, {
      details: { value: jsonSafe(value) },
    });
    this.name = 'WrappedThrowError';
  }
}

/**
 * An error rebuilt from JSON whose original class is not a ts-reactor class. It serializes back
 * to exactly the JSON it was built from, so repeated round trips are stable.
 */
export class RemoteError extends ReactorError<AnyErrorCode, Readonly<ErrorDetails['remote_error']>> {
  /** The JSON this error was rebuilt from. */
  readonly original: ErrorJSON;
  constructor(json: ErrorJSON) {
    // The original's code is kept as is, known or not (`code` is typed to allow any string here).
    super((json.code ?? ErrorCode.Remote) as ErrorCode, json.message, {
      details: { ...(json.details ?? {}), originalName: json.name },
      cause: json.cause === undefined ? undefined : errorFromJSON(json.cause),
    });
    this.name = json.name;
    this.original = json;
    if (json.stack !== undefined) this.stack = json.stack;
  }
}

/** Turns anything thrown into an Error (non-Error values are wrapped). */
export function toError(value: unknown): Error {
  return value instanceof Error ? value : new WrappedThrowError(value);
}

/** Serializes any error (ts-reactor or not) to {@link ErrorJSON}. */
export function errorToJSON(error: unknown, depth = 0): ErrorJSON {
  if (error instanceof RemoteError) return error.original;
  const err = toError(error);
  const json: { -readonly [K in keyof ErrorJSON]: ErrorJSON[K] } = { name: err.name, message: err.message };
  if (ReactorError.is(err)) {
    json.code = err.code;
    if (Object.keys(err.details).length > 0) json.details = jsonSafe(err.details) as Record<string, unknown>;
  } else if (typeof (err as unknown as { code?: unknown }).code === 'string') {
    json.code = (err as unknown as { code: string }).code;
  }
  if (err.stack !== undefined) json.stack = err.stack;
  if (err.cause !== undefined && depth < 8) json.cause = errorToJSON(err.cause, depth + 1);
  return json;
}

/**
 * Rebuilds an error from {@link errorToJSON}'s output. `code`, `message`, `details`, `stack` and
 * `cause` survive. A ts-reactor error comes back as its own class (`instanceof ContentionError`
 * holds after a trip through a record or another process) when its `name` and `code` match that
 * class; anything else becomes a {@link RemoteError} with the original name.
 *
 * @example
 * ```ts
 * const back = errorFromJSON(JSON.parse(JSON.stringify(error)));
 * if (back instanceof ContentionError) console.log(back.details.key);
 * ```
 */
export function errorFromJSON(json: ErrorJSON): ReactorError {
  const kind = REVIVABLE.get(json.name);
  if (
    kind === undefined ||
    json.code === undefined ||
    !(kind.codes === 'any' || (kind.codes as readonly string[]).includes(json.code))
  )
    return new RemoteError(json);
  return revive(kind, json);
}

/** A ts-reactor class {@link errorFromJSON} rebuilds: its prototype, its codes, and the fields it derives from `details`. */
interface Revivable {
  readonly prototype: ReactorError;
  readonly codes: readonly ErrorCode[] | 'any';
  readonly fields?: (details: Readonly<Record<string, unknown>>) => Record<string, unknown>;
}

const REVIVABLE = new Map<string, Revivable>();

/** Builds an instance of `kind` without running its constructor (each takes different arguments). */
function revive(kind: Revivable, json: ErrorJSON): ReactorError {
  const error = Object.create(kind.prototype) as ReactorError;
  const details = Object.freeze({ ...(json.details ?? {}) });
  const hidden = (value: unknown): PropertyDescriptor => ({
    value,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  Object.defineProperty(error, 'message', hidden(json.message));
  Object.assign(error, { [BRAND]: true, code: json.code, details, name: json.name, ...kind.fields?.(details) });
  if (json.cause !== undefined) Object.defineProperty(error, 'cause', hidden(errorFromJSON(json.cause)));
  if (json.stack !== undefined) Object.defineProperty(error, 'stack', hidden(json.stack));
  else Error.captureStackTrace(error, errorFromJSON);
  return error;
}

/** The message of anything thrown. */
export function messageOf(value: unknown): string {
  return value instanceof Error ? value.message : safeString(value);
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}

function jsonSafe(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return String(value);
  }
}

/**
 * A coordination backend could not be reached or did not answer (connection closed, server
 * loading or busy) for longer than the outage tolerance. The transition may or may not have
 * happened; every transition is retry-safe. `details.operation` names the call (`lock-acquire` …);
 * `details.waitedMs`, when present, is how long the call kept trying.
 */
export class CoordinationUnavailableError extends ReactorError<'coordination_unavailable'> {
  constructor(operation: string, cause: unknown, waitedMs?: number) {
    super(
      'coordination_unavailable',
      `coordination backend unavailable during ${operationWords(operation)}${waitedWords(waitedMs)}: ${messageOf(cause)}`,
      {
        cause,
        details: { operation, ...(waitedMs === undefined ? {} : { waitedMs }) },
      },
    );
    this.name = 'CoordinationUnavailableError';
  }
}

/** An operation id (`store-save`, `lock-acquire`) in words (`store save`, `lock acquire`). */
function operationWords(operation: string): string {
  return operation.startsWith('record-save') ? 'store save' : operation.replaceAll('-', ' ');
}

function waitedWords(waitedMs: number | undefined): string {
  return waitedMs === undefined ? '' : ` (Redis did not answer for ${(waitedMs / 1000).toFixed(1)} s)`;
}

/**
 * A backend script answered with an error. `details.script` names it; `details.reason` is the
 * script's error code (e.g. `RX_ARG` for an invalid argument) or `redis` for a server error.
 */
export class ScriptError extends ReactorError<'script_failed'> {
  constructor(script: string, reason: string, message: string, cause?: unknown) {
    super('script_failed', `script ${script} failed (${reason}): ${message}`, { cause, details: { script, reason } });
    this.name = 'ScriptError';
  }
}

/**
 * The execution store could not be reached or did not answer for longer than the outage
 * tolerance (connection closed, server loading or busy). The write may or may not have
 * happened; every store write is retry-safe. `details.operation` names the call (`store-save` …).
 */
export class StoreUnavailableError extends ReactorError<'store_unavailable'> {
  constructor(operation: string, cause: unknown, waitedMs?: number) {
    super(
      'store_unavailable',
      `execution store unavailable during ${operationWords(operation)}${waitedWords(waitedMs)}: ${messageOf(cause)}`,
      {
        cause,
        details: { operation, ...(waitedMs === undefined ? {} : { waitedMs }) },
      },
    );
    this.name = 'StoreUnavailableError';
  }
}

/**
 * The job queue (BullMQ) could not be reached for longer than the outage tolerance while a job
 * was enqueued or promoted. The job may or may not have been added; adding it again is harmless
 * (job ids are deduplicated). `details.operation` names the call (`job-enqueue`, `job-promote`).
 */
export class QueueUnavailableError extends ReactorError<'queue_unavailable'> {
  constructor(operation: string, cause: unknown, waitedMs?: number) {
    super(
      'queue_unavailable',
      `job queue unavailable during ${operationWords(operation)}${waitedWords(waitedMs)}: ${messageOf(cause)}`,
      {
        cause,
        details: { operation, ...(waitedMs === undefined ? {} : { waitedMs }) },
      },
    );
    this.name = 'QueueUnavailableError';
  }
}

/**
 * A worker no longer holds the liveness lease of the execution it was working on (it expired
 * while the process was frozen or cut off, or another worker took the execution over). It
 * stops that execution and writes nothing more to its record; the lease's holder goes on.
 * Also the reason `ctx.signal` is aborted with in that case.
 */
export class LeaseLostError extends ReactorError<'lease_lost'> {
  constructor(executionId: string, how: 'expired' | 'taken_over') {
    const why =
      how === 'expired' ? 'its lease ran out on this worker before it could be renewed' : 'another worker holds it now';
    super(
      'lease_lost',
      `execution ${executionId}: this worker lost its liveness lease (${why}); it stopped without writing the record`,
      { details: { executionId, how } },
    );
    this.name = 'LeaseLostError';
  }
}

/** No record of the execution exists (never started, expired, or lost by a Redis restart without persistence). */
export class ExecutionNotFoundError extends ReactorError<'execution_not_found'> {
  constructor(executionId: string) {
    super(
      'execution_not_found',
      `execution ${executionId} has no record (never started, expired, or lost by a store without persistence)`,
      { details: { executionId } },
    );
    this.name = 'ExecutionNotFoundError';
  }
}

/**
 * `engine.result(id, reactor)` or `engine.wait(id, reactor)` was given a reactor the execution
 * does not belong to: its record names another one. `details.expected` is the reactor given,
 * `details.actual` the record's.
 */
export class ExecutionReactorMismatchError extends ReactorError<'execution_reactor_mismatch'> {
  constructor(executionId: string, expected: string, actual: string) {
    super('execution_reactor_mismatch', `execution ${executionId} belongs to reactor "${actual}", not "${expected}"`, {
      details: { executionId, expected, actual },
    });
    this.name = 'ExecutionReactorMismatchError';
  }
}

/**
 * `requireDurability` is set and the Redis server does not keep what it acknowledged across a
 * restart (no AOF with `appendfsync always` or `everysec`), can evict keys (`maxmemory-policy`
 * other than `noeviction`), or its settings could not be read. Nothing was started.
 * `details.warnings` says what was found and which setting to change; `details.persistence`,
 * `details.evicts` and `details.checked` are the check's verdict.
 */
export class DurabilityError extends ReactorError<'durability_required'> {
  constructor(info: {
    persistence: string;
    evicts: boolean | undefined;
    checked: boolean;
    warnings: readonly string[];
  }) {
    super(
      'durability_required',
      `requireDurability: Redis is not durable: ${info.warnings.join('; ') || `persistence ${info.persistence}`}`,
      { details: { ...info } },
    );
    this.name = 'DurabilityError';
  }
}

/**
 * A backend URL's scheme is not one this build serves (code `backend_unavailable`): a backend
 * that is known but not available yet (`details.backend`, e.g. `postgres`), or no backend at all.
 * `details.scheme` is the URL's scheme, `details.available` the schemes that are served. Thrown
 * before anything is opened.
 */
export class BackendUnavailableError extends ReactorError<'backend_unavailable'> {
  /** `url`: the URL as it may be printed (its password redacted); only in the message. */
  constructor(info: { scheme: string; backend?: string | undefined; available: readonly string[] }, url: string) {
    const served = info.available.map((scheme) => `${scheme}//host[:port]`).join(' or ');
    super(
      'backend_unavailable',
      info.backend === undefined
        ? `"${url}" is not a URL of a backend (scheme ${info.scheme}); expected ${served}`
        : `"${url}": the ${info.backend} backend is not available yet (scheme ${info.scheme}); expected ${served}`,
      { details: { ...info } },
    );
    this.name = 'BackendUnavailableError';
  }
}

/** A status write the execution state machine does not allow (e.g. a finished execution set running again). */
export class StatusTransitionError extends ReactorError<'status_transition_invalid'> {
  /** `cause`: why the write was made (the status machine's transition cause), named in the message. */
  constructor(executionId: string, from: string, to: string, cause?: string) {
    const why = cause === undefined ? '' : ` (written by ${cause})`;
    super('status_transition_invalid', `execution ${executionId}: status ${from} cannot become ${to}${why}`, {
      details: { executionId, from, to },
    });
    this.name = 'StatusTransitionError';
  }
}

/**
 * The process that ran the execution inline (`engine.run`) stopped holding its liveness lease
 * (it died, or was cut off for longer than the lease), and the worker whose recovery sweep found
 * it could not continue it — its reactor is not registered there, or the run was rolling back —
 * so the sweep ended it `aborted`. Nothing was undone by the sweep. `details.step` is a step that
 * was running when the process stopped, if any; `details.rollingBack` is true for a rollback.
 */
export class InlineRunAbandonedError extends ReactorError<'inline_run_abandoned'> {
  constructor(info: {
    readonly executionId: string;
    readonly reactor: string;
    readonly step?: string | undefined;
    readonly rollingBack?: boolean;
  }) {
    const at = info.step === undefined ? '' : ` (step "${info.step}" was running)`;
    const why =
      info.rollingBack === true
        ? 'its rollback cannot be resumed elsewhere'
        : `reactor "${info.reactor}" is not registered with the worker that found it`;
    super(
      'inline_run_abandoned',
      `execution ${info.executionId} ran inline in a process that stopped${at}; ${why}, so it was aborted`,
      {
        details: {
          executionId: info.executionId,
          reactor: info.reactor,
          ...(info.step === undefined ? {} : { step: info.step }),
          rollingBack: info.rollingBack === true,
        },
      },
    );
    this.name = 'InlineRunAbandonedError';
  }
}

/** A worker shut down before the step finished: `ctx.signal` is aborted with it and the job is handed back to the queue. */
export class WorkerShutdownError extends ReactorError<'worker_shutdown'> {
  constructor(timeoutMs: number) {
    super(
      'worker_shutdown',
      `the worker shut down (its ${timeoutMs} ms shutdown deadline passed); the execution continues on another worker`,
      { details: { timeoutMs } },
    );
    this.name = 'WorkerShutdownError';
  }
}

/**
 * A coordination key was busy for longer than the declared `wait` (in-process), or beyond the
 * contention cap (worker). Nothing of the attempt ran and nothing is left held.
 */
export class ContentionError extends ReactorError<'contention'> {
  constructor(info: {
    reactor: string;
    step?: string | undefined;
    primitive: ContendedPrimitive;
    key: string;
    waitedMs: number;
    holder?: string | undefined;
  }) {
    const where =
      info.step === undefined ? `reactor "${info.reactor}"` : `reactor "${info.reactor}", step "${info.step}"`;
    const holder = info.holder === undefined ? '' : ` (held by ${info.holder})`;
    super(
      'contention',
      `${where}: ${info.primitive.replace('_', ' ')} "${info.key}" still busy after ${info.waitedMs} ms${holder}`,
      { details: { ...info } },
    );
    this.name = 'ContentionError';
  }
}

/** A rate limit refused a start: `details` carries the window, the limit and `retryAfterMs`. */
export class RateLimitedError extends ReactorError<'rate_limited'> {
  constructor(info: {
    reactor: string;
    step?: string | undefined;
    key: string;
    limit: number;
    periodMs: number;
    count: number;
    retryAfterMs: number;
  }) {
    const where =
      info.step === undefined ? `reactor "${info.reactor}"` : `reactor "${info.reactor}", step "${info.step}"`;
    super(
      'rate_limited',
      `${where}: rate limit "${info.key}" allows ${info.limit} per ${info.periodMs} ms (${info.count} in the window); retry after ${Math.ceil(info.retryAfterMs)} ms`,
      {
        details: { ...info },
      },
    );
    this.name = 'RateLimitedError';
  }
}

/** A coordination key function threw or returned something other than a non-empty string. */
export class CoordinationKeyError extends ReactorError<'coordination_key_invalid'> {
  constructor(
    info: { reactor: string; step?: string | undefined; primitive: PrimitiveName; problem: string },
    cause?: unknown,
  ) {
    const where =
      info.step === undefined ? `reactor "${info.reactor}"` : `reactor "${info.reactor}", step "${info.step}"`;
    super(
      'coordination_key_invalid',
      `${where}: the ${info.primitive.replace('_', ' ')} key could not be computed: ${info.problem}`,
      { cause, details: { ...info } },
    );
    this.name = 'CoordinationKeyError';
  }
}

/**
 * A semaphore's or rate window's `limit` function threw, or returned something other than an
 * integer ≥ 1, at admission: nothing was taken.
 */
export class CoordinationLimitError extends ReactorError<'coordination_limit_invalid'> {
  constructor(
    info: { reactor: string; step?: string | undefined; primitive: PrimitiveName; key: string; problem: string },
    cause?: unknown,
  ) {
    const where =
      info.step === undefined ? `reactor "${info.reactor}"` : `reactor "${info.reactor}", step "${info.step}"`;
    super(
      'coordination_limit_invalid',
      `${where}: the ${info.primitive.replace('_', ' ')} limit of key "${info.key}" could not be computed: ${info.problem}; a limit function must return an integer >= 1`,
      { cause, details: { ...info } },
    );
    this.name = 'CoordinationLimitError';
  }
}

/** A declaration names a rate limit the engine was not given. */
export class UnknownRateLimitError extends ReactorError<'rate_limit_unknown'> {
  constructor(reactor: string, name: string, known: readonly string[]) {
    super(
      'rate_limit_unknown',
      `reactor "${reactor}": unknown named rate limit "${name}"; register it with createEngine({ rateLimits: { ${name}: [...] } }) (known: ${known.join(', ') || 'none'})`,
      {
        details: { reactor, name, known },
      },
    );
    this.name = 'UnknownRateLimitError';
  }
}

/** An ordered-lock position belongs to a batch that was drained or reset. */
export class OrderedLockStaleError extends ReactorError<'ordered_lock_stale'> {
  constructor(info: { reactor: string; key: string; nonce: number; epoch: number; currentEpoch: number | undefined }) {
    const why =
      info.currentEpoch === undefined
        ? 'was passed over (its holder showed no sign of life for the poison timeout, or an operator skipped it)'
        : `belongs to epoch ${info.epoch}, the key is at epoch ${info.currentEpoch}`;
    super('ordered_lock_stale', `reactor "${info.reactor}": ordered lock "${info.key}" position ${info.nonce} ${why}`, {
      details: { ...info },
    });
    this.name = 'OrderedLockStaleError';
  }
}

/** The holder learned it no longer holds a lock or semaphore slot (expired or taken over). */
export class HoldLostError extends ReactorError<'hold_lost'> {
  constructor(info: { reactor: string; step?: string | undefined; primitive: PrimitiveName; key: string }) {
    super(
      'hold_lost',
      `reactor "${info.reactor}": lost the ${info.primitive.replace('_', ' ')} "${info.key}" while working (it expired or was taken over)`,
      { details: { ...info } },
    );
    this.name = 'HoldLostError';
  }
}

/** A job payload that is malformed or of another format version: failed at once, never retried. */
export class MalformedJobError extends ReactorError<'job_malformed'> {
  constructor(problem: string, payload: unknown) {
    super('job_malformed', `job payload rejected: ${problem}`, { details: { problem, payload: safePayload(payload) } });
    this.name = 'MalformedJobError';
  }
}

function safePayload(payload: unknown): unknown {
  try {
    const json = JSON.stringify(payload);
    return json !== undefined && json.length <= 2_000 ? (JSON.parse(json) as unknown) : String(json).slice(0, 2_000);
  } catch {
    return String(payload);
  }
}

/** The execution was cancelled by an operator; completed work was rolled back. */
export class CancelledError extends ReactorError<'cancelled'> {
  constructor(executionId: string, reason: string) {
    super('cancelled', `execution ${executionId} was cancelled: ${reason}`, { details: { executionId, reason } });
    this.name = 'CancelledError';
  }
}

/**
 * The reactor's `deadline` passed before the execution finished (code `deadline_exceeded`): it was
 * cancelled and rolled back like an operator's cancel — completed steps undone, the running
 * step's `ctx.signal` aborted with this error — and ended `cancelled` with this error as its
 * `cause`. `details.deadlineAt` is the instant (engine clock, ms), `details.deadlineMs` the option.
 */
export class DeadlineExceededError extends ReactorError<'deadline_exceeded'> {
  constructor(info: { executionId: string; deadlineAt: number; deadlineMs: number }) {
    super(
      ErrorCode.DeadlineExceeded,
      `execution ${info.executionId} passed its reactor's deadline (${info.deadlineMs} ms, due at ${info.deadlineAt} on the engine clock); it was cancelled and rolled back`,
      { details: { ...info } },
    );
    this.name = 'DeadlineExceededError';
  }
}

/**
 * A later start of the same reactor with the same `debounce` key came within the window
 * (code `superseded`): the execution ended `cancelled` before it ran, with this error as its
 * `cause`. `details.supersededBy` is the execution of that later start (it may in turn be
 * superseded), `details.debounceKey` the key.
 */
export class SupersededError extends ReactorError<'superseded'> {
  constructor(info: { executionId: string; supersededBy: string; debounceKey: string }) {
    super(
      ErrorCode.Superseded,
      `execution ${info.executionId} was superseded by ${info.supersededBy}, a later start with debounce key "${info.debounceKey}"; it never ran`,
      { details: { ...info } },
    );
    this.name = 'SupersededError';
  }
}

/** An operation does not apply to the execution in its current state (e.g. cancelling a finished run). */
export class ExecutionStateError extends ReactorError<'execution_state'> {
  constructor(executionId: string, operation: string, stored: string, hint: string) {
    const status = stored === 'pending' ? 'queued' : stored; // the name users see (decision 107)
    super('execution_state', `cannot ${operation} execution ${executionId}: it is ${status}; ${hint}`, {
      details: { executionId, operation, status },
    });
    this.name = 'ExecutionStateError';
  }
}

/**
 * A fan-out map cannot go on: `fan_out_unknown` — its ledger or an element is unknown (never
 * opened, expired, an index out of range, a map the reactor does not have); `fan_out_unavailable`
 * — the engine has no fan-out ledger. `details` names the map (`mapId` or `step`).
 */
export class FanOutError extends ReactorError<'fan_out_unknown' | 'fan_out_unavailable'> {
  constructor(code: 'fan_out_unknown' | 'fan_out_unavailable', message: string, details: FanOutDetails) {
    super(code, message, { details });
    this.name = 'FanOutError';
  }
}

/**
 * Dispatching an `asyncStep` or `asyncReactor` was refused before anything was queued: it
 * declares a lock (or a limit-1 semaphore) on a key its own dispatching execution holds, so the
 * unit would wait for a key its dispatcher keeps. Never retried; the dispatching step is not
 * compensated (it never started).
 */
export class HandOffRefusedError extends ReactorError<'handoff_refused'> {
  constructor(info: {
    reactor: string;
    step: string;
    kind: 'step' | 'reactor';
    primitive: 'lock' | 'semaphore';
    key: string;
    executionId: string;
    holder: string;
    declaredBy?: string;
  }) {
    const what = info.kind === 'step' ? 'asyncStep' : 'asyncReactor';
    const on = info.declaredBy === undefined ? '' : ` (on its ${info.declaredBy})`;
    super(
      'handoff_refused',
      `reactor "${info.reactor}", step "${info.step}": refused to dispatch the ${what}: it declares ${info.primitive} "${info.key}"${on}, which the dispatching execution ${info.executionId} holds (${info.holder}); ` +
        `the unit would wait for a key its dispatcher keeps. Run it inline (.step), compose it (.compose), or narrow its key so it differs from the held one`,
      { details: { ...info } },
    );
    this.name = 'HandOffRefusedError';
  }
}

/**
 * A reader of an async unit's result gave up: an in-process caller after `asyncWaitMs`, a worker
 * after `asyncParkTimeoutMs` since the dispatch. The unit itself goes on (or is discarded if the
 * reader's execution rolls back).
 */
export class AsyncWaitTimeoutError extends ReactorError<'async_wait_timeout'> {
  constructor(info: { reactor: string; step: string; unitId: string; waitedMs: number; mode: 'wait' | 'park' }) {
    const how = info.mode === 'wait' ? 'waited' : 'stayed parked';
    super(
      'async_wait_timeout',
      `reactor "${info.reactor}", step "${info.step}": ${how} ${info.waitedMs} ms for async unit ${info.unitId} to finish; raise background.${info.mode === 'wait' ? 'asyncWaitMs' : 'asyncParkTimeoutMs'} or read the result later`,
      {
        details: { ...info },
      },
    );
    this.name = 'AsyncWaitTimeoutError';
  }
}

/**
 * `engine.resume` was refused: another resume was accepted first (`already_resumed`), the
 * execution is not paused (finished, cancelled, rolling back, running), it has no such interrupt,
 * or no execution waits on the correlation id. Nothing changed.
 */
export class ResumeRefusedError extends ReactorError<'resume_refused'> {
  constructor(
    info: {
      executionId: string | undefined;
      step?: string | undefined;
      reason: ResumeRefusal;
      status?: string | undefined;
      correlationId?: string | undefined;
    },
    hint: string,
  ) {
    const what =
      info.executionId === undefined
        ? `correlation id "${info.correlationId ?? ''}"`
        : `execution ${info.executionId}${info.step === undefined ? '' : ` at "${info.step}"`}`;
    super('resume_refused', `cannot resume ${what}: ${hint}`, { details: { ...info } });
    this.name = 'ResumeRefusedError';
  }
}

/**
 * An operator's action on a failed step was refused before anything changed: `engine.retryStep`,
 * `skipStep` and `rollback` need an execution paused on a step's failure, `fork` a finished one or
 * one paused on a failure; `details.reason` says why (see {@link FailureActionRefusal}).
 */
export class FailureActionError extends ReactorError<'failure_action_refused'> {
  constructor(
    info: {
      executionId: string;
      action: FailureAction;
      reason: FailureActionRefusal;
      step?: string | undefined;
      status?: string | undefined;
      issues?: readonly FieldIssue[] | undefined;
    },
    hint: string,
  ) {
    super('failure_action_refused', `cannot ${info.action} execution ${info.executionId}: ${hint}`, {
      details: { ...info },
    });
    this.name = 'FailureActionError';
  }
}

/**
 * A resume payload failed the interrupt's schema. It counts toward the interrupt's `maxAttempts`;
 * `details.exhausted` is true when this one used the last attempt (the run rolled back and ended failed).
 */
export class ResumePayloadError extends ReactorError<'resume_payload_invalid'> {
  readonly issues: readonly FieldIssue[];
  constructor(
    info: { executionId: string; step: string; attempt: number; maxAttempts: number; exhausted: boolean },
    issues: readonly FieldIssue[],
  ) {
    const summary = issues.map((i) => `${i.path || '(payload)'}: ${i.message}`).join('; ');
    const left = info.exhausted
      ? 'no attempts left: the run was rolled back and ended failed'
      : info.maxAttempts === 0
        ? 'send a valid payload'
        : `${info.maxAttempts - info.attempt} attempt(s) left`;
    super(
      'resume_payload_invalid',
      `execution ${info.executionId}, interrupt "${info.step}": invalid payload (${summary}); invalid attempt ${info.attempt}${info.maxAttempts === 0 ? '' : ` of ${info.maxAttempts}`}, ${left}`,
      {
        details: { ...info, issues },
      },
    );
    this.name = 'ResumePayloadError';
    this.issues = issues;
  }
}

/** An interrupt's timeout passed before an accepted resume: the run rolled back and ended failed. */
export class InterruptTimeoutError extends ReactorError<'interrupt_timed_out'> {
  constructor(info: { executionId: string; step: string; timeoutAt: number; strategy: 'lazy' | 'active' }) {
    super(
      'interrupt_timed_out',
      `execution ${info.executionId}, interrupt "${info.step}": timed out at ${new Date(info.timeoutAt).toISOString()} (${info.strategy}); the run was rolled back`,
      { details: { ...info } },
    );
    this.name = 'InterruptTimeoutError';
  }
}

/** Another paused execution holds the interrupt's correlation id: the interrupt step fails before pausing. */
export class CorrelationTakenError extends ReactorError<'correlation_id_taken'> {
  constructor(info: { correlationId: string; step: string; holder: string }) {
    super(
      'correlation_id_taken',
      `interrupt "${info.step}": correlation id "${info.correlationId}" is held by paused execution ${info.holder}; correlation ids must be unique (include the business id in it)`,
      {
        details: { ...info },
      },
    );
    this.name = 'CorrelationTakenError';
  }
}

/** The issues carried in `details.issues` (validation errors). */
function issuesOf(details: Readonly<Record<string, unknown>>): { issues: readonly FieldIssue[] } {
  return { issues: Array.isArray(details.issues) ? (details.issues as FieldIssue[]) : [] };
}

// Names spelled out (not `Class.name`): a minifier may rename classes, never these strings.
const REVIVE: readonly [string, { readonly prototype: ReactorError }, Revivable['codes'], Revivable['fields']?][] = [
  ['ReactorError', ReactorError, 'any'],
  ['DefinitionError', DefinitionError, [ErrorCode.Definition], (d) => ({ reactor: d.reactor, step: d.step })],
  ['ValidationError', ValidationError, [ErrorCode.InputInvalid, ErrorCode.ArgumentsInvalid], issuesOf],
  ['ArgumentResolutionError', ArgumentResolutionError, [ErrorCode.ArgumentResolution]],
  ['NonRetryableError', NonRetryableError, [ErrorCode.NonRetryable]],
  ['StepTimeoutError', StepTimeoutError, [ErrorCode.StepTimedOut]],
  ['ScheduleInvalidError', ScheduleInvalidError, [ErrorCode.ScheduleInvalid]],
  ['ScheduleNotFoundError', ScheduleNotFoundError, [ErrorCode.ScheduleNotFound]],
  ['SleepNeedsWorkerError', SleepNeedsWorkerError, [ErrorCode.SleepNeedsWorker]],
  ['RecordTooLargeError', RecordTooLargeError, [ErrorCode.RecordTooLarge]],
  ['StartOptionsError', StartOptionsError, [ErrorCode.StartOptionsInvalid]],
  ['TagsInvalidError', TagsInvalidError, [ErrorCode.TagsInvalid]],
  ['ListFilterError', ListFilterError, [ErrorCode.ListFilterInvalid]],
  ['RuntimeOptionError', RuntimeOptionError, [ErrorCode.RuntimeOptionInvalid]],
  ['MapTooLargeError', MapTooLargeError, [ErrorCode.MapTooLarge]],
  ['RecordVersionError', RecordVersionError, [ErrorCode.RecordVersion]],
  ['WrappedThrowError', WrappedThrowError, [ErrorCode.Wrapped]],
  ['CoordinationUnavailableError', CoordinationUnavailableError, ['coordination_unavailable']],
  ['ScriptError', ScriptError, ['script_failed']],
  ['StoreUnavailableError', StoreUnavailableError, ['store_unavailable']],
  ['QueueUnavailableError', QueueUnavailableError, ['queue_unavailable']],
  ['LeaseLostError', LeaseLostError, ['lease_lost']],
  ['ExecutionNotFoundError', ExecutionNotFoundError, ['execution_not_found']],
  ['ExecutionReactorMismatchError', ExecutionReactorMismatchError, ['execution_reactor_mismatch']],
  ['StatusTransitionError', StatusTransitionError, ['status_transition_invalid']],
  ['DurabilityError', DurabilityError, ['durability_required']],
  ['BackendUnavailableError', BackendUnavailableError, ['backend_unavailable']],
  ['WorkerShutdownError', WorkerShutdownError, ['worker_shutdown']],
  ['InlineRunAbandonedError', InlineRunAbandonedError, ['inline_run_abandoned']],
  ['ContentionError', ContentionError, ['contention']],
  ['RateLimitedError', RateLimitedError, ['rate_limited']],
  ['CoordinationKeyError', CoordinationKeyError, ['coordination_key_invalid']],
  ['CoordinationLimitError', CoordinationLimitError, ['coordination_limit_invalid']],
  ['UnknownRateLimitError', UnknownRateLimitError, ['rate_limit_unknown']],
  ['OrderedLockStaleError', OrderedLockStaleError, ['ordered_lock_stale']],
  ['HoldLostError', HoldLostError, ['hold_lost']],
  ['MalformedJobError', MalformedJobError, ['job_malformed']],
  ['CancelledError', CancelledError, ['cancelled']],
  ['DeadlineExceededError', DeadlineExceededError, ['deadline_exceeded']],
  ['SupersededError', SupersededError, ['superseded']],
  ['ExecutionStateError', ExecutionStateError, ['execution_state']],
  ['FanOutError', FanOutError, ['fan_out_unknown', 'fan_out_unavailable']],
  ['HandOffRefusedError', HandOffRefusedError, ['handoff_refused']],
  ['AsyncWaitTimeoutError', AsyncWaitTimeoutError, ['async_wait_timeout']],
  ['ResumeRefusedError', ResumeRefusedError, ['resume_refused']],
  ['FailureActionError', FailureActionError, ['failure_action_refused']],
  ['ResumePayloadError', ResumePayloadError, ['resume_payload_invalid'], issuesOf],
  ['InterruptTimeoutError', InterruptTimeoutError, ['interrupt_timed_out']],
  ['CorrelationTakenError', CorrelationTakenError, ['correlation_id_taken']],
];
for (const [name, type, codes, fields] of REVIVE)
  REVIVABLE.set(name, { prototype: type.prototype, codes, ...(fields === undefined ? {} : { fields }) });
