/**
 * The engine's public types: its options, the options of one run, and the {@link Engine}
 * interface `createEngine` returns (re-exported by `engine.ts`).
 *
 * @module
 */
import type { Logger } from '../../dsl/context.js';
import type { AnyReactorDefinition, InputOf, OutputOf, StepsOf } from '../../dsl/definition.js';
import type { Duration } from '../../dsl/duration.js';
import type { RateWindowOptions } from '../../dsl/coordination.js';
import type { StepInvoker } from '../../dsl/step.js';
import type { EventListener, Middleware } from '../model/events.js';
import type { RunResult } from '../model/results.js';
import type { Clock, Ids } from '../../ports/clock.js';
import type { Coordinator } from '../../ports/coordinator.js';
import type { InterruptClaims } from '../../ports/interrupt-claims.js';
import type { FanOutLedger } from '../../ports/fanout.js';
import type { JobLeases } from '../../ports/job-lease.js';
import type { ExecutionJob, JobDelivery, JobQueue } from '../../ports/queue.js';
import type { ExecutionStream } from '../../ports/execution-stream.js';
import type { WaitList } from '../../ports/wait-list.js';
import type { EventLog, StoredEvent } from '../../ports/event-log.js';
import type { EventWaits } from '../../ports/event-waits.js';
import type { AnyEventDeclaration, EventInput } from '../../dsl/event.js';
import type { EventNoticeListener } from '../model/event-notices.js';
import type { EventTriggerError } from '../../errors.js';
import type { ExecutionStatus, StatusName, Store, TraceContext } from '../../ports/store.js';
import type { BackgroundOptions } from '../jobs/deps.js';
import type { SweepReport } from '../jobs/sweep.js';
import type { ForkOptions } from './fork.js';
import type { WatchItem, WatchOptions } from './watch.js';
import type { RetryStepOptions, SkipStepOptions } from './steer.js';

