/**
 * The stable codes of every error ts-reactor produces, and the shape of `details` each code
 * carries. A leaf module: it imports nothing, so every layer may use it.
 *
 * @module
 */

/**
 * Every error code ts-reactor produces, by name: `ErrorCode.Contention` is `'contention'`.
 * The type {@link ErrorCode} is the union of these values; {@link ErrorDetails} gives the
 * `details` of each.
 */
export const ErrorCode = {
  /** A reactor or step definition is not valid; thrown when it is built. */
  Definition: 'definition_invalid',
  /** A reactor's input failed its contract (or a persisted input no longer validates). Never retried. */
  InputInvalid: 'input_invalid',
  /** A step's (or a composed reactor's) arguments failed their contract. Never retried. */
  ArgumentsInvalid: 'arguments_invalid',
  /** An argument source, path or transform threw; the step never started. Never retried. */
  ArgumentResolution: 'argument_resolution_failed',
  /** A step body threw `NonRetryableError`: failed without any further retry. */
  NonRetryable: 'non_retryable',
  /** An attempt of a step body ran past the step's `timeout`: its `ctx.signal` was aborted and the attempt failed. Retryable. */
  StepTimedOut: 'step_timed_out',
  /**
   * A sleep step of an inline run would wait longer than the engine's `maxInlineSleepMs` and the
   * run cannot hand off to a worker (the engine has no queue, or an inline resume): it fails.
   */
  SleepNeedsWorker: 'sleep_needs_worker',
  /**
   * `ctx.progress(data)` was given data that is not JSON (a cycle, a BigInt, a function, nothing)
   * or whose JSON is larger than the progress limit: thrown into the step, nothing published.
   */
  ProgressInvalid: 'progress_invalid',
  /** `engine.watch` on an engine built without an execution stream (`createEngine` without `executionStream`). */
  WatchUnavailable: 'watch_unavailable',
  /** A sleep step's `until` resolved to something else than a valid `Date` or epoch milliseconds; it never started. */
  SleepUntilInvalid: 'sleep_until_invalid',
  /** A persisted execution record is larger than the configured limit. */
  RecordTooLarge: 'record_too_large',
  /**
   * A map's source has more elements than the map's `maxElements` (default 10,000): the map
   * fails before any element runs. Raise `maxElements` or split the collection (docs/limits.md).
   */
  MapTooLarge: 'map_too_large',
  /** A persisted record carries a schema version this version of ts-reactor does not read. */
  RecordVersion: 'record_version_mismatch',
  /** An idempotency key points at an execution whose record is gone. */
  RecordNotFound: 'record_not_found',
  /** User code threw a value that is not an `Error`; the value is kept in `details.value`. */
  Wrapped: 'wrapped_throw',
  /** An error rebuilt from JSON whose original carried no code (a foreign error from a record or another process). */
  Remote: 'remote_error',
  /** The coordination backend did not answer within the outage tolerance. */
  CoordinationUnavailable: 'coordination_unavailable',
  /** A backend (Redis) script answered with an error. */
  ScriptFailed: 'script_failed',
  /** The execution store did not answer within the outage tolerance. */
  StoreUnavailable: 'store_unavailable',
  /** The job queue did not answer within the outage tolerance while a job was enqueued or promoted. */
  QueueUnavailable: 'queue_unavailable',
  /** A worker (or an inline run) lost the execution's liveness lease; it stops without writing the record. */
  LeaseLost: 'lease_lost',
  /** No record of the execution exists (never started, expired, or lost by a store without persistence). */
  ExecutionNotFound: 'execution_not_found',
  /** `engine.result(id, reactor)` / `engine.wait(id, reactor)`: the record belongs to another reactor. */
  ExecutionReactorMismatch: 'execution_reactor_mismatch',
  /** A status write the execution state machine does not allow; nothing is written. */
  StatusTransition: 'status_transition_invalid',
  /** `requireDurability` is set and Redis is not durable (or its settings could not be read). */
  DurabilityRequired: 'durability_required',
  /** A worker's shutdown deadline passed before the step finished; the job goes back to the queue. */
  WorkerShutdown: 'worker_shutdown',
  /** An inline run's process stopped and no worker could continue it: the execution ended `aborted`. */
  InlineRunAbandoned: 'inline_run_abandoned',
  /** A coordination key stayed busy for the declared wait, contention cap or `contentionTimeout`. */
  Contention: 'contention',
  /** A rate limit's window was full for the declared wait. */
  RateLimited: 'rate_limited',
  /** A coordination key function threw or returned something other than a non-empty string. */
  CoordinationKeyInvalid: 'coordination_key_invalid',
  /** A semaphore's or rate window's limit function threw or returned no integer ≥ 1; nothing was taken. */
  CoordinationLimitInvalid: 'coordination_limit_invalid',
  /** A declaration names a rate limit the engine was not given. */
  RateLimitUnknown: 'rate_limit_unknown',
  /** An ordered-lock position belongs to a batch that was drained, reset or passed over. */
  OrderedLockStale: 'ordered_lock_stale',
  /** A lock or semaphore slot was lost (expired or taken over) while the work ran. */
  HoldLost: 'hold_lost',
  /** A job payload that is malformed or of another format version: failed at once, never retried. */
  JobMalformed: 'job_malformed',
  /** An operator cancelled the execution; completed work was rolled back. */
  Cancelled: 'cancelled',
  /** The reactor's `deadline` passed: the execution was cancelled and rolled back (the `cause` of its `cancelled` end). */
  DeadlineExceeded: 'deadline_exceeded',
  /** A later debounced start with the same key superseded this one: it ended `cancelled` without running (the `cause`). */
  Superseded: 'superseded',
  /** An operation does not apply to the execution in its current status (e.g. cancelling a finished run). */
  ExecutionState: 'execution_state',
  /** A fan-out map's ledger or element is unknown (never opened, expired, out of range, no such map). */
  FanOutUnknown: 'fan_out_unknown',
  /** A map fans out, but the engine has no fan-out ledger. */
  FanOutUnavailable: 'fan_out_unavailable',
  /** An async unit was not dispatched: it would wait for a key its own dispatching execution holds. */
  HandOffRefused: 'handoff_refused',
  /** A reader of an async unit's result gave up waiting (`asyncWaitMs`, `asyncParkTimeoutMs`). */
  AsyncWaitTimeout: 'async_wait_timeout',
  /** A resume was refused (already resumed, not paused, no such interrupt, unknown correlation id); nothing changed. */
  ResumeRefused: 'resume_refused',
  /** An operator's action on a failed step (`retryStep`, `skipStep`, `rollback`, `fork`) was refused; nothing changed. */
  FailureActionRefused: 'failure_action_refused',
  /** A resume payload failed the interrupt's schema; counts toward its `maxAttempts`. */
  ResumePayloadInvalid: 'resume_payload_invalid',
  /** An interrupt's timeout passed before an accepted resume: the run rolled back. */
  InterruptTimedOut: 'interrupt_timed_out',
  /** A `.waitForEvent` step's timeout passed before a matching event, with `onTimeout: 'fail'`: the run rolled back. */
  EventWaitTimedOut: 'event_wait_timed_out',
  /** Another paused execution holds the interrupt's correlation id. */
  CorrelationIdTaken: 'correlation_id_taken',
  /** An interrupt's `correlationId` function threw or returned no non-empty string. */
  CorrelationIdInvalid: 'correlation_id_invalid',
  /** The engine has no interrupt claims (`createEngine({ interruptClaims })`), so an interrupt cannot pause. */
  InterruptsUnsupported: 'interrupts_unsupported',
  /** A read-model or dashboard query has a bad filter (limit, time range, status, key). */
  QueryInvalid: 'query_invalid',
  /** A dashboard action's field is missing or not valid. */
  ActionInvalid: 'action_invalid',
  /** A start option (`delay`, `at`, `priority`) of `engine.start` or `engine.startMany` is not valid; nothing was written. */
  StartOptionsInvalid: 'start_options_invalid',
  /** The `tags` of a run or start break a limit (count, key or value length, characters); nothing was written. */
  TagsInvalid: 'tags_invalid',
  /** A backend URL names a scheme no backend of this build serves (a backend not available yet, or none at all); nothing was opened. */
  BackendUnavailable: 'backend_unavailable',
  /** A runtime factory's option is not valid, or not one it can honour (`recordTtlMs`, `jobRetention`); nothing was opened. */
  RuntimeOptionInvalid: 'runtime_option_invalid',
  /** A filter of `engine.list` is not valid (limit, cursor, time range, status, tags). */
  ListFilterInvalid: 'list_filter_invalid',
  /**
   * An event given to `engine.send` / `engine.sendMany` is not valid: its name, id, `ts` or
   * options, or a payload that is not JSON, nests too deeply or is too large. Nothing was stored.
   */
  EventInvalid: 'event_invalid',
  /** An event's payload failed the schema of its declaration. Nothing was stored. */
  EventPayloadInvalid: 'event_payload_invalid',
  /** `engine.send` or `engine.listEvents` on an engine without an event log (`createEngine({ events })`). */
  EventsUnsupported: 'events_unsupported',
  /**
   * A reactor's start on a sent event failed: its `match`, `input` or `idempotencyKey` threw or
   * returned something unusable, the input failed the reactor's contract, or the start itself
   * failed. The event stays stored; the other triggers of the event ran.
   */
  EventTriggerFailed: 'event_trigger_failed',
  /** The PostgreSQL schema is missing or at another version than this ts-reactor's; run the migrations (or upgrade ts-reactor). */
  PostgresSchemaMismatch: 'postgres_schema_mismatch',
  /** PostgreSQL refused the connection string's login (user, password) or database; fix the URL, or create the database or role. */
  PostgresLoginRefused: 'postgres_login_refused',
  /** The PostgreSQL role lacks rights on ts-reactor's schema or tables; grant them (the message says how). */
  PostgresPermissionDenied: 'postgres_permission_denied',
  /** The work needs a coordinator (coordination declarations, liveness locks) and the engine has none. */
  CoordinatorMissing: 'coordinator_missing',
  /** The coordinator cannot list its keys (it does not implement `CoordinationInspector`). */
  InspectorMissing: 'inspector_missing',
  /** Background execution or an async unit needs a queue and the engine has none. */
  QueueMissing: 'queue_missing',
  /** A job or an operation names a reactor this engine or worker has not registered. */
  ReactorUnknown: 'reactor_unknown',
  /** An execution ran with a definition (fingerprint, version) this engine has not registered, and none registered migrates from it (docs/decisions/082). */
  VersionUnavailable: 'version_unavailable',
  /** A schedule's definition is not valid (id, cron pattern, time zone, interval, input, missed policy, window). */
  ScheduleInvalid: 'schedule_invalid',
  /** No schedule has that id. */
  ScheduleNotFound: 'schedule_not_found',
  /** A queued async unit's reactor no longer has that `asyncStep` (the definition changed). */
  AsyncUnitUnknown: 'async_unit_unknown',
  /** An async unit's worker stopped while compensating; the compensate is not repeated. */
  AsyncUnitInterrupted: 'async_unit_interrupted',
  /** An async unit ended without a result (failed, cancelled, aborted); its reader's step fails. */
  AsyncUnitFailed: 'async_unit_failed',
  /** An async unit's dispatcher rolled back (or is gone): its result is discarded and its compensate runs. */
  DispatcherRolledBack: 'dispatcher_rolled_back',
  /** A worker's reader of an async unit parks until the unit finishes (internal; never an execution's error). */
  AsyncPending: 'async_pending',
  /** `invoke()` was given a `ctx` not handed out by a run of this process. */
  InvokeContextUnknown: 'invoke_context_unknown',
  /** An inline resume tried to park (an internal invariant broke). */
  UnexpectedYield: 'unexpected_yield',
} as const;

