import type { ErrorJSON } from '../errors.js';
import type { ReactorEvent } from './events.js';

/** The schema version of persisted execution records. */
export const RECORD_VERSION = 1;

/** Persisted statuses of an execution. */
export type ExecutionStatus =
  | 'pending'
  | 'running'
  | 'parked'
  | 'paused'
  | 'completed'
  | 'failed'
  | 'halted'
  | 'rolling_back'
  | 'cancelled'
  | 'aborted';

/** Every status an execution can have, in lifecycle order (the operators' status filters). */
export const EXECUTION_STATUSES: readonly ExecutionStatus[] = [
  'pending',
  'running',
  'parked',
  'paused',
  'completed',
  'failed',
  'halted',
  'rolling_back',
  'cancelled',
  'aborted',
];

/**
 * An execution's status as users see and type it (the CLI, the dashboard, its web API, the
 * operator read model, metrics, the docs): the stored `pending` is `queued`, the name a start's
 * result has (decision 107). Records keep `pending`, so persisted data stays readable.
 */
export type StatusName = Exclude<ExecutionStatus, 'pending'> | 'queued';

/** Every status name, in lifecycle order (the operators' status filters). */
export const STATUS_NAMES: readonly StatusName[] = EXECUTION_STATUSES.map(statusName);

/** The name users see for a stored status: `pending` is `queued`, the others are their own. */
export function statusName(status: ExecutionStatus): StatusName {
  return status === 'pending' ? 'queued' : status;
}

/** The stored status of a status name (`queued` is stored `pending`; a stored status is itself). */
export function storedStatus(name: StatusName | ExecutionStatus): ExecutionStatus {
  return name === 'queued' ? 'pending' : name;
}

/**
 * The stored status a user typed: a {@link StatusName}, or `pending` (accepted as another name
 * of `queued`); `undefined` for anything else.
 */
export function parseStatus(raw: string): ExecutionStatus | undefined {
  if (raw === 'queued') return 'pending';
  return EXECUTION_STATUSES.find((s) => s === raw);
}

/** Terminal statuses: the execution will not change again on its own. */
export const TERMINAL_STATUSES: ReadonlySet<ExecutionStatus> = new Set([
  'completed',
  'failed',
  'halted',
  'cancelled',
  'aborted',
]);

/**
 * An execution's tags: a small map of string keys to string values given at `run` / `start`
 * (`{ orderId: '42' }`), stored on its record and indexed for `engine.list` (limits in
 * docs/limits.md).
 */
export type ExecutionTags = Readonly<Record<string, string>>;

/** Persisted state of one step in one execution. */
export interface StepRecord {
  readonly status:
    'running' | 'retrying' | 'completed' | 'failed' | 'skipped' | 'halted' | 'compensated' | 'undone' | 'dispatched';
  readonly attempts: number;
  /** An `asyncStep` / `asyncReactor`: the id of the unit record or child execution it dispatched. */
  readonly unitId?: string;
  /** When that unit was dispatched (engine clock, ms). */
  readonly dispatchedAt?: number;
  /**
   * A step with a `timeout`: when its latest attempt's body started (engine clock, ms). While the
   * status is `running`, a job that resumes that attempt (a redelivery) measures the timeout from
   * here instead of starting it again (docs/decisions/075).
   */
  readonly attemptStartedAt?: number;
  /**
   * A sleep step (status `running`): when it wakes (engine clock, ms), computed once when it
   * started and kept across jobs (docs/decisions/077).
   */
  readonly wakeAt?: number;
  readonly result?: unknown;
  readonly error?: ErrorJSON;
  /** Completion sequence number (undo runs in reverse of it). */
  readonly completedSeq?: number;
  /**
   * Every attempt of the body a worker ran, oldest first, each with the worker that ran it and how
   * it ended — a lost worker's attempt included (docs/decisions/098). `attempts` is never less
   * than the number of entries. Absent for an inline run's steps (its trace has the attempts) and
   * on records written before attempts were logged.
   */
  readonly runs?: readonly AttemptRun[];
  /**
   * Durable mode (`checkpointIntervalMs: 0`) in a worker: the attempt whose start is on the record
   * and which has not settled yet. A job that finds it on a redelivered record knows the body of
   * that attempt may have run and records it as lost (docs/decisions/098).
   */
  readonly started?: AttemptStart;
}

