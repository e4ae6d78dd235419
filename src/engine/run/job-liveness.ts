/**
 * The liveness lease of one worker job (docs/decisions/064): while the job holds it, its writes
 * of the execution's record are fenced by it; its local deadline (ttl − drift margin on the
 * monotonic clock, moved by each renewal) stops the job at the lease's end even when the backend
 * cannot say so (a frozen process, a frozen Redis); a renewal refused by the backend stops it too.
 * A stopped job rolls nothing back and writes nothing more.
 *
 * @module
 */
import { driftMarginMs, monotonicNow } from '../../coordination/deadline.js';
import { LeaseLostError, StoreUnavailableError, WorkerShutdownError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Coordinator } from '../../ports/coordinator.js';
import type { JobLeases } from '../../ports/job-lease.js';
import type { ExecutionRecord } from '../../ports/store.js';
import type { JobBinding, RunState } from './run-state.js';
import { isJobStop } from '../model/status-machine.js';

/** What a job's lease needs. */
export interface JobLivenessDeps {
  readonly clock: Clock;
  readonly coordinator: Pick<Coordinator, 'lockExtend'>;
  readonly leases: JobLeases;
}

const REASONS = [
  [LeaseLostError, 'lease_lost'],
  [WorkerShutdownError, 'worker_shutdown'],
  [StoreUnavailableError, 'store_unavailable'],
] as const;

/** The lease a job took with `JobLeases.enterJob`, kept alive until {@link JobLiveness.end}. */
export class JobLiveness {
  /** Aborted with the reason the job stops (or a cancel): every step's `ctx.signal` follows it. */
  readonly root = new AbortController();
  /** Bound to each state of the job's execution (`RunState.bindJob`). */
  readonly binding: JobBinding;
  readonly #deps: JobLivenessDeps;
  readonly #executionId: string;
  readonly #key: string;
  readonly #owner: string;
  readonly #ttlMs: number;
  readonly #renewEveryMs: number;
  /** The lease's end on the monotonic clock (decision 063's rule: sent + ttl − margin). */
  #deadline: number;
  readonly #stopTimer: () => void;
  /** Armed only while the deadline is nearer than the next renewal (a renewal late or refused). */
  #stopDeadlineTimer: (() => void) | undefined;
  #stopped: Error | undefined;
  #ended = false;
  /** When the newest renewal still unanswered was sent (only one sent before the deadline). */
  #pendingSentAt: number | undefined;
  #reporter: RunState | undefined;

  /** `sentAt`: the monotonic time the `enterJob` that took the lease was sent. */
  constructor(
    deps: JobLivenessDeps,
    lease: {
      readonly executionId: string;
      readonly key: string;
      readonly owner: string;
      readonly ttlMs: number;
      readonly sentAt: number;
    },
    onTick?: () => void,
  ) {
    this.#deps = deps;
    this.#executionId = lease.executionId;
    this.#key = lease.key;
    this.#owner = lease.owner;
    this.#ttlMs = lease.ttlMs;
    this.#renewEveryMs = lease.ttlMs / 3;
    this.#deadline = lease.sentAt + lease.ttlMs - driftMarginMs(lease.ttlMs);
    this.#stopTimer = deps.clock.every(this.#renewEveryMs, () => {
      if (this.#stopped || this.#ended) return;
      this.#renew();
      onTick?.();
      // The verdict waits one macrotask: answers already on their way (in virtual time, the renewals
      // of the same `advance`) are read first. A process frozen past its deadline stops here.
      setImmediate(() => {
        if (!this.stopped) this.#watchDeadline();
      });
    });
    this.binding = {
      save: (record: ExecutionRecord) => this.#fenced(() => deps.leases.saveFenced(record, this.#key, this.#owner)),
      stop: (error) => this.stop(error),
      stopped: () => this.stopped,
      attach: (state) => void (this.#reporter ??= state),
    };
  }