/** Options of `createEngine` (`engine.ts`). */
export interface EngineOptions {
  /** Where execution records live. Required: pass `new MemoryStore()` for the embedded default. */
  readonly store: Store;
  /** Where coordination state lives. Required when a reactor declares coordination. */
  readonly coordinator?: Coordinator;
  /** Named rate limits, shared by every reactor that declares `withRateLimit({ name })`. */
  readonly rateLimits?: Readonly<Record<string, readonly RateWindowOptions[]>>;
  /** Where background jobs go (BullMQ from `ts-reactor/bullmq`, or the embedded queue). */
  readonly queue?: JobQueue;
  /** Wait lists of parked executions (wake-on-release). */
  readonly waitList?: WaitList;
  /** Ledgers of fan-out maps (`map(..., { fanOut })` in workers); the embedded engine and `createRedisRuntime` pass one. */
  readonly fanOut?: FanOutLedger;
  /**
   * A worker's liveness lease together with its record read and its terminal write, in one
   * round trip each (`createRedisRuntime` passes the Redis backend's). It must take and release
   * the `coordinator`'s locks. Default: composed from `store` and `coordinator` calls.
   */
  readonly jobLeases?: JobLeases;
  /**
   * The correlation-id and resume claims interrupts need (`MemoryStore` and `RedisStore`
   * implement them: pass the store). Absent: an interrupt step fails with
   * `interrupts_unsupported`, and `engine.resume` by correlation id finds nothing.
   */
  readonly interruptClaims?: InterruptClaims | undefined;
  /**
   * The log of sent events (`engine.send`, `engine.listEvents`); the runtimes pass their
   * backend's. Absent: those methods throw `events_unsupported`.
   */
  readonly events?: EventLog | undefined;
  /**
   * The index of executions waiting for an event (`.waitForEvent`, `cancelOn`); the runtimes
   * pass their backend's. Absent: a `.waitForEvent` step fails with `events_unsupported`, starting
   * a reactor that declares `cancelOn` throws it, and `engine.send` resumes and cancels nothing.
   */
  readonly eventWaits?: EventWaits | undefined;
  /**
   * Each execution's events, readable from any process (`engine.watch`): every event this engine
   * emits is appended to it. Every runtime passes its backend's; absent, `engine.watch` fails
   * with `watch_unavailable`.
   */
  readonly executionStream?: ExecutionStream | undefined;
  /** Background-execution tunables. */
  readonly background?: BackgroundOptions;
  /** Reactors this engine can process jobs for (reactors started through it register themselves). */
  readonly reactors?: readonly AnyReactorDefinition[];
  readonly clock?: Clock;
  readonly ids?: Ids;
  /** Steps of one run running at once, unless the reactor says otherwise. Default 8. */
  readonly maxConcurrency?: number;
  /** Subscribers to the event stream. */
  readonly middleware?: readonly Middleware[];
  /** A pino-compatible logger. Default: silent. */
  readonly logger?: Logger;
  /**
   * With a `logger`: also log every event as a structured line (`event`, `executionId`,
   * `reactor`, `step`, `key` …; levels in docs/observability.md). Default true; false keeps
   * only the engine's own warnings and errors.
   */
  readonly logEvents?: boolean;
  /**
   * Intermediate checkpoints (after a step) are written at most this often; the run's start,
   * parks, yields and its end are always written. 0 writes after every step. Default 100 ms.
   * A worker that dies loses at most this much progress: those steps run again (at-least-once).
   */
  readonly checkpointIntervalMs?: number;
  /**
   * How the attempts this engine runs name it in execution records (`StepRecord.runs`), followed
   * by `/` and the end of the engine's id. The runtimes give `<host>-<pid>`; default `local`.
   */
  readonly workerName?: string;
  /**
   * The longest a sleep step of an inline run waits in this process, in ms (`Infinity`: any
   * sleep). A longer sleep hands the run off to a worker when the engine has a queue (`run`
   * returns `queued`), else it fails with `SleepNeedsWorkerError` (`sleep_needs_worker`);
   * docs/time.md#sleeps. A number >= 0, else `createEngine` throws a `RangeError`. Default 5,000.
   */
  readonly maxInlineSleepMs?: number;
  /**
   * The most entries a trace holds: an execution's trace in memory (a run's result) and on its
   * records. Past it, the oldest entries after the first are folded into one `trace.summarized`
   * entry counting them by type (docs/limits.md, docs/decisions/073). An integer >= 10, else
   * `createEngine` throws a `RangeError`. Default 1,000.
   */
  readonly maxTraceEntries?: number;
  /**
   * Resolves once this process's background pool has no job ready or running, or the clock
   * reached `until`. An in-process reader of an async unit awaits it (until its deadline) before
   * it lets the clock pass, so on a manual clock virtual time moves only while the pool waits
   * too (`createTestEngine` passes its pool's).
   */
  readonly backgroundSettled?: (until: number) => Promise<void>;
}

/** Options the engine passes itself (a retry links the new execution to the old one). */
export interface InternalRunOptions {
  readonly retryOf?: string;
  /** The retried execution's trace: the new execution's first span links to it. */
  readonly retryTrace?: TraceContext;
}

/** Options of one run. */
export interface RunOptions {
  /** At most one execution per reactor and key; a repeat returns the original result (`replay: true`). */
  readonly idempotencyKey?: string;
  /**
   * Tags of the execution: a small map of string keys to string values (`{ orderId: '42' }`),
   * stored on its record, returned by `engine.result` and searchable with `engine.list`. At most
   * 8; keys of letters, digits, `_`, `-`, `.` (1–64 characters); values of 1–256 characters
   * without control characters (docs/limits.md). Bad tags throw `TagsInvalidError`
   * (`tags_invalid`) before anything is written.
   */
  readonly tags?: Readonly<Record<string, string>>;
}

/**
 * What `engine.list` filters on. Every field is optional; given fields must all match. Bad values
 * throw `ListFilterError` (`list_filter_invalid`).
 */
export interface ListQuery {
  /** Only executions of this reactor (by name). */
  readonly reactor?: string;
  /** Only executions in this status now (`queued`; its stored name `pending` is accepted too). */
  readonly status?: StatusName | ExecutionStatus;
  /** Only executions carrying every one of these tags (same key, same value). */
  readonly tags?: Readonly<Record<string, string>>;
  /** Only executions created at or after this time (a `Date`, or epoch ms on the engine clock). */
  readonly from?: Date | number;
  /** Only executions created before this time (exclusive). */
  readonly to?: Date | number;
  /** The `cursor` of the previous page: the next page starts right after its last execution. */
  readonly cursor?: string;
  /** Executions per page: 1 to 1,000. Default 50. */
  readonly limit?: number;
}