/** How one attempt of a step's body ended, as the record knows it. */
export type AttemptOutcome =
  /** The body returned a value (the step completed). */
  | 'succeeded'
  /** The body failed (the step retried, or failed). */
  | 'failed'
  /** The body returned `skip(...)`. */
  | 'skipped'
  /** The body returned `halt(...)`. */
  | 'halted'
  /** Its start was on the record and its worker was lost before it settled: it may have run in full, in part or not at all. */
  | 'worker_lost'
  /** Its worker was lost and wrote no start (a checkpoint interval): the body may have run since the last checkpoint. */
  | 'may_have_run'
  /**
   * Its start was on the record and its worker's shutdown stopped it (its signal aborted, the job
   * handed back): the body ran, in part or in full, and returned before the next job began.
   */
  | 'interrupted';

/** One attempt of a step's body (see {@link StepRecord.runs}). */
export interface AttemptRun {
  readonly attempt: number;
  /** The worker that ran it (`<host>-<pid>/<engine id>`), where known. */
  readonly worker?: string;
  readonly outcome: AttemptOutcome;
  /**
   * A lost worker's attempt: when its start was on the record (engine clock, ms). A settled
   * attempt's times are in the trace (`step.started` and the event that ended it).
   */
  readonly startedAt?: number;
  /** A lost worker's attempt: when the job that took over found it (engine clock, ms). */
  readonly endedAt?: number;
}

/** An attempt's start as the record carries it before its body runs (see {@link StepRecord.started}). */
export interface AttemptStart {
  readonly attempt: number;
  readonly worker: string;
  /** Engine clock, ms. */
  readonly at: number;
}

/**
 * Why a `paused` execution waits, when it is a step's failure rather than an interrupt: the step
 * (a top-level step of the reactor), its error, and when it paused (engine clock, ms; it also
 * names the pause, so each pause is claimed by one operator action).
 */
export interface FailurePause {
  readonly kind: 'failure';
  readonly step: string;
  readonly error: ErrorJSON;
  readonly at: number;
}

/** One entry of the rollback failures of a run. */
export interface RollbackFailure {
  readonly step: string;
  readonly kind: 'compensate' | 'undo';
  readonly reason: 'raised' | 'returned_failure' | 'coordination_unavailable';
  readonly message: string;
  readonly key?: string;
  /** A fan-out map's element: the map step (path) and the element's index. */
  readonly mapStep?: string;
  readonly elementIndex?: number;
}

/** What a parked execution waits for. */
export interface WaitingFor {
  /**
   * A coordination primitive; `map`: the elements of a fan-out map (`key` = the map step);
   * `async`: a reader parked until the async unit or child execution `key` (its id) finishes;
   * `sleep`: a sleep step (`key` = its path) until `dueAt`, its wake time.
   */
  readonly primitive: 'lock' | 'semaphore' | 'rate_limit' | 'ordered_lock' | 'map' | 'async' | 'sleep';
  readonly key: string;
  /** The contended step; absent when the reactor-level declarations were contended. */
  readonly step?: string;
  /** Contention attempts so far (counted apart from failure retries). */
  readonly attempt: number;
  /** The delayed job that resumes it. */
  readonly jobId: string;
  /** When the fallback job is due (engine clock, ms), if no release wakes it first. */
  readonly dueAt?: number;
  /**
   * Who held the key when the execution parked: a lock's owner and fencing token, or the owners of
   * a full semaphore's slots. A fallback job that finds the same holder parks again without an
   * admission and without a new trace entry, spending one contention attempt (docs/decisions/097).
   */
  readonly holder?: WaitHolder;
}

