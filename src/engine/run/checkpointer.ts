/**
 * The checkpointer of one execution in this process: the status it last wrote (every write
 * checked by the state machine), intermediate progress at most once per checkpoint interval
 * with a trailing write, saves serialized so a later state never loses to an earlier one, and
 * a record refused for its size written again with its trace folded (and, when terminal,
 * without what does not fit). Its only writer is the {@link RunState} that owns it.
 *
 * @module
 */
import { RecordTooLargeError } from '../../errors.js';
import { checkTransition, isJobStop, type TransitionCause } from '../model/status-machine.js';
import { boundTrace, MIN_TRACE_ENTRIES } from '../model/trace-bound.js';
import type { Clock } from '../../ports/clock.js';
import { TERMINAL_STATUSES, type ExecutionRecord, type ExecutionStatus } from '../../ports/store.js';
import type { Logger } from '../../dsl/context.js';
import { fitRecord } from './fit-record.js';

/** What a checkpointer writes through and reads from its run state. */
export interface CheckpointerInit {
  readonly executionId: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Intermediate checkpoints are written at most this often (0: after every step). */
  readonly intervalMs: number;
  /** The store's record size limit (bytes): a quarter of it unsaved is written at once. */
  readonly maxRecordBytes: () => number;
  /** The status of the resumed record, if any (then the first progress checkpoint may wait). */
  readonly persisted: ExecutionStatus | undefined;
  /** Why the job must stop without writing, if it must (a lost lease, a shutdown). */
  readonly stopped: () => Error | undefined;
  /** Stops the job (a write failed for good). */
  readonly stop: (error: Error) => void;
  /** Whether writes are fenced by a job (then a job stop from a write stops the job). */
  readonly fenced: () => boolean;
  /**
   * How this checkpoint's record is written (asked once per checkpoint, the same for its retries):
   * the job's fenced save, its last save (`terminal`: once, it also releases the lease), or the store's.
   */
  readonly sender: (terminal: boolean) => (record: ExecutionRecord) => Promise<void>;
  /** Told once a terminal record is saved. */
  readonly settled?: ((record: ExecutionRecord) => void) | undefined;
}

/** The part of a record a checkpoint's caller builds (the checkpointer stamps status and times). */
export type RecordBuilder = (status: ExecutionStatus) => ExecutionRecord;

/** Serialized, state-machine-checked checkpoints of one execution. */
export class Checkpointer {
  readonly #init: CheckpointerInit;
  /** The status the store holds for this execution (as far as this process wrote or read it). */
  #persisted: ExecutionStatus | undefined;
  #status: ExecutionStatus = 'running';
  #saving: Promise<void> = Promise.resolve();
  #lastWrite = 0;
  /** A progress write was skipped and is not covered by a later write yet. */
  #dirty = false;
  #trailing: (() => void) | undefined;

  constructor(init: CheckpointerInit) {
    this.#init = init;
    this.#persisted = init.persisted;
    // A resumed execution's record exists already: its first progress checkpoint may wait.
    if (init.persisted !== undefined) this.#lastWrite = init.clock.now();
  }

  /** The status the next checkpoint writes unless told another. */
  get status(): ExecutionStatus {
    return this.#status;
  }

  /** See {@link RunState.progress}; `unsavedBytes`: what the step book recorded since the last write. */
  progress(status: ExecutionStatus | undefined, unsavedBytes: number, write: () => Promise<void>): Promise<void> {
    if (status !== undefined) this.#status = status;
    const interval = this.#init.intervalMs;
    const wait = this.#lastWrite + interval - this.#init.clock.now();
    if (interval > 0 && wait > 0 && unsavedBytes < this.#init.maxRecordBytes() / 4) {
      this.#dirty = true;
      // Trailing write: a long step shows as running (and its predecessors as done) within one interval.
      this.#trailing ??= this.#init.clock.every(wait, () => {
        this.#trailing?.();
        this.#trailing = undefined;
        if (this.#dirty) void write().catch(() => undefined);
      });
      return Promise.resolve();
    }
    return write();
  }

  /** See {@link RunState.progressToEnd}: no write unless the unsaved part is large. */
  toEnd(unsavedBytes: number, write: () => Promise<void>): Promise<void> {
    if (unsavedBytes >= this.#init.maxRecordBytes() / 4) return write();
    this.#dirty = true;
    return Promise.resolve();
  }

  /** See {@link RunState.waited}. */
  waited(unsavedBytes: number): void {
    if (this.#lastWrite > 0 && !this.#dirty && unsavedBytes === 0) this.#lastWrite = this.#init.clock.now();
  }

  /**
   * Checks `status` against the state machine for `cause`, builds the record and writes it after
   * every earlier write. Rejects (writing nothing) when the job is stopped or the transition is
   * refused.
   */
  checkpoint(status: ExecutionStatus, cause: TransitionCause, build: RecordBuilder): Promise<void> {
    const stopped = this.#init.stopped();
    if (stopped) return Promise.reject(stopped);
    try {
      checkTransition(this.#init.executionId, this.#persisted, status, cause);
    } catch (error) {
      return Promise.reject(error);
    }
    this.#persisted = status;
    this.#status = status;
    const record = build(status);
    this.#lastWrite = this.#init.clock.now();
    this.#dirty = false;
    const terminal = TERMINAL_STATUSES.has(status);
    if (terminal || status === 'parked' || status === 'pending' || status === 'paused') {
      this.#trailing?.();
      this.#trailing = undefined;
    }
    const send = this.#init.sender(terminal);
    const fenced = this.#init.fenced();
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
        this.#init.logger.warn(
          { err: error },
          'terminal record over the size limit: written without what does not fit',
        );
        return fitted(fitRecord(r, error.details), cuts + 1);
      });
    const write = (): Promise<void> => (terminal ? fitted(record, 0) : folded(record));
    const save = this.#saving.then(() => {
      const stop = this.#init.stopped();
      return stop ? Promise.reject(stop) : write();
    });
    this.#saving = save.catch((error: unknown) => {
      if (fenced && isJobStop(error)) this.#init.stop(error);
    });
    const settled = this.#init.settled;
    if (settled && terminal) return save.then(() => settled(record));
    return save;
  }
}