/**
 * The stable code of an error ts-reactor produces: one of {@link ErrorCode}'s values, each
 * documented there. A `ReactorError` can only be constructed with one of these.
 */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** @deprecated Use {@link ErrorCode} (the type). */
export type ErrorCodeValue = ErrorCode;

/** One problem found while validating an input or arguments against a contract. */
export interface FieldIssue {
  /** Dotted path of the offending field (`''` for the whole value). */
  readonly path: string;
  readonly message: string;
}

/** The coordination primitives, as named in errors and events. */
export type PrimitiveName = 'lock' | 'semaphore' | 'rate_limit' | 'period' | 'ordered_lock';

/** The primitives a wait can time out on (a `period` never waits: it halts). */
export type ContendedPrimitive = Exclude<PrimitiveName, 'period'>;

/** Why a resume was refused (`ResumeRefusedError`). */
export type ResumeRefusal =
  | 'already_resumed'
  | 'not_paused'
  | 'no_such_interrupt'
  | 'unknown_correlation'
  | 'not_found'
  | 'unsupported'
  /** It is paused on a step's failure, not at an interrupt: use `retryStep`, `skipStep` or `rollback`. */
  | 'paused_on_failure';

/** An operator's action on a failed step (`FailureActionError`). */
export type FailureAction = 'retryStep' | 'skipStep' | 'rollback' | 'fork';

