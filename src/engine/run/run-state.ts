/**
 * The state of one execution while it runs in this process: identity, and a facade over its
 * parts — the trace (`trace-log.ts`), the step book (`step-book.ts`), the checkpointer
 * (`checkpointer.ts`), the job binding and the work slot — each with one writer.
 *
 * @module
 */
import type { Admission } from '../../coordination/admit.js';
import type { CoordinationScope } from '../../coordination/scope.js';
import type { CoordinationSpec } from '../../dsl/coordination.js';
import type { Logger } from '../../dsl/context.js';
import type { Contract } from '../../dsl/contract.js';
import { redactFields } from '../../dsl/contract.js';
import { childLogger } from '../model/logger.js';
import { noInstrument, type Instrument } from '../model/instrument.js';
import { SiblingGate } from '../model/sibling-gate.js';
import type { ErrorJSON } from '../../errors.js';
import { DEFAULT_MAX_TRACE_ENTRIES } from '../model/trace-bound.js';
import type { StreamPublisher } from '../model/stream-publisher.js';
import { Checkpointer } from './checkpointer.js';
import { StepBook } from './step-book.js';
import { ProgressBook } from './progress-book.js';
import { TraceLog } from './trace-log.js';
import type { EventHub, ReactorEvent } from '../model/events.js';
import type { FanOutRuntime } from '../model/fanout/wait.js';
import type { AsyncPort } from './async/port.js';
import type { Clock } from '../../ports/clock.js';
import type { JobQueue } from '../../ports/queue.js';
import type { InterruptClaims } from '../../ports/interrupt-claims.js';
import type { EventWaits } from '../../ports/event-waits.js';
import type { TransitionCause } from '../model/status-machine.js';
import {
  RECORD_VERSION,
  TERMINAL_STATUSES,
  type BackgroundState,
  type ElementLink,
  type ExecutionRecord,
  type ExecutionStatus,
  type ExecutionTags,
  type InterruptWait,
  type RollbackFailure,
  type AttemptRun,
  type StepRecord,
  type Store,
  type TraceContext,
} from '../../ports/store.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event before the run state stamps its identity and time. */
export type EventDraft = DistributiveOmit<ReactorEvent, 'executionId' | 'rootExecutionId' | 'at' | 'reactor'> & {
  readonly reactor?: string;
};

/** Construction parameters of {@link RunState}. */
export interface RunStateInit {
  readonly executionId: string;
  readonly rootExecutionId: string;
  readonly reactor: string;
  readonly contract: Contract;
  readonly input: Record<string, unknown>;
  readonly idempotencyKey: string | undefined;
  /** The execution's tags (checked); absent: the resumed record's, if any. */
  readonly tags?: ExecutionTags | undefined;
  readonly store: Store;
  /** The engine's interrupt claims, if it has them (an interrupt step claims its correlation id there). */
  readonly interruptClaims?: InterruptClaims | undefined;
  /** The engine's event-wait index, if it has one (a `.waitForEvent` step registers there). */
  readonly eventWaits?: EventWaits | undefined;
  /** Told when an execution parked with event waits open: the engine re-checks the event log for them (decision 149). */
  readonly onEventWaitsParked?: ((executionId: string) => void) | undefined;
  readonly clock: Clock;
  readonly hub: EventHub;
  readonly logger: Logger;
  readonly maxConcurrency: number;
  /** Takes coordination declarations for this execution (owner = its root): the engine's `execution/admitter.ts`. */
  readonly admitter: Admitter;
  /** `worker`: retries yield (re-enqueued later) instead of sleeping. Default `inline`. */
  readonly mode?: 'inline' | 'worker';
  /** A persisted record to resume from: completed steps are not run again. */
  readonly resume?: ExecutionRecord;
  /** Rebuild what the record says completed (for undo and cancel); run no step body. */
  readonly replayOnly?: boolean;
  /** The execution this one retries. */
  readonly retryOf?: string | undefined;
  /**
   * The definition it runs with (fingerprint, version), written into every record; absent: the
   * resumed record's (docs/decisions/082).
   */
  readonly definition?: DefinitionStamp | undefined;
  /** Intermediate checkpoints are written at most this often (0: after every step). */
  readonly checkpointIntervalMs?: number;
  /** The trace holds at most this many entries, the oldest folded into a summary (`model/trace-bound.ts`). Default 1,000. */
  readonly maxTraceEntries?: number;
  /** An inline run's sleep step waits in this process at most this long (ms); longer ones hand off. Default 5,000. */
  readonly maxInlineSleepMs?: number;
  /** Brackets work in middleware scopes (spans). Default: none. */
  readonly instrument?: Instrument;
  /** The engine's queue, if any (an interrupt's active timeout is a delayed job). */
  readonly queue?: JobQueue | undefined;
  /** The execution that dispatched this one (an `asyncReactor` child). */
  readonly parentId?: string | undefined;
  /** Dispatching async units and reading their results (set when the engine has a queue). */
  readonly async?: AsyncPort | undefined;
  /** Told once a terminal record of this execution is saved (wakes readers of async units): the engine's `jobs/wakeups.ts`. */
  readonly settleListener?: SettleListener | undefined;
  /** How attempt records name this process (`<host>-<pid>/<engine id>`). Default: `local`. */
  readonly worker?: string;
  /**
   * The engine's execution stream publisher: what it gathered is sent before each checkpoint's
   * write (`beforeWrite`), and a terminal checkpoint waits for it (`flushed`) unless the stream is
   * `ordered`, so a terminal record's stream holds every event before it (decision 138).
   */
  readonly published?: Pick<StreamPublisher, 'beforeWrite' | 'flushed' | 'ordered'> | undefined;
}