/** The holder a parked execution waits behind (see {@link WaitingFor.holder}). */
export interface WaitHolder {
  /** The lock's owner, or the semaphore slots' owners (sorted). */
  readonly owners: readonly string[];
  /** The lock's fencing token: a new acquisition by the same owner is a new holder. */
  readonly token?: string;
}

/**
 * The contention wait an execution is in (docs/decisions/068): on which key, since when and until
 * when its declaration's `contentionTimeout` lets it wait. Kept across the wait's parks; a later
 * job continues it only when it is the job the last park enqueued (`job`).
 */
export interface ContentionWait {
  /** The primitive waited for. */
  readonly primitive: 'lock' | 'semaphore' | 'rate_limit' | 'ordered_lock';
  /** The coordination key waited for. */
  readonly key: string;
  /** The step whose declaration it is; absent for a reactor-level declaration. */
  readonly step?: string;
  /** When the wait began: its first park (engine clock, ms). */
  readonly since: number;
  /** When the declaration's `contentionTimeout` passes (engine clock, ms); absent: no time bound. */
  readonly timeoutAt?: number;
  /** The number of the job that continues this wait (`<executionId>:<job>`). */
  readonly job: number;
}

/** An interrupt the execution is paused at (persisted until the step completes with its payload). */
export interface InterruptWait {
  /** The interrupt step's path (`approve`, `review.approve` inside a composed reactor). */
  readonly step: string;
  readonly correlationId?: string;
  /** When it paused (engine clock, ms). */
  readonly pausedAt: number;
  /** When the timeout passes (engine clock, ms), if it has one. */
  readonly timeoutAt?: number;
  /** Invalid payloads received so far. */
  readonly invalidAttempts: number;
  /** Set by the accepted resume: the validated payload the step completes with. */
  readonly payload?: unknown;
  readonly resumedAt?: number;
  /** Set when the wait is a `.waitForEvent` step's, not an interrupt's: what it waits for. */
  readonly event?: EventWaitState;
}

/** What a `.waitForEvent` step waits for, kept in its {@link InterruptWait}. */
export interface EventWaitState {
  /** The event's name. */
  readonly name: string;
  /** Its canonical match key (the `matchOn` values of the step's arguments as JSON; `''` without `matchOn`): where the wait is registered. */
  readonly matchKey: string;
  /** When the wait was registered, epoch ms on the backend's clock: events received at or after it match. */
  readonly since: number;
  /** The step's arguments, as `match` and `onTimeout` receive them. */
  readonly args: unknown;
  /** Set on resume: the event that resumed it (absent when its timeout gave the value). */
  readonly eventId?: string;
  /** Set when the timeout passed first and `onTimeout` gave the step's value. */
  readonly timedOut?: boolean;
}

/** Background-execution bookkeeping of a record. */
export interface BackgroundState {
  /** Jobs enqueued so far for this execution (job ids are `<executionId>:<n>`). */
  readonly jobs: number;
  /** Contention attempts so far. */
  readonly contention: number;
  /** Set while parked. */
  readonly waitingFor?: WaitingFor;
  /** The ordered-lock position taken when the execution was accepted. */
  readonly ordered?: { readonly key: string; readonly nonce: number; readonly epoch: number };
  /** Reactor-level locks and semaphore slots kept across a step's park, held by this owner: re-adopted at resume. */
  readonly parkedHolds?: { readonly owner: string };
  /** Step-level ordered-lock positions, by step path: taken at first arrival, kept across retries, parks and jobs. */
  readonly stepOrdered?: Readonly<
    Record<string, { readonly key: string; readonly nonce: number; readonly epoch: number }>
  >;
  /** When a retry is due (engine clock, ms). */
  readonly retryAt?: number;
  /** Set while a failed execution waits for a fan-out map's elements to be undone (status `rolling_back`). */
  readonly fanOutRollback?: FanOutRollbackState;
  /** A reader's parks on one async unit so far (its `waitingFor.attempt`), kept across re-parks. */
  readonly asyncParks?: { readonly unitId: string; readonly count: number };
  /** The contention wait in progress, or the last one (see {@link ContentionWait}). */
  readonly contended?: ContentionWait;
  /** Set by the recovery sweep when it re-enqueued this execution: the job it enqueued and how many times it did (docs/decisions/066). */
  readonly recovered?: { readonly jobId: string; readonly count: number; readonly at: number };
  /** Set while no worker that met the execution had its definition (see {@link VersionWait}, docs/decisions/082). */
  readonly waitingForVersion?: VersionWait;
  /** A delayed start's time (engine clock, ms): its first job is not run before it (docs/decisions/078). */
  readonly startAt?: number;
  /** The priority of every job of this execution (1 most urgent; see `EnqueueOptions.priority`, docs/decisions/079). */
  readonly priority?: number;
  /**
   * The worker whose job ran the execution last, written with that job's first checkpoint, and
   * whether it put each attempt's start on the record first (durable mode). A job that finds the
   * execution `running` uses it to record what the lost worker may have run (docs/decisions/098).
   */
  readonly lastJob?: { readonly worker: string; readonly marksStarts: boolean };
}