/** One execution of an `engine.list` page: what it is and where it stands, without its steps or trace (`engine.result` has them). */
export interface ListedExecution {
  readonly executionId: string;
  readonly reactor: string;
  /** The status now, as users see it (`queued` for a stored `pending`). */
  readonly status: StatusName;
  /** Its tags (`{}` when it has none). */
  readonly tags: Readonly<Record<string, string>>;
  /** When it was created and last written (engine clock, epoch ms). */
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The execution it retries, when it is a retry. */
  readonly retryOf?: string;
  /** The execution that started it, when it is a child (a map element, an async child). */
  readonly parentId?: string;
}

/** A page of `engine.list`: executions newest first, and the cursor of the next page when there is one. */
export interface ListPage {
  readonly executions: readonly ListedExecution[];
  /** Absent on the last page. */
  readonly cursor?: string;
}

/**
 * Options of a background start (`engine.start`, an entry of `engine.startMany`). Bad values
 * throw `StartOptionsError` (`start_options_invalid`) before anything is written.
 */
export interface StartOptions extends RunOptions {
  /** Run no earlier than this long from now: ms, or a duration (`'30s'`, `'5m'`, `'1h'`, `'1d'`). Not with `at`. */
  readonly delay?: Duration;
  /** Run no earlier than this time (a `Date`, or epoch ms on the engine clock); a time past runs at once. Not with `delay`. */
  readonly at?: Date | number;
  /**
   * The priority of every job of the execution (its start, retries, parks and wakes), BullMQ's
   * convention: an integer from 1 (most urgent) to 2,097,151; a ready job without a priority
   * goes before every prioritized one. Default: none.
   */
  readonly priority?: number;
  /**
   * Debounce: of the starts with this `key` (per reactor) that each come within `window` of the
   * one before, only the last runs, `window` after it; each earlier one ends `cancelled` without
   * running, `supersededBy` naming the start that replaced it. Not with `delay` or `at`.
   */
  readonly debounce?: DebounceOptions;
  /**
   * Lets `delay`, `at` and `debounce.window` put the start more than 365 days ahead (up to the
   * latest time a `Date` holds). Without it such a start throws `StartOptionsError`. Default false.
   */
  readonly allowFarFuture?: boolean;
}

/** The `debounce` start option (see {@link StartOptions.debounce}). */
export interface DebounceOptions {
  /** The debounce key (non-empty): starts of one reactor with the same key debounce each other. */
  readonly key: string;
  /** How long after a start a later one supersedes it, and how long the last one waits before it runs (> 0). */
  readonly window: Duration;
}

/** One entry of `engine.startMany`: a reactor, its input, and its start options. */
export interface StartEntry<R extends AnyReactorDefinition = AnyReactorDefinition> {
  readonly reactor: R;
  readonly input: InputOf<R>;
  readonly options?: StartOptions;
}

/**
 * The results of `engine.startMany` for `R` (the entries' reactors, in order): one per entry,
 * each a {@link Started} with `result()` and `wait()` typed by its own entry's reactor.
 */
export type StartManyResults<R extends readonly AnyReactorDefinition[]> = {
  -readonly [K in keyof R]: Started<R[K]>;
};

/** A reactor's result type: {@link RunResult} typed by its run value and step results. */
export type ResultOf<R extends AnyReactorDefinition> = RunResult<OutputOf<R>, StepsOf<R>>;

/** Options of `engine.wait`. */
export interface WaitOptions {
  /** How long to poll before returning the current state. Default 30 s. */
  readonly timeoutMs?: number;
  /** How long between two reads. Default 20 ms. */
  readonly pollMs?: number;
}

/**
 * The execution a start accepted, typed by its reactor: `result()` reads its current result,
 * `wait()` polls until it is terminal or paused (as `engine.result(id, reactor)` and
 * `engine.wait(id, reactor)`).
 */
export interface ExecutionHandle<R extends AnyReactorDefinition> {
  /** The current result from the record; undefined when there is none (an invalid input writes none). */
  result(): Promise<ResultOf<R> | undefined>;
  /** Polls until terminal or paused, or `timeoutMs` passes; rejects with `ExecutionNotFoundError` when there is no record. */
  wait(options?: WaitOptions): Promise<ResultOf<R>>;
}