/** Takes coordination declarations for the work of any execution of one engine (see {@link RunState.admit}). */
export interface Admitter {
  admit(
    state: RunState,
    specs: readonly CoordinationSpec[],
    args: unknown,
    where: Parameters<Admit>[2],
  ): Promise<Admission>;
}

/** Told of every terminal record a run state saves, once it is saved. */
export interface SettleListener {
  executionSettled(record: ExecutionRecord): void;
}

/** Takes declarations for work of this execution; `abort` receives a lost-hold error. */
export type Admit = (
  specs: readonly CoordinationSpec[],
  args: unknown,
  where: {
    readonly reactor: string;
    readonly step?: string;
    readonly abort: AbortController;
    /** A position taken when the execution was accepted. */
    readonly orderedTicket?: { readonly key: string; readonly nonce: number; readonly epoch: number } | undefined;
    /** Wait as the specs say, also in a worker (rollback re-takes and direct invocations never park). */
    readonly ownWaits?: boolean;
    /** Rate limits charge one slot per start id; default: one per execution and step. */
    readonly startId?: string;
    /** Re-adopt reactor-level holds kept across a step's park. */
    readonly adopt?: boolean;
    /** A step's ordered-lock position: kept across its attempts (see `step-tickets.ts`). */
    readonly stepOrdered?:
      Pick<CoordinationScope, 'onOrderedTicket' | 'handBackOnTimeout' | 'keepPositionOnRefusal'> | undefined;
  },
) => Promise<Admission>;

/**
 * What the driver of a run gives its state once ({@link RunState.bindWork}), before the graph
 * runs: the settings only some drivers have (a worker job's, an inline run's, a replay's).
 */
export interface WorkSlot {
  /**
   * A worker: a step that loses contention parks the execution while fewer than this many
   * contention attempts were made (then it fails like in-process). Absent: never park.
   */
  readonly contentionCap?: number | undefined;
  /** What fan-out maps need (ledger, queue, store; docs/decisions/018): a worker's, or an inline undo's. */
  readonly fanOut?: FanOutRuntime | undefined;
  /**
   * A worker job: writes the terminal record and releases the job's liveness lease, in one round
   * trip where the backend can (docs/decisions/040). Used once, by the first terminal save.
   */
  readonly terminalSave?: ((record: ExecutionRecord) => Promise<void>) | undefined;
  /** A worker job an operator's `engine.wake` delivered early: the sleep step at this path wakes now. */
  readonly sleepWoken?: string | undefined;
  /** An inline run that can hand off to a worker: a longer sleep hands the run off instead of failing (decision 077). */
  readonly sleepHandOff?: boolean | undefined;
}