/**
 * An execution a worker left for another one because it does not have the definition the record
 * names (its fingerprint, and version if the author set one): the job comes back after a delay
 * until a worker that has it takes it (docs/decisions/082). Nothing else about the execution changed.
 */
export interface VersionWait {
  /** The definition fingerprint the execution ran with. */
  readonly fingerprint: string;
  /** Its author-set version, if any. */
  readonly version?: string;
  /** When a worker first left it (engine clock, ms). */
  readonly since: number;
  /** The worker that left it last. */
  readonly workerId: string;
}

/**
 * Set on the record of an execution running inline (`engine.run` in the caller's process) —
 * what tells the recovery sweep that no job carries it (docs/decisions/066).
 */
export interface InlineRun {
  /**
   * The owner of the execution's liveness lease while the inline run holds it
   * (`inline:<engine>:<executionId>`); absent when the engine took none (an engine without a
   * coordinator on a shared store): such a run is never recovered by a sweep. (With a store or
   * coordinator of the calling process only, an inline run takes no lease and writes no mark.)
   */
  readonly lease?: string;
}

/** A rollback paused at a fan-out map whose completed elements are being undone by jobs. */
export interface FanOutRollbackState {
  /** The map's ledger id. */
  readonly mapId: string;
  /** Once the elements are undone, undo the completed steps with a completion sequence below this (none: every one). */
  readonly below?: number;
  readonly failedStep?: string;
  /** The error the execution fails with once rollback is over. */
  readonly error: ErrorJSON;
}

/** What links an element record of a fan-out map to its parent execution. */
export interface ElementLink {
  readonly parentId: string;
  /** The map step's path in the parent. */
  readonly step: string;
  readonly index: number;
}

/**
 * The W3C trace context an execution's trace continues from (`traceparent`, `tracestate`
 * headers' values), persisted when the execution starts so every job of it, in any worker,
 * joins one trace. Written by tracing middleware (`ts-reactor/otel`); absent without one.
 */