/**
 * Why an action on a failed step was refused (`FailureActionError`): the execution is not paused
 * on a failure (`not_paused_on_failure`; `fork`: neither finished nor paused on a failure), another
 * action claimed this pause first (`already_claimed`), a worker holds it (`busy`), the step may not
 * be skipped (`not_skippable`), the value or arguments fail their schema (`invalid_value`,
 * `invalid_args`; a fork's `invalid_input`), or `fromStep` is no step of the reactor (`unknown_step`).
 */
export type FailureActionRefusal =
  | 'not_paused_on_failure'
  | 'already_claimed'
  | 'busy'
  | 'not_skippable'
  | 'invalid_value'
  | 'invalid_args'
  | 'unknown_step'
  | 'invalid_input'
  | 'unsupported';

/** The details of an error that carries none (an empty object). */
type NoDetails = Record<never, never>;

/** The details of a backend outage: the operation (`lock-acquire`, `store-save` …) and how long it kept trying. */
type OutageDetails = { readonly operation: string; readonly waitedMs?: number };

/** The details of a failed contract (`ValidationError`): where, and what was wrong. */
type ValidationDetails = {
  readonly reactor?: string;
  readonly step?: string;
  readonly issues: readonly FieldIssue[];
};

/** The details of a fan-out error: the map (`mapId`, or the map's `step`), and the element or execution concerned. */
export type FanOutDetails = {
  readonly mapId?: string;
  readonly step?: string;
  readonly index?: number;
  readonly executionId?: string;
  readonly parentId?: string;
};