const NO_WORK: WorkSlot = Object.freeze({});

/**
 * One execution in flight: a facade over its parts, each with one writer — the trace
 * ({@link TraceLog}, appended only by {@link emit}), the step book ({@link StepBook}), the
 * checkpointer ({@link Checkpointer}), the job binding ({@link bindJob}) and the work slot
 * ({@link bindWork}), each given once — and the persisted fields the run's own code updates
 * through named methods.
 */
export class RunState {
  readonly executionId: string;
  readonly rootExecutionId: string;
  readonly reactor: string;
  readonly input: Record<string, unknown>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly maxConcurrency: number;
  readonly #trace: TraceLog;
  readonly #rollbackFailures: RollbackFailure[] = [];
  /** The held-key registry: `lock:<key>` and `semaphore:<key>` (limit 1) this execution holds now. */
  readonly heldKeys = new Set<string>();
  /** Serializes this execution's own steps on step-level exclusive keys (siblings, map elements). */
  readonly siblings = new SiblingGate();
  /** Fencing tokens of the locks held, by key. */
  readonly fencingTokens = new Map<string, string>();
  readonly #init: RunStateInit;
  readonly #book: StepBook;
  readonly #progress: ProgressBook;
  readonly #checkpoints: Checkpointer;
  readonly #createdAt: number;
  readonly mode: 'inline' | 'worker';
  readonly replayOnly: boolean;
  /** How this process is named on the attempts it runs (`StepRecord.runs`). */
  readonly worker: string;
  /**
   * Durable mode in a worker (`checkpointIntervalMs: 0`): each attempt's start is on the record
   * before its body runs (docs/decisions/098).
   */
  readonly marksStarts: boolean;
  /**
   * Who holds coordination keys for this work: the root execution inline; in a worker, the root
   * plus this job's run, so a key left behind by a dead worker's run of the same execution is
   * never re-entered (it is waited out, and re-taken with a new fencing token).
   */
  readonly holderId: string;
  #background: BackgroundState | undefined;
  /** Brackets steps, compensations and undos in middleware scopes (spans). */
  readonly instrument: Instrument;
  readonly #interrupts: InterruptWait[];
  /** Arguments an operator gave steps (`engine.retryStep`), by path; persisted with each checkpoint. */
  readonly stepArgs: Readonly<Record<string, unknown>>;
  /** An inline sleep step waits in this process at most this long (ms); see {@link sleepHandOff}. */
  readonly maxInlineSleepMs: number;
  /** Given once by the driver ({@link bindWork}). */
  #work: WorkSlot = NO_WORK;
  #workBound = false;
  /** The work slot's terminal save, or the job binding's, was used (by the first terminal checkpoint). */
  #lastSaveUsed = false;
  /** Set by a worker job ({@link bindJob}): its fenced save and its root controller. */
  #job: JobBinding | undefined;
  /** The execution's tags: given at its start, else its resumed record's (every record carries them). */
  get tags(): ExecutionTags | undefined {
    return this.#init.tags ?? this.#init.resume?.tags;
  }
  /** The definition fields every record of this execution carries (its own, else the resumed record's). */
  get #stamp(): { fingerprint?: string; version?: string } {
    return stampFields(this.#init.definition ?? this.#init.resume);
  }
  /** The definition fields of this execution's records, for the records it creates for others (a fan-out map's elements). */
  get definitionStamp(): { fingerprint?: string; version?: string } {
    return this.#stamp;
  }
  #stopped: Error | undefined;
  readonly #loggers = new Map<string, Logger>();