export interface TraceContext {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/**
 * What an `asyncStep` unit record carries besides the usual fields: the step it runs, the
 * execution that dispatched it, and the values its arguments are resolved from in the worker.
 */
export interface AsyncUnitInfo {
  readonly kind: 'step';
  /** The step's path in its dispatcher (`ship`, `pay.ship` inside a composed child). */
  readonly step: string;
  /** The reactor that declares the step (the composed child's name inside compose). */
  readonly reactor: string;
  /** The execution that dispatched it (its `parentId`). */
  readonly dispatcherId: string;
  readonly dispatchedAt: number;
  /** The frame input and the results of the steps it depends on, at dispatch. */
  readonly scope: {
    readonly input: Readonly<Record<string, unknown>>;
    readonly results: Readonly<Record<string, unknown>>;
  };
}

/**
 * The element states of one large in-process map (more than 1,000 elements), as a store keeps
 * them: apart from the record, under their own size budget (docs/limits.md, docs/decisions/076).
 */
export interface MapElementStates {
  readonly v: 1;
  /** Bumped on every change: a store writes the states again only when it moved. */
  readonly rev: number;
  /** Elements in the map. */
  readonly size: number;
  /**
   * One character per element: `-` never reached, else its status (`n` running, `r` retrying,
   * `c` completed, `f` failed, `s` skipped, `h` halted, `p` compensated, `u` undone, `d`
   * dispatched); upper case when the element has no result.
   */
  readonly status: string;
  /** Each element's result (`null` where it has none), in element order. */
  readonly results: readonly unknown[];
  /** Attempts of the elements that did not take exactly one, by index. */
  readonly attempts?: Readonly<Record<string, number>>;
  /** Errors of the elements that have one, by index. */
  readonly errors?: Readonly<Record<string, ErrorJSON>>;
  /** Set once the map settled: what its result holds besides the element values. */
  readonly settled?: {
    readonly failures: readonly { readonly index: number; readonly error: ErrorJSON }[];
    readonly notStarted: readonly number[];
  };
}

/** The persisted form of an execution: plain, versioned JSON. */
export interface ExecutionRecord {
  readonly v: typeof RECORD_VERSION;
  readonly id: string;
  readonly rootId: string;
  readonly parentId?: string;
  readonly reactor: string;
  /**
   * The fingerprint of the definition the execution runs with (`definition.fingerprint`), set at
   * its first record: a worker runs it only on that definition or one migrating from it
   * (docs/decisions/082). Absent on records written before versioned definitions: they run on the
   * registered definition of their reactor's name.
   */
  readonly fingerprint?: string;
  /** The author-set version of that definition, if any. */
  readonly version?: string;
  readonly status: ExecutionStatus;
  /** Validated input (secrets included: the store is trusted; views redact). */
  readonly input: unknown;
  readonly steps: Readonly<Record<string, StepRecord>>;
  readonly value?: unknown;
  readonly error?: ErrorJSON;
  readonly failedStep?: string;
  readonly haltReason?: string;
  /** The data of the halt (`halt(reason, data)`, or a coordination halt's details). */
  readonly haltData?: unknown;
  /** Why an operator cancelled or undid it. */
  readonly cancelReason?: string;
  /** What cancelled it when the engine did: a `DeadlineExceededError` past the reactor's `deadline` (docs/decisions/081). */
  readonly cancelCause?: ErrorJSON;
  /** The execution this one retries (a new linked execution). */
  readonly retryOf?: string;
  readonly rollbackFailures: readonly RollbackFailure[];
  readonly idempotencyKey?: string;
  /** The tags given when the execution was started (absent: none). */
  readonly tags?: ExecutionTags;
  /** The execution's events across every process that worked on it, append-only (a worker writes it with every checkpoint; the newest `maxTraceEntries`, older ones summarized). */
  readonly trace?: readonly ReactorEvent[];
  /**
   * The element states of the execution's large in-process maps, by map path. A store keeps each
   * apart from the record (not counted in its bytes; their own budget, `maxMapStateBytes`) and
   * reads them back with the record (`get`, a worker's job); `list` leaves them unread.
   */
  readonly mapStates?: Readonly<Record<string, MapElementStates>>;
  /** The map paths whose element states are stored apart from this record (set by the store). */
  readonly mapParts?: readonly string[];
  /** Background execution: what a parked execution waits for, and the counters that survive redelivery. */
  readonly background?: BackgroundState;
  /** The trace this execution's spans belong to (tracing middleware only). */
  readonly traceContext?: TraceContext;
  /** Set on the record of one element of a fan-out map (its input is `{ item, index }`). */
  readonly element?: ElementLink;
  /** The interrupts a paused execution waits at (and an accepted payload not consumed yet). */
  readonly interrupts?: readonly InterruptWait[];
  /** Set while the execution is `paused` on a step's failure (`onFailure: 'pause'`), waiting for an operator (docs/decisions/100). */
  readonly pausedOn?: FailurePause;
  /**
   * Arguments an operator gave a step (`engine.retryStep(id, { args })`), by step path: the step
   * runs with them instead of resolving its own, in this job and every later one.
   */
  readonly stepArgs?: Readonly<Record<string, unknown>>;
  /**
   * The newest progress report of each step (`ctx.progress(data)`), by step path: at most 100
   * steps, each report's JSON at most 16 KiB. Written with the checkpoints that follow a report.
   */
  readonly progress?: Readonly<Record<string, StepProgress>>;
  /** Set on the record of an `asyncStep` unit: which step of which dispatcher it runs. */
  readonly unit?: AsyncUnitInfo;
  /** Set while the execution runs inline in a caller's process (until a hand-off or the end). */
  readonly inline?: InlineRun;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A step's newest progress report (`ExecutionRecord.progress`). */
export interface StepProgress {
  /** The attempt that reported it. */
  readonly attempt: number;
  /** The reported data, as JSON gives it back. */
  readonly data: unknown;
  /** When it was reported (engine clock, ms). */
  readonly at: number;
}

/** Filter of {@link Store.list}. */
export interface ExecutionFilter {
  readonly reactor?: string;
  readonly status?: ExecutionStatus;
  /** Only records carrying every one of these tags (key and value equal). */
  readonly tags?: ExecutionTags;
  readonly limit?: number;
  /** Opaque cursor from a previous page (keyset: the last record's creation time and id). */
  readonly cursor?: string;
  /** Only records created at or after this time (ms, the engine clock). */
  readonly createdFrom?: number;
  /** Only records created before this time (ms, exclusive). */
  readonly createdTo?: number;
}

/** The outcome of claiming an idempotency key. */
export type IdempotencyClaim = { readonly claimed: true } | { readonly claimed: false; readonly executionId: string };

/**
 * Where execution records live. Implementations: the memory store (embedded default) and the
 * Redis store. Both pass the same contract suite.
 */
export interface Store {
  /**
   * True when the records live in this process only (the memory store): no other process reads
   * them, so an inline run takes no liveness lease for a recovery sweep elsewhere
   * (docs/decisions/066). Absent: shared.
   */
  readonly processLocal?: boolean;
  /** The largest record `save` accepts, in bytes (lets the engine check early when it batches checkpoints). */
  readonly maxRecordBytes?: number;
  /** Persists a record (create or replace). Throws `RecordTooLargeError` over the size limit. */
  save(record: ExecutionRecord): Promise<void>;
  /** Reads a record; `undefined` if absent or expired. Throws `RecordVersionError` on another schema version. */
  get(id: string): Promise<ExecutionRecord | undefined>;
  /**
   * Records matching `filter`, newest first: by `createdAt`, then by id, both descending. Paging
   * is keyset: a page's cursor names its last record's (createdAt, id) and the next page starts
   * strictly after it, so records created while a listing pages (newer than its first page) never
   * shift it — no record is repeated or skipped. Over every retained record (none expired). A
   * cursor this store cannot read throws `ListFilterError` (`list_filter_invalid`).
   */
  list(filter?: ExecutionFilter): Promise<{ readonly records: readonly ExecutionRecord[]; readonly cursor?: string }>;
  /**
   * Atomically claims `key` for `executionId` under `reactor`. A claim by another execution
   * returns the winner's id; the winner claiming again gets `claimed: true` (retry-safe).
   *
   * With `pending` (the execution's first record, id `executionId`), a won claim also saves it,
   * in the same atomic step, unless a record with that id exists: whoever learns the winner's id
   * from a claim finds its record (docs/decisions/056). A lost claim writes nothing. Throws
   * `RecordTooLargeError` over the size limit, before claiming. A store that ignores `pending`
   * leaves a window in which another engine's replay finds no record (`record_not_found`).
   */
  claimIdempotency(
    reactor: string,
    key: string,
    executionId: string,
    pending?: ExecutionRecord,
  ): Promise<IdempotencyClaim>;
  /** Optional: the execution that holds idempotency `key` under `reactor` now, if any (operator search). */
  idempotencyHolder?(reactor: string, key: string): Promise<string | undefined>;
}