/**
 * What `engine.start` resolves with: the start's result (`queued`, `failed` for an invalid
 * input, or an idempotent replay's), carrying the {@link ExecutionHandle} methods `result()` and
 * `wait()` (not enumerable: JSON and equality see the plain result).
 */
export type Started<R extends AnyReactorDefinition> = ResultOf<R> & ExecutionHandle<R>;

/** Options of `engine.send` and of a `sendMany` entry. */
export interface SendOptions {
  /**
   * The event's id (1 to 256 characters): an event with an id the log keeps already is not
   * stored again (`duplicate`). Default: a new id.
   */
  readonly id?: string;
  /** When the event happened: a `Date` or epoch ms. Default: the time the log receives it. */
  readonly ts?: Date | number;
}

/** One entry of `engine.sendMany`: an event (a declaration, or a name), its payload, its options. */
export type SendEntry<E extends AnyEventDeclaration | string = AnyEventDeclaration | string> = {
  readonly event: E;
  readonly payload: E extends AnyEventDeclaration ? EventInput<E> : unknown;
  readonly options?: SendOptions;
};

/** What `engine.send` resolves with: stored now (`accepted`), or kept already under that id (`duplicate`, nothing changed). */
export interface SendResult {
  readonly status: 'accepted' | 'duplicate';
  /** The event's id (the one given, or the one generated). */
  readonly id: string;
  readonly name: string;
  /** The kept event's time and receipt time (epoch ms): for a duplicate, those of the event kept first. */
  readonly ts: number;
  readonly receivedAt: number;
  /**
   * The executions the event started (reactors declaring `.on` of it), one per reactor whose
   * trigger matched, in the order the reactors were registered. For a duplicate, or an event
   * another process sent at once, these are the executions started by the first send: a start
   * by event happens once per event and reactor.
   */
  readonly started: readonly string[];
  /** The triggers of the event that failed (`event_trigger_failed`); the event is stored and the other triggers ran. */
  readonly triggerFailures: readonly EventTriggerError[];
}

/** What `engine.listEvents` filters on. Bad values throw `ListFilterError` (`list_filter_invalid`). */
export interface EventListQuery {
  /** Only events of this name. */
  readonly name?: string;
  /** Only events received at or after this time (a `Date`, or epoch ms). */
  readonly since?: Date | number;
  /** Only events received before this time (exclusive). */
  readonly until?: Date | number;
  /** The `cursor` of the previous page. */
  readonly cursor?: string;
  /** Events per page: 1 to 1,000. Default 50. */
  readonly limit?: number;
}

/** A page of `engine.listEvents`: events newest first (by receipt), and the cursor of the next page when there is one. */
export interface EventListPage {
  readonly events: readonly StoredEvent[];
  /** Absent on the last page. */
  readonly cursor?: string;
}