  constructor(init: RunStateInit) {
    this.#init = init;
    this.executionId = init.executionId;
    this.rootExecutionId = init.rootExecutionId;
    this.reactor = init.reactor;
    this.input = init.input;
    this.clock = init.clock;
    // Every line this execution logs carries its identity (docs/decisions/029).
    this.logger = childLogger(init.logger, { executionId: init.executionId, reactor: init.reactor });
    this.maxConcurrency = init.maxConcurrency;
    this.maxInlineSleepMs = init.maxInlineSleepMs ?? 5_000;
    this.mode = init.mode ?? 'inline';
    this.replayOnly = init.replayOnly ?? false;
    this.worker = init.worker ?? 'local';
    const intervalMs = init.checkpointIntervalMs ?? 0;
    this.marksStarts = this.mode === 'worker' && intervalMs === 0;
    // Holds kept across a step's park are re-adopted under the owner that took them.
    this.holderId =
      init.resume?.background?.parkedHolds?.owner ??
      (this.mode === 'worker' ? `${init.rootExecutionId}@${crypto.randomUUID().slice(0, 8)}` : init.rootExecutionId);
    this.#book = new StepBook({ resume: init.resume, countsBytes: intervalMs > 0 || this.marksStarts });
    this.#progress = new ProgressBook(init.resume?.progress);
    this.#createdAt = init.resume?.createdAt ?? init.clock.now();
    this.#background = init.resume?.background;
    this.instrument = init.instrument ?? noInstrument;
    this.#interrupts = [...(init.resume?.interrupts ?? [])];
    this.stepArgs = init.resume?.stepArgs ?? {};
    this.#rollbackFailures.push(...(init.resume?.rollbackFailures ?? []));
    this.#trace = new TraceLog(
      init.maxTraceEntries ?? DEFAULT_MAX_TRACE_ENTRIES,
      init.resume?.trace,
      init.resume?.traceContext,
    );
    this.#checkpoints = new Checkpointer({
      executionId: init.executionId,
      clock: init.clock,
      logger: this.logger,
      intervalMs,
      maxRecordBytes: () => init.store.maxRecordBytes ?? 512 * 1024,
      persisted: init.resume?.status,
      stopped: () => this.stopped,
      stop: (error) => this.stop(error),
      fenced: () => this.#job !== undefined,
      sender: (terminal) => this.#sender(terminal),
      settled:
        init.settleListener === undefined ? undefined : (record) => init.settleListener!.executionSettled(record),
    });
  }

  /**
   * Binds this state to the worker job that holds the execution's liveness lease: every
   * checkpoint is written through `save` (refused once the lease is lost), and a write that
   * fails for good stops the job through `root` (docs/decisions/064).
   */
  bindJob(job: JobBinding): void {
    this.#job = job;
    job.attach(this);
  }

  /** Gives the state its driver's settings ({@link WorkSlot}), once, before the graph runs. */
  bindWork(slot: WorkSlot): void {
    if (this.#workBound) throw new Error(`run state of ${this.executionId}: its work slot is given once`);
    this.#workBound = true;
    this.#work = slot;
  }

  /** A worker's contention cap ({@link WorkSlot.contentionCap}); undefined: a losing step never parks. */
  get contentionCap(): number | undefined {
    return this.#work.contentionCap;
  }

  /** What fan-out maps need, when the driver gave it ({@link WorkSlot.fanOut}). */
  get fanOut(): FanOutRuntime | undefined {
    return this.#work.fanOut;
  }

  /** The sleep step an operator's `engine.wake` woke early ({@link WorkSlot.sleepWoken}). */
  get sleepWoken(): string | undefined {
    return this.#work.sleepWoken;
  }

  /** An inline run's longer sleep hands off to a worker ({@link WorkSlot.sleepHandOff}). */
  get sleepHandOff(): boolean {
    return this.#work.sleepHandOff ?? false;
  }

  /** How one checkpoint's record is written: the first terminal one through the last save, if any. */
  #sender(terminal: boolean): (record: ExecutionRecord) => Promise<void> {
    const send = this.#send(terminal);
    const published = this.#init.published;
    if (published === undefined) return send;
    // The events gathered so far leave right before the record (one socket write on Redis).
    return (record) => {
      published.beforeWrite();
      return send(record);
    };
  }

  #send(terminal: boolean): (record: ExecutionRecord) => Promise<void> {
    const last = terminal && !this.#lastSaveUsed ? (this.#work.terminalSave ?? this.#job?.terminalSave) : undefined;
    if (last) {
      this.#lastSaveUsed = true;
      return last;
    }
    const job = this.#job;
    return job ? job.save : (record) => this.#init.store.save(record);
  }

  /**
   * Why this job must stop without writing anything more (lease lost, worker shutdown, store
   * unreachable past the outage tolerance), or undefined. Only a worker job stops this way.
   */
  get stopped(): Error | undefined {
    return this.#stopped ?? this.#job?.stopped();
  }

  /** Stops the job: no step starts, nothing is rolled back, nothing more is written. */
  stop(error: Error): void {
    this.#stopped ??= error;
    this.#job?.stop(error);
  }

  /** Takes declarations for work of this execution through the engine's {@link Admitter}; `where.abort` receives a lost-hold error. */
  admit(specs: readonly CoordinationSpec[], args: unknown, where: Parameters<Admit>[2]): Promise<Admission> {
    return this.#init.admitter.admit(this, specs, args, where);
  }

  /** The link to the parent when this state runs one element of a fan-out map. */
  get element(): ElementLink | undefined {
    return this.#init.resume?.element;
  }

  /** When the execution was created (engine clock, ms): its record's `createdAt` (a reactor's deadline counts from it). */
  get createdAt(): number {
    return this.#createdAt;
  }

  /** The trace: every event emitted (and resumed from the record), bounded by `maxTraceEntries` (decision 073). */
  get trace(): readonly ReactorEvent[] {
    return this.#trace.entries;
  }

  /** The trace this execution belongs to, persisted with each checkpoint (given by tracing middleware, {@link traced}). */
  get traceContext(): TraceContext | undefined {
    return this.#trace.context;
  }

  /** Traces the spans that start this execution link to (a retry: the retried execution's); not persisted. */
  get traceLinks(): readonly TraceContext[] | undefined {
    return this.#trace.links;
  }

  /** The work scope running this execution names its trace (none: unchanged). */
  traced(context: TraceContext | undefined): void {
    this.#trace.traced(context);
  }

  /** The traces the spans that start this execution link to (set by its start). */
  linkTraces(links: readonly TraceContext[] | undefined): void {
    this.#trace.linked(links);
  }

  /** Background bookkeeping, persisted with each checkpoint (changed through {@link setBackground}). */
  get background(): BackgroundState | undefined {
    return this.#background;
  }

  /** Replaces the background bookkeeping the next checkpoint persists (parks, jobs, ordered positions). */
  setBackground(background: BackgroundState | undefined): void {
    this.#background = background;
  }

  /** The interrupts this execution waits at (or whose accepted payload is not consumed yet), persisted with each checkpoint. */
  get interrupts(): readonly InterruptWait[] {
    return this.#interrupts;
  }

  /** An interrupt step starts waiting: its wait is persisted with the next checkpoint. */
  awaitInterrupt(wait: InterruptWait): void {
    this.#interrupts.push(wait);
  }

  /** Compensations and undos that failed, persisted with each checkpoint. */
  get rollbackFailures(): readonly RollbackFailure[] {
    return this.#rollbackFailures;
  }

  /** Records compensations or undos that failed. */
  addRollbackFailures(...failures: readonly RollbackFailure[]): void {
    this.#rollbackFailures.push(...failures);
  }

  /**
   * Replaces the rollback failures recorded since index `from` with `tag` of each (a fan-out
   * element's undo names its map and index); returns the replaced ones.
   */
  retagRollbackFailures(from: number, tag: (failure: RollbackFailure) => RollbackFailure): RollbackFailure[] {
    const added = this.#rollbackFailures.splice(from).map(tag);
    this.#rollbackFailures.push(...added);
    return added;
  }

  /** Stamps, records and publishes an event. */
  emit(draft: EventDraft): void {
    // Same fields and order as `{ reactor, ...draft, executionId, rootExecutionId, at }`, without the spread's cost on the hot path.
    const event = Object.assign({ reactor: this.reactor }, draft) as Record<string, unknown>;
    event.executionId = this.executionId;
    event.rootExecutionId = this.rootExecutionId;
    event.at = this.clock.now();
    this.#trace.append(event as unknown as ReactorEvent);
    this.#init.hub.emit(event as unknown as ReactorEvent);
  }

  /**
   * A step's progress report (`ctx.progress(data)`): checked, kept as the step's newest (on the
   * next checkpoint's record) and published as `step.progress` — to listeners and the execution
   * stream, not to the trace.
   *
   * @throws ProgressInvalidError when `data` has no JSON form or is too large; nothing is kept or published.
   */
  reportProgress(step: string, attempt: number, data: unknown): void {
    const at = this.clock.now();
    const value = this.#progress.report(step, attempt, data, at);
    this.#init.hub.emit({
      type: 'step.progress',
      reactor: this.reactor,
      step,
      attempt,
      data: value,
      executionId: this.executionId,
      rootExecutionId: this.rootExecutionId,
      at,
    });
  }

  /**
   * Publishes a repeat of the newest trace entry `repeats` picks (a re-park behind the same
   * holder, docs/decisions/097): listeners get the event as emitted; the trace gains no entry —
   * that one is replaced by the event, keeping its time. Without such an entry, as {@link emit}.
   */
  emitRepeat(draft: EventDraft, repeats: (entry: ReactorEvent) => boolean): void {
    const event = { reactor: this.reactor, ...draft, executionId: this.executionId } as Record<string, unknown>;
    event.rootExecutionId = this.rootExecutionId;
    event.at = this.clock.now();
    if (!this.#trace.replaceNewest(event as unknown as ReactorEvent, repeats)) return this.emit(draft);
    this.#init.hub.emit(event as unknown as ReactorEvent);
  }

  /** The store this execution is persisted in. */
  get store(): Store {
    return this.#init.store;
  }

  /** The engine's interrupt claims; undefined when it has none. */
  get interruptClaims(): InterruptClaims | undefined {
    return this.#init.interruptClaims;
  }

  /** The engine's event-wait index; undefined when it has none. */
  get eventWaits(): EventWaits | undefined {
    return this.#init.eventWaits;
  }

  /** Tells the engine this execution parked with event waits open (see `RunStateInit.onEventWaitsParked`). */
  parkedOnEvents(): void {
    this.#init.onEventWaitsParked?.(this.executionId);
  }

  /** The engine's queue, if any. */
  get queue(): JobQueue | undefined {
    return this.#init.queue;
  }

  /** The recorded state of one step (from this run or the record it resumed). */
  stepRecord(path: string): StepRecord | undefined {
    return this.#book.stepRecord(path);
  }

  /**
   * Keeps the element states of the map at `path` apart from the step records (a map of more than
   * `COMPACT_MAP_ABOVE` elements): from now on its element paths (`path[3]`) read and write them.
   * A map resumed from its record gets the states it had, when its size is unchanged.
   */
  compactMap(path: string, size: number): void {
    this.#book.compactMap(path, size);
  }

  /** True when the record holds any step at or under `path` (a compose or map reached before). */
  reached(path: string): boolean {
    return this.#book.reached(path);
  }

  #progressField(): Pick<ExecutionRecord, 'progress'> {
    const progress = this.#progress.record();
    return progress === undefined ? {} : { progress };
  }

  #link(): Pick<ExecutionRecord, 'retryOf' | 'parentId' | 'unit'> {
    const retryOf = this.#init.retryOf ?? this.#init.resume?.retryOf;
    const parentId = this.#init.parentId ?? this.#init.resume?.parentId;
    const unit = this.#init.resume?.unit;
    return {
      ...(retryOf === undefined ? {} : { retryOf }),
      ...(parentId === undefined ? {} : { parentId }),
      ...(unit === undefined ? {} : { unit }),
    };
  }

  /** Dispatching async units (undefined when the engine has no queue). */
  get async(): AsyncPort | undefined {
    return this.#init.async;
  }

  /** Set when this state runs an `asyncStep` unit (from its record). */
  get unit(): ExecutionRecord['unit'] {
    return this.#init.resume?.unit;
  }

  /** A snapshot of every step's state. */
  get steps(): Readonly<Record<string, StepRecord>> {
    return this.#book.steps;
  }

  /** A logger bound to this execution and one step (cached per step). */
  stepLogger(step: string): Logger {
    let logger = this.#loggers.get(step);
    if (!logger) this.#loggers.set(step, (logger = childLogger(this.logger, { step })));
    return logger;
  }

  /** The input with redacted fields hidden, for events and logs. */
  get redactedInput(): unknown {
    return redactFields(this.#init.contract, this.input);
  }

  /**
   * Records a step's state; completions get a sequence number (undo runs in reverse of it). The
   * step's attempt log is kept; an attempt start mark is dropped once the step is no longer `running`.
   */
  setStep(step: string, record: Omit<StepRecord, 'completedSeq'>): void {
    this.#book.setStep(step, record);
  }

  /** Appends attempts to a step's attempt log (`StepRecord.runs`) once the step is recorded; a large map's elements keep none. */
  logAttempt(step: string, runs: readonly AttemptRun[]): void {
    this.#book.logAttempt(step, runs);
  }

  /**
   * Durable mode: puts the start of `attempt` of `step` on the record before its body runs. A
   * start the checkpoint before it carried already ({@link carryStart}) costs nothing; otherwise
   * this is one fenced write. Resolves once the start is on the record; undefined when there is
   * nothing to write (not durable mode).
   */
  attemptStarting(step: string, attempt: number): Promise<void> | undefined {
    if (!this.marksStarts || this.#book.inCompactMap(step)) return undefined;
    if (this.#book.takeCarried(step, attempt)) return undefined;
    this.#book.markStart(step, attempt, this.worker, this.clock.now(), false);
    return this.checkpoint();
  }

  /**
   * Durable mode: marks the start of `attempt` of `step` in the step record now, so the checkpoint
   * about to be written carries it (a step that starts right after the one that settled, a linear
   * chain: no write of its own). False when not in durable mode.
   */
  carryStart(step: string, attempt: number): boolean {
    if (!this.marksStarts || this.#book.inCompactMap(step)) return false;
    this.#book.markStart(step, attempt, this.worker, this.clock.now(), true);
    return true;
  }

  /**
   * An intermediate checkpoint (a step settled, a run started). With a checkpoint interval it is
   * written at most that often — what is skipped is in the next write — unless the unsaved part
   * is large (so an oversized record is still refused at the step that made it). A crash loses at
   * most the interval's progress: those steps run again (at-least-once).
   */
  progress(status?: ExecutionStatus): Promise<void> {
    return this.#checkpoints.progress(status, this.#book.unsavedBytes, () => this.checkpoint());
  }

  /**
   * Durable mode, the last step of a job's graph settled: its outcome rides on the final record,
   * written next, unless the unsaved part is large (then written now, so an oversized record is
   * refused at the step that made it, as by {@link progress}). A crash in between runs the step
   * again, its attempt counted as lost (`worker_lost`).
   */
  progressToEnd(): Promise<void> {
    return this.#checkpoints.toEnd(this.#book.unsavedBytes, () => this.checkpoint());
  }

  /**
   * Restarts the checkpoint interval when nothing is unsaved but the status: time spent waiting
   * to be admitted (a contended key) is not progress, so the run's first checkpoint after it may
   * wait a full interval, like the first one of any resumed job (docs/decisions/043).
   */
  waited(): void {
    this.#checkpoints.waited(this.#book.unsavedBytes);
  }

  /** Persists the current state; saves are serialized so a later state never loses to an earlier one. */
  checkpoint(
    status: ExecutionStatus = this.#checkpoints.status,
    outcome: Partial<
      Pick<
        ExecutionRecord,
        | 'value'
        | 'error'
        | 'failedStep'
        | 'haltReason'
        | 'haltData'
        | 'cancelReason'
        | 'cancelCause'
        | 'retryOf'
        | 'pausedOn'
      >
    > = {},
    options: {
      readonly withTrace?: boolean;
      /** Why the status is written (default `run`: the execution's own work); see {@link TransitionCause}. */
      readonly cause?: TransitionCause;
    } = {},
  ): Promise<void> {
    const write = (): Promise<void> =>
      this.#checkpoints.checkpoint(status, options.cause ?? 'run', (written) =>
        this.#record(written, outcome, options.withTrace),
      );
    // A terminal record comes after every event before it in the execution stream (decision 138):
    // an ordered stream's appends, sent just before the record's write, run before it.
    const published = this.#init.published;
    return published !== undefined && !published.ordered && TERMINAL_STATUSES.has(status)
      ? published.flushed().then(write)
      : write();
  }

  /** The record of the current state with `status` and `outcome` (the step book's unsaved part is in it from now). */
  #record(
    status: ExecutionStatus,
    outcome: Partial<ExecutionRecord>,
    withTraceOption: boolean | undefined,
  ): ExecutionRecord {
    // The trace travels with every record of a background execution, so the persisted trace is
    // append-only across jobs, workers and recoveries (docs/decisions/098); an inline run hands it
    // to its caller in the result.
    const withTrace = withTraceOption ?? (this.mode === 'worker' || this.#background !== undefined);
    const mapStates = this.#book.mapStates();
    const traceContext = this.#trace.context;
    const record: ExecutionRecord = {
      v: RECORD_VERSION,
      id: this.executionId,
      rootId: this.rootExecutionId,
      reactor: this.reactor,
      ...this.#stamp,
      status,
      input: this.input,
      steps: this.#book.records(),
      ...(mapStates === undefined ? {} : { mapStates }),
      rollbackFailures: [...this.#rollbackFailures],
      ...(this.#init.idempotencyKey === undefined ? {} : { idempotencyKey: this.#init.idempotencyKey }),
      ...(this.tags === undefined ? {} : { tags: this.tags }),
      ...(this.#background === undefined ? {} : { background: this.#background }),
      ...(traceContext === undefined ? {} : { traceContext }),
      ...(this.#interrupts.length === 0 ? {} : { interrupts: [...this.#interrupts] }),
      ...(Object.keys(this.stepArgs).length === 0 ? {} : { stepArgs: this.stepArgs }),
      ...this.#progressField(),
      ...this.#link(),
      ...(this.element === undefined ? {} : { parentId: this.element.parentId, element: this.element }),
      ...(withTrace ? { trace: this.#trace.entries.slice() } : {}),
      ...outcome,
      createdAt: this.#createdAt,
      updatedAt: this.clock.now(),
    };
    this.#book.saved();
    return record;
  }
}

/** The definition an execution runs with, as its records carry it (`ExecutionRecord.fingerprint`, `version`). */
export interface DefinitionStamp {
  readonly fingerprint?: string | undefined;
  readonly version?: string | undefined;
}

/** The record fields of a stamp (absent fields left out). */
export function stampFields(stamp: DefinitionStamp | undefined): { fingerprint?: string; version?: string } {
  return {
    ...(stamp?.fingerprint === undefined ? {} : { fingerprint: stamp.fingerprint }),
    ...(stamp?.version === undefined ? {} : { version: stamp.version }),
  };
}

/** What a worker job gives the state of the execution it holds the liveness lease of. */
export interface JobBinding {
  /** Writes a checkpoint only while the job holds the lease (`JobLeases.saveFenced`). */
  readonly save: (record: ExecutionRecord) => Promise<void>;
  /** Stops the job (aborts its root controller with `error`); the first reason wins. */
  readonly stop: (error: Error) => void;
  /** Why the job stops, if it does. */
  readonly stopped: () => Error | undefined;
  /** Called once per state bound to the job (the job reports its stop through the first one). */
  readonly attach: (state: RunState) => void;
  /**
   * An inline run's lease: its last write — the terminal one — saves and releases the lease in
   * one call. Used once, by the first terminal save, unless the work slot gives its own.
   */
  readonly terminalSave?: ((record: ExecutionRecord) => Promise<void>) | undefined;
}

/** Compact error JSON for events (no stack). */
export function errorSummary(error: Error & { code?: unknown }): ErrorJSON {
  const json: { name: string; message: string; code?: string } = { name: error.name, message: error.message };
  if (typeof error.code === 'string') json.code = error.code;
  return json;
}
