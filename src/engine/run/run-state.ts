/**
 * The mutable state of one execution while it runs in this process: identity, the event
 * emitter that also builds the trace, step records and serialized checkpoints.
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
import { RecordTooLargeError, type ErrorJSON } from '../../errors.js';
import { fitRecord } from './fit-record.js';
import { CompactMap, elementOf } from './compact-map.js';
import { boundTrace, DEFAULT_MAX_TRACE_ENTRIES, MIN_TRACE_ENTRIES } from '../model/trace-bound.js';
import type { EventHub, ReactorEvent } from '../model/events.js';
import type { FanOutRuntime } from '../model/fanout/wait.js';
import type { AsyncPort } from './async/port.js';
import type { Clock } from '../ports/clock.js';
import type { JobQueue } from '../ports/queue.js';
import { checkTransition, isJobStop, type TransitionCause } from '../model/status-machine.js';
import {
  RECORD_VERSION,
  TERMINAL_STATUSES,
  type BackgroundState,
  type ElementLink,
  type ExecutionRecord,
  type ExecutionStatus,
  type ExecutionTags,
  type InterruptWait,
  type MapElementStates,
  type RollbackFailure,
  type AttemptRun,
  type StepRecord,
  type Store,
  type TraceContext,
} from '../ports/store.js';

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

/** One execution in flight. */
export class RunState {
  readonly executionId: string;
  readonly rootExecutionId: string;
  readonly reactor: string;
  readonly input: Record<string, unknown>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly maxConcurrency: number;
  /** The trace: every event emitted (and resumed from the record), bounded by `maxTraceEntries` (decision 073). */
  readonly trace: ReactorEvent[] = [];
  readonly #maxTrace: number;
  readonly rollbackFailures: RollbackFailure[] = [];
  /** The held-key registry: `lock:<key>` and `semaphore:<key>` (limit 1) this execution holds now. */
  readonly heldKeys = new Set<string>();
  /** Serializes this execution's own steps on step-level exclusive keys (siblings, map elements). */
  readonly siblings = new SiblingGate();
  /** Fencing tokens of the locks held, by key. */
  readonly fencingTokens = new Map<string, string>();
  readonly #init: RunStateInit;
  readonly #steps: Record<string, StepRecord>;
  /** Large in-process maps: their element states, apart from the step records (docs/decisions/076). */
  readonly #maps = new Map<string, CompactMap>();
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
  /** Starts already carried by the checkpoint before them (`path#attempt`): their attempt needs no write of its own. */
  #carried: Set<string> | undefined;
  /**
   * Who holds coordination keys for this work: the root execution inline; in a worker, the root
   * plus this job's run, so a key left behind by a dead worker's run of the same execution is
   * never re-entered (it is waited out, and re-taken with a new fencing token).
   */
  readonly holderId: string;
  /** Background bookkeeping, persisted with each checkpoint. */
  background: BackgroundState | undefined;
  /** Brackets steps, compensations and undos in middleware scopes (spans). */
  readonly instrument: Instrument;
  /** The trace this execution belongs to, persisted with each checkpoint (set once, by tracing middleware). */
  traceContext: TraceContext | undefined;
  /** Traces the spans that start this execution link to (a retry: the retried execution's); not persisted. */
  traceLinks: readonly TraceContext[] | undefined = undefined;
  /** The interrupts this execution waits at (or whose accepted payload is not consumed yet), persisted with each checkpoint. */
  interrupts: InterruptWait[];
  /** Arguments an operator gave steps (`engine.retryStep`), by path; persisted with each checkpoint. */
  readonly stepArgs: Readonly<Record<string, unknown>>;
  /**
   * Set by a worker: a step that loses contention parks the execution while fewer than this
   * many contention attempts were made (then it fails like in-process). Undefined: never park.
   */
  contentionCap: number | undefined = undefined;
  /** An inline sleep step waits in this process at most this long (ms); see {@link sleepHandOff}. */
  readonly maxInlineSleepMs: number;
  /** Set by an inline run that can hand off to a worker: a longer sleep hands the run off instead of failing (decision 077). */
  sleepHandOff = false;
  /** Set by a worker job an operator's `engine.wake` delivered early: the sleep step at this path wakes now. */
  sleepWoken: string | undefined = undefined;
  /** Set by a worker: what fan-out maps need (ledger, queue, store; docs/decisions/018). */
  fanOut: FanOutRuntime | undefined = undefined;
  /**
   * Set by a worker: writes the terminal record and releases the job's liveness lease, in one
   * round trip where the backend can (docs/decisions/040). Used once, by the first terminal save.
   */
  terminalSave: ((record: ExecutionRecord) => Promise<void>) | undefined = undefined;
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
  /** The status the store holds for this execution (as far as this process wrote or read it). */
  #persisted: ExecutionStatus | undefined;
  #seq = 0;
  #saving: Promise<void> = Promise.resolve();
  #lastWrite = 0;
  #unsavedBytes = 0;
  /** A progress write was skipped and is not covered by a later write yet. */
  #dirty = false;
  #trailing: (() => void) | undefined;
  #status: ExecutionStatus = 'running';
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
    this.marksStarts = this.mode === 'worker' && (init.checkpointIntervalMs ?? 0) === 0;
    // Holds kept across a step's park are re-adopted under the owner that took them.
    this.holderId =
      init.resume?.background?.parkedHolds?.owner ??
      (this.mode === 'worker' ? `${init.rootExecutionId}@${crypto.randomUUID().slice(0, 8)}` : init.rootExecutionId);
    this.#steps = { ...(init.resume?.steps ?? {}) };
    for (const [path, states] of Object.entries(init.resume?.mapStates ?? {}))
      this.#maps.set(path, new CompactMap(states.size, states));
    this.#createdAt = init.resume?.createdAt ?? init.clock.now();
    this.#seq = Math.max(0, ...Object.values(this.#steps).map((r) => r.completedSeq ?? 0));
    this.background = init.resume?.background;
    this.instrument = init.instrument ?? noInstrument;
    this.traceContext = init.resume?.traceContext;
    this.interrupts = [...(init.resume?.interrupts ?? [])];
    this.stepArgs = init.resume?.stepArgs ?? {};
    this.rollbackFailures.push(...(init.resume?.rollbackFailures ?? []));
    this.#maxTrace = init.maxTraceEntries ?? DEFAULT_MAX_TRACE_ENTRIES;
    for (const event of init.resume?.trace ?? []) this.trace.push(event);
    boundTrace(this.trace, this.#maxTrace); // a record written under a larger bound
    // A resumed execution's record exists already: its first progress checkpoint may wait.
    if (init.resume) this.#lastWrite = init.clock.now();
    this.#persisted = init.resume?.status;
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

  /** Stamps, records and publishes an event. */
  emit(draft: EventDraft): void {
    // Same fields and order as `{ reactor, ...draft, executionId, rootExecutionId, at }`, without the spread's cost on the hot path.
    const event = Object.assign({ reactor: this.reactor }, draft) as Record<string, unknown>;
    event.executionId = this.executionId;
    event.rootExecutionId = this.rootExecutionId;
    event.at = this.clock.now();
    this.trace.push(event as unknown as ReactorEvent);
    if (this.trace.length > this.#maxTrace) boundTrace(this.trace, this.#maxTrace);
    this.#init.hub.emit(event as unknown as ReactorEvent);
  }

  /**
   * Publishes a repeat of the newest trace entry `repeats` picks (a re-park behind the same
   * holder, docs/decisions/097): listeners get the event as emitted; the trace gains no entry —
   * that one is replaced by the event, keeping its time. Without such an entry, as {@link emit}.
   */
  emitRepeat(draft: EventDraft, repeats: (entry: ReactorEvent) => boolean): void {
    for (let i = this.trace.length - 1; i >= 0; i--) {
      const entry = this.trace[i]!;
      if (!repeats(entry)) continue;
      const event = { reactor: this.reactor, ...draft, executionId: this.executionId } as Record<string, unknown>;
      event.rootExecutionId = this.rootExecutionId;
      event.at = this.clock.now();
      this.trace[i] = { ...event, at: entry.at } as unknown as ReactorEvent;
      this.#init.hub.emit(event as unknown as ReactorEvent);
      return;
    }
    this.emit(draft);
  }

  /** The store this execution is persisted in. */
  get store(): Store {
    return this.#init.store;
  }

  /** The engine's queue, if any. */
  get queue(): JobQueue | undefined {
    return this.#init.queue;
  }

  /** The recorded state of one step (from this run or the record it resumed). */
  stepRecord(path: string): StepRecord | undefined {
    const element = this.#maps.size === 0 ? undefined : elementOf(path);
    const map = element && this.#maps.get(element.map);
    if (map && element) return map.get(element.index);
    const record = this.#steps[path];
    return record && this.#withMapResult(path, record);
  }

  /**
   * Keeps the element states of the map at `path` apart from the step records (a map of more than
   * `COMPACT_MAP_ABOVE` elements): from now on its element paths (`path[3]`) read and write them.
   * A map resumed from its record gets the states it had, when its size is unchanged.
   */
  compactMap(path: string, size: number): void {
    if (this.#maps.get(path)?.size !== size) this.#maps.set(path, new CompactMap(size));
  }

  /** A compact map's own record with its result (rebuilt from the element states when it settled in another process). */
  #withMapResult(path: string, record: StepRecord): StepRecord {
    const map = this.#maps.get(path);
    if (map === undefined || record.status !== 'completed' || record.result !== undefined) return record;
    const result = map.result();
    return result === undefined ? record : { ...record, result };
  }

  /** True when the record holds any step at or under `path` (a compose or map reached before). */
  reached(path: string): boolean {
    if (this.#maps.has(path)) return true;
    return Object.keys(this.#steps).some((p) => p === path || p.startsWith(`${path}.`) || p.startsWith(`${path}[`));
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
    const steps = { ...this.#steps };
    for (const path of this.#maps.keys()) {
      const record = steps[path];
      if (record) steps[path] = this.#withMapResult(path, record);
    }
    return steps;
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
    if (this.#maps.size > 0 && this.#compactSet(step, record)) return;
    const prev = this.#steps[step];
    let next: StepRecord =
      record.status === 'completed'
        ? { ...record, completedSeq: ++this.#seq }
        : prev === undefined
          ? record
          : { ...prev, ...record };
    if (next.runs === undefined && prev?.runs !== undefined) next = { ...next, runs: prev.runs };
    if (next.started !== undefined && record.status !== 'running') {
      const { started: _started, ...rest } = next;
      next = rest;
    }
    this.#steps[step] = next;
    if (record.result !== undefined && (this.#init.checkpointIntervalMs ?? 0) > 0)
      this.#unsavedBytes += approximateBytes(record.result);
  }

  /** Appends attempts to a step's attempt log (`StepRecord.runs`) once the step is recorded; a large map's elements keep none. */
  logAttempt(step: string, runs: readonly AttemptRun[]): void {
    const prev = this.#steps[step];
    if (prev === undefined || this.#inCompactMap(step)) return;
    this.#steps[step] = { ...prev, runs: prev.runs === undefined ? runs : [...prev.runs, ...runs] };
  }

  /**
   * Durable mode: puts the start of `attempt` of `step` on the record before its body runs. A
   * start the checkpoint before it carried already ({@link carryStart}) costs nothing; otherwise
   * this is one fenced write. Resolves once the start is on the record; undefined when there is
   * nothing to write (not durable mode).
   */
  attemptStarting(step: string, attempt: number): Promise<void> | undefined {
    if (!this.marksStarts || this.#inCompactMap(step)) return undefined;
    if (this.#carried?.delete(`${step}#${attempt}`) === true) return undefined;
    this.#markStart(step, attempt);
    return this.checkpoint();
  }

  /**
   * Durable mode: marks the start of `attempt` of `step` in the step record now, so the checkpoint
   * about to be written carries it (a step that starts right after the one that settled, a linear
   * chain: no write of its own). False when not in durable mode.
   */
  carryStart(step: string, attempt: number): boolean {
    if (!this.marksStarts || this.#inCompactMap(step)) return false;
    this.#markStart(step, attempt);
    (this.#carried ??= new Set()).add(`${step}#${attempt}`);
    return true;
  }

  /** An element of a large in-process map: its states are kept apart and carry no start marks. */
  #inCompactMap(step: string): boolean {
    if (this.#maps.size === 0) return false;
    const element = elementOf(step);
    return element !== undefined && this.#maps.has(element.map);
  }

  #markStart(step: string, attempt: number): void {
    this.setStep(step, {
      status: 'running',
      attempts: attempt,
      started: { attempt, worker: this.worker, at: this.clock.now() },
    });
  }

  #mapStates(): Record<string, MapElementStates> {
    return Object.fromEntries([...this.#maps].map(([path, map]) => [path, map.snapshot()]));
  }

  /** A compact map's element, or its own record (kept without the result, which its elements hold); false for any other step. */
  #compactSet(step: string, record: Omit<StepRecord, 'completedSeq'>): boolean {
    const element = elementOf(step);
    const elements = element && this.#maps.get(element.map);
    if (elements && element) {
      elements.set(element.index, record);
      return true;
    }
    const map = this.#maps.get(step);
    if (map === undefined || record.result === undefined) return false;
    const { result, ...rest } = record;
    if (record.status === 'completed') map.settle(result as Parameters<CompactMap['settle']>[0]);
    this.#unsavedBytes = Number.POSITIVE_INFINITY; // a settled large map is written at once (its states may be refused)
    this.#steps[step] =
      record.status === 'completed' ? { ...rest, completedSeq: ++this.#seq } : { ...this.#steps[step], ...rest };
    return true;
  }

  /**
   * An intermediate checkpoint (a step settled, a run started). With a checkpoint interval it is
   * written at most that often — what is skipped is in the next write — unless the unsaved part
   * is large (so an oversized record is still refused at the step that made it). A crash loses at
   * most the interval's progress: those steps run again (at-least-once).
   */
  progress(status?: ExecutionStatus): Promise<void> {
    if (status !== undefined) this.#status = status;
    const interval = this.#init.checkpointIntervalMs ?? 0;
    const limit = this.#init.store.maxRecordBytes ?? 512 * 1024;
    const wait = this.#lastWrite + interval - this.clock.now();
    if (interval > 0 && wait > 0 && this.#unsavedBytes < limit / 4) {
      this.#dirty = true;
      // Trailing write: a long step shows as running (and its predecessors as done) within one interval.
      this.#trailing ??= this.clock.every(wait, () => {
        this.#trailing?.();
        this.#trailing = undefined;
        if (this.#dirty) void this.checkpoint(this.#status).catch(() => undefined);
      });
      return Promise.resolve();
    }
    return this.checkpoint(this.#status);
  }

  /**
   * Restarts the checkpoint interval when nothing is unsaved but the status: time spent waiting
   * to be admitted (a contended key) is not progress, so the run's first checkpoint after it may
   * wait a full interval, like the first one of any resumed job (docs/decisions/043).
   */
  waited(): void {
    if (this.#lastWrite > 0 && !this.#dirty && this.#unsavedBytes === 0) this.#lastWrite = this.clock.now();
  }

  /** Persists the current state; saves are serialized so a later state never loses to an earlier one. */
  checkpoint(
    status: ExecutionStatus = this.#status,
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
    const stopped = this.stopped;
    if (stopped) return Promise.reject(stopped);
    try {
      checkTransition(this.executionId, this.#persisted, status, options.cause ?? 'run');
    } catch (error) {
      return Promise.reject(error);
    }
    this.#persisted = status;
    this.#status = status;
    // The trace travels with every record of a background execution, so the persisted trace is
    // append-only across jobs, workers and recoveries (docs/decisions/098); an inline run hands it
    // to its caller in the result.
    const withTrace = options.withTrace ?? (this.mode === 'worker' || this.background !== undefined);
    const record: ExecutionRecord = {
      v: RECORD_VERSION,
      id: this.executionId,
      rootId: this.rootExecutionId,
      reactor: this.reactor,
      ...this.#stamp,
      status,
      input: this.input,
      steps: { ...this.#steps },
      ...(this.#maps.size === 0 ? {} : { mapStates: this.#mapStates() }),
      rollbackFailures: [...this.rollbackFailures],
      ...(this.#init.idempotencyKey === undefined ? {} : { idempotencyKey: this.#init.idempotencyKey }),
      ...(this.tags === undefined ? {} : { tags: this.tags }),
      ...(this.background === undefined ? {} : { background: this.background }),
      ...(this.traceContext === undefined ? {} : { traceContext: this.traceContext }),
      ...(this.interrupts.length === 0 ? {} : { interrupts: [...this.interrupts] }),
      ...(Object.keys(this.stepArgs).length === 0 ? {} : { stepArgs: this.stepArgs }),
      ...this.#link(),
      ...(this.element === undefined ? {} : { parentId: this.element.parentId, element: this.element }),
      ...(withTrace ? { trace: this.trace.slice() } : {}),
      ...outcome,
      createdAt: this.#createdAt,
      updatedAt: this.clock.now(),
    };
    this.#lastWrite = this.clock.now();
    this.#unsavedBytes = 0;
    this.#dirty = false;
    if (TERMINAL_STATUSES.has(status) || status === 'parked' || status === 'pending' || status === 'paused') {
      this.#trailing?.();
      this.#trailing = undefined;
    }
    const terminalSave = TERMINAL_STATUSES.has(status) ? this.terminalSave : undefined;
    if (terminalSave) this.terminalSave = undefined;
    const job = this.#job;
    const send = (r: ExecutionRecord): Promise<void> =>
      terminalSave ? terminalSave(r) : job ? job.save(r) : this.#init.store.save(r);
    // A record refused for its size with the trace aboard is written again with the trace folded
    // to its smallest bound (the oldest entries summarized): a long trace never fails a step.
    const folded = (r: ExecutionRecord): Promise<void> =>
      send(r).catch((error: unknown) => {
        if (!(error instanceof RecordTooLargeError) || r.trace === undefined || r.trace.length <= MIN_TRACE_ENTRIES)
          throw error;
        const trace = r.trace.slice();
        boundTrace(trace, MIN_TRACE_ENTRIES);
        return send({ ...r, trace });
      });
    // A terminal record still over the size limit is written without what does not fit: the execution
    // still ends (never left running), with the refusal as its error when it failed (decision 071).
    const fitted = (r: ExecutionRecord, cuts: number): Promise<void> =>
      folded(r).catch((error: unknown) => {
        if (!(error instanceof RecordTooLargeError) || cuts >= 2) throw error; // a map's states, then the record
        this.logger.warn({ err: error }, 'terminal record over the size limit: written without what does not fit');
        return fitted(fitRecord(r, error.details), cuts + 1);
      });
    const write = (): Promise<void> => (TERMINAL_STATUSES.has(status) ? fitted(record, 0) : folded(record));
    const save = this.#saving.then(() => (this.stopped ? Promise.reject(this.stopped) : write()));
    this.#saving = save.catch((error: unknown) => {
      if (job && isJobStop(error)) this.stop(error);
    });
    const listener = this.#init.settleListener;
    if (listener && TERMINAL_STATUSES.has(status)) return save.then(() => listener.executionSettled(record));
    return save;
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
}

/** A cheap upper-ish estimate of a value's JSON size (strings and small values exactly, objects by stringifying). */
function approximateBytes(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value !== 'object' || value === null) return 16;
  try {
    return JSON.stringify(value).length;
  } catch {
    return 0;
  }
}

/** Compact error JSON for events (no stack). */
export function errorSummary(error: Error & { code?: unknown }): ErrorJSON {
  const json: { name: string; message: string; code?: string } = { name: error.name, message: error.message };
  if (typeof error.code === 'string') json.code = error.code;
  return json;
}