/**
 * The `details` of each {@link ErrorCode}, as the error carries them and as they survive JSON
 * (a field that may be `undefined` when constructed is absent after a round trip, hence
 * optional). On an error of a specific class (`ContentionError`, `RateLimitedError` …) or one
 * narrowed with `ReactorError.is(error, code)`, `error.details` has this type.
 */
export interface ErrorDetails {
  readonly definition_invalid: { readonly reactor: string; readonly step?: string };
  /** `issues` is absent when a persisted input no longer validates on a worker. */
  readonly input_invalid: Partial<ValidationDetails>;
  readonly arguments_invalid: ValidationDetails;
  readonly argument_resolution_failed: { readonly step: string; readonly argument: string };
  readonly non_retryable: NoDetails;
  /** The step's path, the attempt that timed out, and the step's `timeout` in ms. */
  readonly step_timed_out: { readonly step: string; readonly attempt: number; readonly timeoutMs: number };
  /** The sleep step's path, how long it would wait, and the engine's `maxInlineSleepMs`. */
  readonly sleep_needs_worker: { readonly step: string; readonly sleepMs: number; readonly maxInlineSleepMs: number };
  /** The sleep step's path. */
  readonly sleep_until_invalid: { readonly step: string };
  /** The step, the attempt, why (`not_json`, `too_large`), and for `too_large` the JSON's bytes and the limit. */
  readonly progress_invalid: {
    readonly step: string;
    readonly attempt: number;
    readonly reason: 'not_json' | 'too_large';
    readonly bytes?: number;
    readonly limit?: number;
  };
  readonly watch_unavailable: { readonly executionId: string };
  readonly record_too_large: {
    readonly executionId: string;
    readonly bytes: number;
    readonly limit: number;
    /** Set when what was too large is a large map's element states (kept apart from the record): the map's path. */
    readonly mapStates?: string;
    /** Set when the record is the first of a `startMany` entry, refused before any entry was written: its index. */
    readonly entry?: number;
  };
  /** The map step's path, the source's element count and the map's `maxElements`. */
  readonly map_too_large: { readonly step: string; readonly elements: number; readonly limit: number };
  /** `found` is the version the record carries (absent when it carries none). */
  readonly record_version_mismatch: { readonly found?: unknown; readonly expected: number };
  readonly record_not_found: { readonly executionId: string };
  /** The thrown value, as JSON (its string form when it has none). */
  readonly wrapped_throw: { readonly value: unknown };
  /** The original's details, and its class name. */
  readonly remote_error: { readonly originalName: string; readonly [field: string]: unknown };
  readonly coordination_unavailable: OutageDetails;
  /** `reason` is the script's error code (`RX_ARG` …) or `redis` for a server error. */
  readonly script_failed: { readonly script: string; readonly reason: string };
  readonly store_unavailable: OutageDetails;
  readonly queue_unavailable: OutageDetails;
  readonly lease_lost: { readonly executionId: string; readonly how: 'expired' | 'taken_over' };
  readonly execution_not_found: { readonly executionId: string };
  readonly execution_reactor_mismatch: {
    readonly executionId: string;
    readonly expected: string;
    readonly actual: string;
  };
  readonly status_transition_invalid: { readonly executionId: string; readonly from: string; readonly to: string };
  /** The durability check's verdict; `warnings` says what was found and which setting to change. */
  /** The URL's scheme (`postgres:`), the backend it would name if it is a known one, and the schemes served. */
  readonly backend_unavailable: {
    readonly scheme: string;
    readonly backend?: string | undefined;
    readonly available: readonly string[];
  };
  readonly durability_required: {
    readonly persistence: string;
    readonly evicts?: boolean | undefined;
    readonly checked: boolean;
    readonly warnings: readonly string[];
  };
  readonly worker_shutdown: { readonly timeoutMs: number };
  /** `step` was running when the process stopped; `rollingBack` is true for a rollback. */
  readonly inline_run_abandoned: {
    readonly executionId: string;
    readonly reactor: string;
    readonly step?: string;
    readonly rollingBack: boolean;
  };
  readonly contention: {
    readonly reactor: string;
    readonly step?: string | undefined;
    readonly primitive: ContendedPrimitive;
    readonly key: string;
    readonly waitedMs: number;
    readonly holder?: string | undefined;
  };
  readonly rate_limited: {
    readonly reactor: string;
    readonly step?: string | undefined;
    readonly key: string;
    readonly limit: number;
    readonly periodMs: number;
    readonly count: number;
    readonly retryAfterMs: number;
  };
  readonly coordination_key_invalid: {
    readonly reactor: string;
    readonly step?: string | undefined;
    readonly primitive: PrimitiveName;
    readonly problem: string;
  };
  readonly coordination_limit_invalid: {
    readonly reactor: string;
    readonly step?: string | undefined;
    readonly primitive: PrimitiveName;
    /** The declaration's key (computed before its limit). */
    readonly key: string;
    readonly problem: string;
  };
  readonly rate_limit_unknown: { readonly reactor: string; readonly name: string; readonly known: readonly string[] };
  /** `currentEpoch` is absent when the position was passed over. */
  readonly ordered_lock_stale: {
    readonly reactor: string;
    readonly key: string;
    readonly nonce: number;
    readonly epoch: number;
    readonly currentEpoch?: number | undefined;
  };
  readonly hold_lost: {
    readonly reactor: string;
    readonly step?: string | undefined;
    readonly primitive: PrimitiveName;
    readonly key: string;
  };
  /** `payload` is the rejected payload as JSON (cut to 2,000 characters of text when larger). */
  readonly job_malformed: { readonly problem: string; readonly payload: unknown };
  readonly cancelled: { readonly executionId: string; readonly reason: string };
  /** The execution, the instant its deadline passed (engine clock, ms) and the reactor's `deadline` in ms. */
  readonly deadline_exceeded: {
    readonly executionId: string;
    readonly deadlineAt: number;
    readonly deadlineMs: number;
  };
  /** The superseded execution, the start that superseded it, and their debounce key. */
  readonly superseded: { readonly executionId: string; readonly supersededBy: string; readonly debounceKey: string };
  readonly execution_state: { readonly executionId: string; readonly operation: string; readonly status: string };
  readonly fan_out_unknown: FanOutDetails;
  readonly fan_out_unavailable: FanOutDetails;
  /** `declaredBy` says where the unit declares the key, when not on itself. */
  readonly handoff_refused: {
    readonly reactor: string;
    readonly step: string;
    readonly kind: 'step' | 'reactor';
    readonly primitive: 'lock' | 'semaphore';
    readonly key: string;
    readonly executionId: string;
    readonly holder: string;
    readonly declaredBy?: string;
  };
  readonly async_wait_timeout: {
    readonly reactor: string;
    readonly step: string;
    readonly unitId: string;
    readonly waitedMs: number;
    readonly mode: 'wait' | 'park';
  };
  /** `executionId` is absent for a resume by correlation id that no execution waits on. */
  readonly resume_refused: {
    readonly executionId?: string | undefined;
    readonly step?: string | undefined;
    readonly reason: ResumeRefusal;
    readonly status?: string | undefined;
    readonly correlationId?: string | undefined;
  };
  /** `status` is the execution's status when refused; `issues` what failed a schema (`invalid_value`, `invalid_args`). */
  readonly failure_action_refused: {
    readonly executionId: string;
    readonly action: FailureAction;
    readonly reason: FailureActionRefusal;
    readonly step?: string | undefined;
    readonly status?: string | undefined;
    readonly issues?: readonly FieldIssue[] | undefined;
  };
  /** `exhausted` is true when this payload used the last attempt (the run rolled back). */
  readonly resume_payload_invalid: {
    readonly executionId: string;
    readonly step: string;
    readonly attempt: number;
    readonly maxAttempts: number;
    readonly exhausted: boolean;
    readonly issues: readonly FieldIssue[];
  };
  readonly interrupt_timed_out: {
    readonly executionId: string;
    readonly step: string;
    readonly timeoutAt: number;
    readonly strategy: 'lazy' | 'active';
  };
  readonly event_wait_timed_out: {
    readonly executionId: string;
    readonly step: string;
    readonly event: string;
    readonly timeoutAt: number;
  };
  /** `holder` is the paused execution that holds the id. */
  readonly correlation_id_taken: { readonly correlationId: string; readonly step: string; readonly holder: string };
  readonly correlation_id_invalid: { readonly step: string };
  readonly interrupts_unsupported: { readonly step: string };
  /** The rejected value, under the name of the filter it was given for. */
  readonly query_invalid: {
    readonly limit?: unknown;
    readonly from?: unknown;
    readonly to?: unknown;
    readonly status?: unknown;
    readonly key?: unknown;
    readonly q?: unknown;
    readonly ids?: unknown;
    readonly tag?: unknown;
    readonly column?: unknown;
  };
  /** The name of the field. */
  readonly action_invalid: { readonly field: string };
  /** The option, the rejected value (as text), and in `startMany` the entry's index. */
  readonly start_options_invalid: { readonly option: string; readonly value: string; readonly entry?: number };
  /** The tag at fault (its key, or `tags` for the whole map), the rejected value as text, and in `startMany` the entry's index. */
  readonly tags_invalid: { readonly tag: string; readonly value: string; readonly entry?: number };
  /** The factory (`createRedisRuntime` …), the option at fault (`recordTtlMs`, `jobRetention.completed.count` …) and the rejected value as text. */
  readonly runtime_option_invalid: { readonly factory: string; readonly option: string; readonly value: string };
  /** The filter field at fault (`limit`, `cursor`, `from`, `to`, `status`, `tags`, `tags.<key>`) and the rejected value as text. */
  readonly list_filter_invalid: { readonly field: string; readonly value: string };
  /** The field at fault (`name`, `id`, `ts`, `payload`, `options`), the value as text, and the `sendMany` entry. */
  readonly event_invalid: { readonly field: string; readonly value: string; readonly entry?: number };
  /** The event's name, what failed its schema, and the `sendMany` entry. */
  readonly event_payload_invalid: {
    readonly event: string;
    readonly issues: readonly FieldIssue[];
    readonly entry?: number;
  };
  /** The operation refused (`send`, `listEvents`). */
  readonly events_unsupported: { readonly operation: string };
  /**
   * The event's id and name, the reactor it was to start, the stage that failed (`match`, `input`,
   * `idempotencyKey`, `start`, `effect`), the execution when one was started, and the input's
   * issues when it failed the reactor's contract.
   */
  readonly event_trigger_failed: {
    readonly eventId: string;
    readonly event: string;
    readonly reactor: string;
    readonly stage: 'match' | 'input' | 'idempotencyKey' | 'start' | 'effect';
    readonly executionId?: string;
    readonly issues?: readonly FieldIssue[];
  };
  /** The schema name, the version the database has (0: none) and the version this ts-reactor needs. */
  readonly postgres_schema_mismatch: { readonly schema: string; readonly found: number; readonly expected: number };
  /** PostgreSQL's SQLSTATE (`28P01`, `28000`, `3D000` …) and what it refused: the `login` (user, password) or the `database`. */
  readonly postgres_login_refused: { readonly sqlstate: string; readonly refused: 'login' | 'database' };
  /** The schema name, the role connected, and what it lacks (`usage on schema`, or table names). */
  readonly postgres_permission_denied: { readonly schema: string; readonly role: string; readonly missing: string };
  readonly coordinator_missing: NoDetails;
  readonly inspector_missing: NoDetails;
  readonly queue_missing: NoDetails;
  readonly reactor_unknown: { readonly reactor: string };
  /** The definition the execution ran with: its reactor, fingerprint and author-set version. */
  readonly version_unavailable: {
    readonly executionId: string;
    readonly reactor: string;
    readonly fingerprint: string;
    readonly version?: string | undefined;
  };
  /** `field` is the option at fault (`id`, `cron.pattern`, `cron.tz`, `every`, `input`, `inputFrom`, `missed`, `startAt`, `endAt`). */
  readonly schedule_invalid: {
    readonly schedule: string;
    readonly field: string;
    readonly reason: string;
    /** The fields of a fixed input that do not satisfy the reactor's input contract. */
    readonly issues?: readonly FieldIssue[];
  };
  readonly schedule_not_found: { readonly schedule: string };
  readonly async_unit_unknown: { readonly unitId: string; readonly step: string };
  readonly async_unit_interrupted: { readonly unitId: string };
  /** `status` is the unit's final status. */
  readonly async_unit_failed: { readonly unitId: string; readonly status: string };
  /** `status` is the dispatcher's status, or `missing`. */
  readonly dispatcher_rolled_back: { readonly unitId: string; readonly dispatcherId: string; readonly status: string };
  /** `deadline` is when the reader stops waiting (engine clock, ms). */
  readonly async_pending: { readonly unitId: string; readonly step: string; readonly deadline: number };
  readonly invoke_context_unknown: NoDetails;
  readonly unexpected_yield: NoDetails;
}