/** Runs reactors. */
export interface Engine {
  /**
   * Sends an event: checked (name, id, `ts`, a JSON payload of at most 256 KiB nested at most 100
   * levels), validated against `event`'s schema when it is a declaration, then stored once per id.
   * Resolves `accepted`, or `duplicate` when an event with that id is kept already (nothing
   * changes). An accepted event then cancels the unfinished executions it matches of the
   * registered reactors that declare `cancelOn` for it (docs/events.md#cancelling-on-an-event):
   * those queued, parked or paused are rolled back before it resolves; running ones are asked to
   * stop. Then it starts the registered reactors declaring `.on` of the event whose `match`
   * passes, once per event and reactor (a duplicate finds those starts made): `started` names
   * the executions, `triggerFailures` the triggers that failed (the event stays stored). Then
   * resumes every execution waiting for it at a matching `.waitForEvent` step (resolving once
   * their payloads are written, not once their runs finish; a duplicate resumes nothing twice;
   * docs/events.md, "Waiting for an event"). Throws
   * `EventInvalidError` or `EventPayloadError` before anything is stored, and
   * `events_unsupported` on an engine without an event log.
   *
   * @example
   * ```ts
   * const orderPaid = event('order.paid', { orderId: z.string(), amount: z.number() });
   * const sent = await engine.send(orderPaid, { orderId: 'o-1', amount: 42 }, { id: 'pay-981' });
   * if (sent.status === 'duplicate') console.log('already received at', sent.receivedAt);
   * ```
   */
  send<E extends AnyEventDeclaration>(event: E, payload: EventInput<E>, options?: SendOptions): Promise<SendResult>;
  /** Sends an event by name, without a schema: the payload is checked for shape and size only. */
  send(name: string, payload: unknown, options?: SendOptions): Promise<SendResult>;
  /**
   * Sends several events: every entry is checked first (one bad entry throws, naming it in
   * `details.entry`, and nothing is stored), then each is stored in order. Resolves with one
   * result per entry. Each entry's payload is typed by its event when it is a declaration.
   *
   * @example
   * ```ts
   * const results = await engine.sendMany([
   *   { event: orderPaid, payload: { orderId: 'o-1', amount: 42 }, options: { id: 'pay-981' } },
   *   { event: 'stock.low', payload: { sku: 'sku-7' } },
   * ]);
   * ```
   */
  sendMany<const E extends readonly (AnyEventDeclaration | string)[]>(entries: {
    readonly [K in keyof E]: SendEntry<E[K]>;
  }): Promise<SendResult[]>;
  /**
   * Lists kept events (see `recordTtlMs`), newest first by receipt time then id, one page at a
   * time: pass a page's `cursor` for the next; events received meanwhile never shift a listing.
   *
   * @example
   * ```ts
   * const page = await engine.listEvents({ name: 'order.paid', limit: 100 });
   * for (const e of page.events) console.log(e.id, e.payload, e.effects.started);
   * ```
   */
  listEvents(query?: EventListQuery): Promise<EventListPage>;
  /**
   * Subscribes to the notices of sent events (`event.received`, `event.duplicate`), of the
   * executions they cancel (`event.cancelled`) and of the reactors they start (`event.started`,
   * `event.trigger_failed`); returns the unsubscribe function.
   */
  subscribeEvents(listener: EventNoticeListener): () => void;
  /**
   * Runs a reactor in this process and returns its result. Outcomes are returned, never thrown.
   *
   * @example
   * ```ts
   * const result = await engine.run(checkout, { orderId: 'o-1', amount: 42 });
   * if (result.status === 'completed') console.log(result.value);
   * ```
   */
  run<R extends AnyReactorDefinition>(
    reactor: R,
    input: InputOf<R>,
    options?: RunOptions,
  ): Promise<RunResult<OutputOf<R>, StepsOf<R>>>;
  /**
   * Accepts a run for background execution: validates the input, persists a queued record and
   * enqueues its first job. Resolves at once with `queued` (or `failed` for an invalid input),
   * a result that also has `result()` and `wait()` typed by the reactor.
   *
   * @example
   * ```ts
   * const started = await engine.start(checkout, { orderId: 'o-1' });
   * const done = await started.wait({ timeoutMs: 10_000 });
   * if (done.status === 'completed') console.log(done.value); // typed by checkout's output
   * ```
   */
  start<R extends AnyReactorDefinition>(reactor: R, input: InputOf<R>, options?: StartOptions): Promise<Started<R>>;
  /**
   * Starts many executions at once: every entry's options are checked (a bad one throws
   * `StartOptionsError` naming the entry, nothing written) and its input validated first; an
   * invalid input fails only its own entry (`failed` with `validationErrors`, nothing written for
   * it). Then the records are written and the jobs enqueued in one `enqueueMany` (BullMQ
   * `addBulk`). Resolves with one result per entry, in order, each with `result()` and `wait()`
   * typed by its entry's reactor, as `start`'s. Entries with an idempotency key or an ordered
   * lock are started one by one, as by `start`.
   *
   * @example
   * ```ts
   * const [a, b] = await engine.startMany([
   *   { reactor: invoice, input: { orderId: 'o-1', amountCents: 100 } },
   *   { reactor: refund, input: { chargeId: 'ch-1' }, options: { priority: 1 } },
   * ]);
   * const paid = await a.wait({ timeoutMs: 10_000 }); // typed by invoice's output
   * ```
   */
  startMany<const R extends readonly AnyReactorDefinition[]>(entries: {
    readonly [K in keyof R]: StartEntry<R[K]>;
  }): Promise<StartManyResults<R>>;
  /** Processes one job (what a worker calls). A malformed payload must be rejected before (see `ts-reactor/bullmq`). */
  process(job: ExecutionJob, delivery: JobDelivery): Promise<void>;
  /** The current result of an execution from its record (`queued`, `parked`, `running` or terminal); undefined when unknown. */
  result(executionId: string): Promise<RunResult | undefined>;
  /**
   * The current result typed by `reactor`. Rejects with `ExecutionReactorMismatchError`
   * (`execution_reactor_mismatch`) when the record belongs to another reactor.
   *
   * @example
   * ```ts
   * const current = await engine.result(executionId, checkout);
   * if (current?.status === 'completed') console.log(current.value.chargeId);
   * ```
   */
  result<R extends AnyReactorDefinition>(executionId: string, reactor: R): Promise<ResultOf<R> | undefined>;
  /**
   * Lists executions over every retained record (none expired; see `recordTtlMs`), newest first
   * (by creation time, then id), one page at a time. Paging is keyset: pass a page's `cursor` for
   * the next; executions created meanwhile never shift a listing, so it yields each one it
   * covers exactly once. Bad filters throw `ListFilterError` (`list_filter_invalid`).
   *
   * @example
   * ```ts
   * let page = await engine.list({ tags: { orderId: '42' }, limit: 100 });
   * for (;;) {
   *   for (const e of page.executions) console.log(e.executionId, e.status);
   *   if (page.cursor === undefined) break;
   *   page = await engine.list({ tags: { orderId: '42' }, limit: 100, cursor: page.cursor });
   * }
   * ```
   */
  list(query?: ListQuery): Promise<ListPage>;
  /**
   * Polls the record until the execution is terminal or paused (or `timeoutMs` passes, then
   * returns the current state). Rejects with `ExecutionNotFoundError`
   * (`execution_not_found`) as soon as a poll finds no record: the id was never started, its
   * record expired, or a Redis without persistence lost it in a restart. ({@link Engine.result}
   * answers `undefined` in that case instead.)
   *
   * @example
   * ```ts
   * const queued = await engine.start(checkout, { orderId: 'o-1' });
   * const done = await engine.wait(queued.executionId, { timeoutMs: 10_000 });
   * ```
   */
  wait(executionId: string, options?: WaitOptions): Promise<RunResult>;
  /** `wait` typed by `reactor`; rejects with `ExecutionReactorMismatchError` when the record belongs to another reactor. */
  wait<R extends AnyReactorDefinition>(executionId: string, reactor: R, options?: WaitOptions): Promise<ResultOf<R>>;
  /**
   * Cancels an execution that has not finished: queued or parked ones are rolled back at once;
   * one running inline here stops at its next step boundary and rolls back; one running in
   * another worker gets a cancel request it acts on at its next liveness check (see `wait`).
   */
  cancel(executionId: string, options?: { readonly reason?: string }): Promise<RunResult>;
  /**
   * Wakes an execution sleeping in a worker now (docs/time.md#sleeps): the delayed job its sleep
   * step parked with is promoted, and the step completes early (`step.woke`, `early: true`).
   * Resolves false when the execution is not parked on a sleep (not sleeping, not found, running
   * inline, or the engine has no queue).
   */
  wake(executionId: string): Promise<boolean>;
  /** Undoes a completed execution on demand (every undo, newest first); it ends `cancelled`. */
  undo(executionId: string, options?: { readonly reason?: string }): Promise<RunResult>;
  /** Runs a failed, halted, cancelled or aborted execution again as a new execution linked to it (`retryOf`), in the background when a queue is configured. */
  retry(executionId: string): Promise<RunResult>;
  /**
   * Runs again the step an execution is paused on (`onFailure: 'pause'`), with `args` instead of
   * its own when given (validated against its contract), and continues; completed steps are not
   * re-run. It continues in a worker when the execution ran in the background, else in this
   * process (resolving with its outcome). Throws `FailureActionError` unless paused on a failure;
   * of two concurrent actions on one pause, one wins and the other is refused (`already_claimed`).
   *
   * @example
   * ```ts
   * const done = await engine.retryStep(executionId, { args: { amountCents: 1200 } });
   * ```
   */
  retryStep(executionId: string, options?: RetryStepOptions): Promise<RunResult>;
  /**
   * Continues an execution paused on a step's failure with `value` as that step's result, where
   * the step is `skippable` (validated against its schema when it has one). The step is recorded
   * skipped: nothing of it is compensated or undone. Refusals throw `FailureActionError`.
   */
  skipStep<V = unknown>(executionId: string, options: SkipStepOptions<V>): Promise<RunResult>;
  /**
   * Rolls back an execution paused on a step's failure as the automatic path would: the failed
   * step is compensated, the completed ones are undone newest first, and it ends `failed` with the
   * step's original error. Refusals throw `FailureActionError`.
   */
  rollback(executionId: string): Promise<RunResult>;
  /**
   * Starts a new execution linked to `executionId` (`retryOf`; a `run.retried` on the source, a
   * `run.forked` on the fork) that reuses the recorded results of the steps that are neither
   * `fromStep` nor downstream of it, and runs from there. Works on a finished execution and on
   * one paused on a failure (which stays paused). `input` replaces the input (validated); the
   * reused results are kept as recorded.
   */
  fork(executionId: string, options: ForkOptions): Promise<RunResult>;
  /**
   * Resumes an execution paused at an interrupt, by execution id or by the interrupt's
   * correlation id, with a payload validated against the interrupt's schema. It continues in
   * this process (and resolves with its outcome), or in a worker (`queued`) when the interrupt
   * says `resume: 'background'` or the reactor's own lock / semaphore is busy. Refusals throw:
   * `ResumePayloadError` (invalid payload, counted toward `maxAttempts`), `ResumeRefusedError`
   * (already resumed, not paused, unknown correlation id), `InterruptTimeoutError`.
   *
   * @example
   * ```ts
   * const result = await engine.resume({ correlationId: 'order:o-1' }, { approved: true });
   * ```
   */
  resume(
    target: string | { readonly correlationId: string },
    payload: unknown,
    options?: { readonly step?: string },
  ): Promise<RunResult>;
  /** Adds reactors this engine can process jobs for. */
  register(...reactors: readonly AnyReactorDefinition[]): void;
  /** Subscribes to every event of every run; returns the unsubscribe function. */
  subscribe(listener: EventListener): () => void;
  /**
   * Watches one execution from any process: its events (`step.progress` included) in order, each
   * with its `position`, ending after the terminal event (`run.completed`, `run.failed`,
   * `run.halted`, `run.cancelled`, or an `aborted` recovery). A finished execution's kept events
   * are replayed, then the watch ends. `from` continues after a position an earlier watch
   * yielded, none skipped or repeated (docs/progress.md).
   *
   * @throws ExecutionNotFoundError (on the first `next()`) when the execution has no record.
   * @throws WatchUnavailableError when the engine has no execution stream.
   * @example
   * ```ts
   * for await (const { position, event } of engine.watch(id)) {
   *   if (event.type === 'step.progress') console.log(event.step, event.data);
   * }
   * ```
   */
  watch(executionId: string, options?: WatchOptions): AsyncIterable<WatchItem>;
  /**
   * Resolves once the work this engine started without awaiting it has settled: the wake-ups of
   * parked executions after a release, and of an async unit's readers after its end. Call it
   * after stopping workers and before closing connections (`createRedisRuntime().close()` does).
   */
  idle(): Promise<void>;
  /**
   * Runs one recovery sweep now (workers run one on a timer, every `background.sweepIntervalMs`):
   * executions no lease and no job carry any more are re-enqueued, and inline runs whose process
   * stopped are resumed on a worker or ended `aborted` (docs/background.md, "Recovery"). One
   * worker at a time sweeps, about once per interval: `ran` is false when the sweep lock is held
   * (a sweep in progress, or one that began less than 0.8 × the interval ago, in any worker), or
   * when this engine has no queue or coordinator.
   */
  sweep(): Promise<SweepReport>;
  /**
   * Starts this engine's sweep timer (`createWorker` does, for every worker); the returned
   * function stops it. Any number of workers of one engine share one timer.
   */
  startSweeps(): () => void;
  /** The store this engine writes to. */
  readonly store: Store;
  /** Runs a step definition directly, coordinated (see `StepDefinition.invoke`). */
  invokeStep: StepInvoker['invokeStep'];
}