  /** Why the job stops, if it does (a lease loss also when only the deadline says so). */
  get stopped(): Error | undefined {
    if (!this.#stopped && !this.#ended && this.#lapsed()) this.stop(new LeaseLostError(this.#executionId, 'expired'));
    if (this.#stopped) return this.#stopped;
    const reason: unknown = this.root.signal.reason;
    return isJobStop(reason) ? reason : undefined;
  }

  /** Stops the job with `error` (the first reason wins), aborting its steps, and reports it once. */
  stop(error: Error): void {
    if (this.#stopped) return;
    this.#stopped = error;
    if (!this.root.signal.aborted) this.root.abort(error);
    const reason = REASONS.find(([type]) => error instanceof type)?.[1] ?? 'lease_lost';
    this.#reporter?.emit({ type: 'run.stopped', reason, message: error.message });
  }

  /** Saves and releases in one call (the terminal write), fenced like every write. */
  saveAndRelease(record: ExecutionRecord): Promise<void> {
    return this.#fenced(() => this.#deps.leases.saveAndRelease(record, this.#key, this.#owner));
  }

  /** Stops renewing and watching (the job ended or released its lease). */
  end(): void {
    this.#ended = true;
    this.#stopTimer();
    this.#stopDeadlineTimer?.();
  }

  /** A write refused because the lease is gone stops the job; a write after the local deadline is never sent. */
  async #fenced(write: () => Promise<void>): Promise<void> {
    const stopped = this.stopped;
    if (stopped) throw stopped;
    try {
      await write();
    } catch (error) {
      if (isJobStop(error)) this.stop(error);
      throw error;
    }
  }

  /**
   * Past the deadline. On a clock without a monotonic reading (a manual clock, whose time moves in
   * jumps with no I/O in between), a renewal sent before the deadline and not answered yet is
   * trusted until its answer is read: a test that advances past several renewals at once does not
   * lose the lease. On a real clock the deadline is strict (a frozen Redis answers nothing).
   */
  #lapsed(): boolean {
    const now = monotonicNow(this.#deps.clock);
    if (now < this.#deadline) return false;
    if (this.#deps.clock.monotonic !== undefined) return true;
    return this.#optimisticDeadline() <= now;
  }

  /** The deadline once the newest renewal still on its way (sent while the lease was valid) succeeds. */
  #optimisticDeadline(): number {
    const pending = this.#pendingSentAt;
    return pending === undefined
      ? this.#deadline
      : Math.max(this.#deadline, pending + this.#ttlMs - driftMarginMs(this.#ttlMs));
  }

  #renew(): void {
    if (this.#stopped) return;
    const sentAt = monotonicNow(this.#deps.clock);
    // Sent while the lease is still valid, counting the renewals still on their way (virtual time: see #lapsed).
    if (sentAt < this.#optimisticDeadline()) this.#pendingSentAt = Math.max(this.#pendingSentAt ?? sentAt, sentAt);
    const settled = (): void => {
      if (this.#pendingSentAt === sentAt) this.#pendingSentAt = undefined;
    };
    void this.#deps.coordinator.lockExtend(this.#key, this.#owner, this.#ttlMs).then(
      (held) => {
        if (held) this.#extended(sentAt);
        settled();
        if (!held) this.stop(new LeaseLostError(this.#executionId, 'taken_over'));
      },
      settled, // unanswered: the deadline decides
    );
  }

  #extended(sentAt: number): void {
    if (this.#stopped || this.#ended) return;
    this.#deadline = Math.max(this.#deadline, sentAt + this.#ttlMs - driftMarginMs(this.#ttlMs));
  }

  /**
   * A healthy lease is renewed long before its deadline, so no timer watches it; once the
   * deadline is nearer than the next renewal, a timer stops the job at that instant unless a
   * renewal moves it first. (One timer less per job on the hot path.)
   */
  #watchDeadline(): void {
    if (this.#stopDeadlineTimer || this.#ended) return;
    const left = this.#deadline - monotonicNow(this.#deps.clock);
    if (left > this.#renewEveryMs) return;
    const stop = this.#deps.clock.every(Math.max(1, Math.ceil(left)), () => {
      stop();
      this.#stopDeadlineTimer = undefined;
      if (!this.stopped) this.#watchDeadline(); // renewed meanwhile: watch the new deadline if it is near
    });
    this.#stopDeadlineTimer = stop;
  }
}
