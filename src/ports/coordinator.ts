/**
 * The Coordinator port, in two parts.
 *
 * - {@link Coordinator}: the atomic transitions of the five coordination primitives (lock,
 *   semaphore, rate limit, period, ordered lock), which every backend MUST implement. Each is
 *   safe to call twice with the same arguments ("retry-safe").
 * - {@link CoordinatorFastPaths}: what a backend MAY offer on top, in
 *   {@link Coordinator.fastPaths}: key-change notifications ({@link KeyChanges}), watches started
 *   before a try that can receive a lock handed over ({@link KeyWatches}), keys the backend frees
 *   on its own ({@link FreedKeys}), cancel announcements ({@link CancelAnnouncements}) and the
 *   health of its notifications ({@link WakeUpHealth}). Each part is all or nothing. A backend
 *   without one still works; the engine falls back to polling the required transitions, as each
 *   part's documentation states. Correctness never depends on a fast path, only latency.
 *
 * Policy (acquisition order, waiting, auto-extend, events) lives in `src/coordination/`, and
 * `coordination/fast-paths.ts` is the one place that reads the fast paths and applies the
 * fallbacks. Implementations: `storage/memory` (injected clock; offers {@link KeyChanges} and
 * {@link CancelAnnouncements}, in process) and `storage/redis` (one Lua script per transition,
 * server `TIME`; offers every part). Both pass the same contract suite.
 *
 * Time: each implementation uses its own clock (the injected clock in memory, Redis `TIME` on
 * Redis); callers never pass "now".
 *
 * @module
 */

/** Who holds: the owner (the root execution id) and where in it (for views and events). */
export interface HolderInfo {
  /** Root execution id: holds are re-entrant per owner. */
  readonly owner: string;
  /** The execution that took it (differs from `owner` in nested work). */
  readonly executionId?: string;
  /** The reactor that declared it. */
  readonly reactor?: string;
  /** The step that declared it; absent for a reactor-level hold. */
  readonly step?: string;
}

// ── Exclusive lock ──────────────────────────────────────────────────────────────────────────

export interface LockAcquireRequest {
  readonly key: string;
  readonly holder: HolderInfo;
  readonly ttlMs: number;
  /**
   * The caller waits for the key if it is refused (with a {@link KeyWatches.watch} that offers):
   * a backend may then queue this process to be granted the key by a release in another process
   * (docs/decisions/059). Absent: a refusal queues nothing unless this process already has a
   * waiter offering on the key.
   */
  readonly waits?: boolean;
  /**
   * The holder never uses the fencing token (an inline run's liveness lease,
   * docs/decisions/066): a backend may then keep no fence state for the key, so nothing of the
   * lock outlives its lease. The token returned still increases with the backend's time.
   */
  readonly unfenced?: boolean;
}
export type LockAcquireResult =
  | {
      readonly acquired: true;
      /** Fencing token of this acquisition: strictly increasing per key, also across a Redis restart without persistence. A re-entrant acquisition returns the outer token. */
      readonly token: string;
      /** Nesting depth after this acquisition (1 = outermost). */
      readonly nesting: number;
    }
  | { readonly acquired: false; readonly holder: HolderInfo | undefined; readonly ttlMs: number };

export interface LockReleaseResult {
  /** False when `owner` did not hold the key (it had expired or was taken over). */
  readonly released: boolean;
  /** Nesting depth left; 0 means the key is now free. */
  readonly nesting: number;
  /** True when the key went straight to a waiter of this process instead of being freed (docs/decisions/037). */
  readonly handedOver?: boolean;
}

/** A lock handed straight to a waiting owner at release (docs/decisions/037): it holds the key at nesting 1. */
export interface LockGrant {
  readonly acquired: true;
  /** The receiver's own fencing token (strictly greater than the releaser's). */
  readonly token: string;
  readonly nesting: 1;
  /**
   * Set when the releaser handed the key over in memory, before Redis recorded it
   * (docs/decisions/043): resolves true once the backend holds the key for the receiver, false
   * when it never did (the releaser had lost the key) — the receiver then treats its hold as lost.
   */
  readonly confirmed?: Promise<boolean>;
  /**
   * How long, from when the receiver gets this grant, the lease it holds the key on surely lasts
   * in the backend (ms): the lease the hand-over set, or with `confirmed` the releaser's lease
   * until the hand-over is recorded. The receiver's local deadline starts from it
   * (docs/decisions/063); absent, it counts from when it offered to take the key.
   */
  readonly leaseLeftMs?: number;
}

export interface LockState {
  readonly key: string;
  readonly holder: HolderInfo;
  readonly nesting: number;
  readonly token: string;
  readonly ttlMs: number;
}

// ── Semaphore (leases) ──────────────────────────────────────────────────────────────────────

export interface SemaphoreAcquireRequest {
  readonly key: string;
  readonly holder: HolderInfo;
  readonly limit: number;
  /** Lease length of this holder's slot. */
  readonly ttlMs: number;
}
export type SemaphoreAcquireResult =
  | { readonly acquired: true; readonly nesting: number; readonly holders: number }
  | {
      readonly acquired: false;
      readonly holders: number;
      readonly limit: number;
      /** ms until the earliest lease expires */ readonly retryAfterMs: number;
    };

export interface SemaphoreState {
  readonly key: string;
  readonly limit: number;
  readonly holders: readonly { readonly holder: HolderInfo; readonly nesting: number; readonly ttlMs: number }[];
}

// ── Rate limit ──────────────────────────────────────────────────────────────────────────────

export interface RateWindow {
  /** Fully built key of this window (a named limit shares it across reactors). */
  readonly key: string;
  readonly limit: number;
  readonly periodMs: number;
}
export interface RateTakeRequest {
  readonly windows: readonly RateWindow[];
  /** Unique id of this start: taking twice with the same id charges once. */
  readonly id: string;
}
/** A start to take back from the windows it was charged to (see {@link Coordinator.rateRefund}). */
export interface RateRefundRequest {
  readonly windows: readonly Pick<RateWindow, 'key' | 'periodMs'>[];
  readonly id: string;
}
export type RateTakeResult =
  | {
      readonly allowed: true;
      /**
       * `false` when the id was charged already (a resend, or the same start admitted again):
       * nothing was charged by this call, and a refund would take back the earlier charge.
       */
      readonly charged?: boolean;
    }
  | { readonly allowed: false; readonly window: RateWindow; readonly count: number; readonly retryAfterMs: number };

export interface RateState {
  readonly key: string;
  readonly count: number;
  /** ms until the oldest start leaves the window (0 when empty). */
  readonly resetInMs: number;
}

// ── Period ──────────────────────────────────────────────────────────────────────────────────

export interface PeriodMarkRequest {
  readonly key: string;
  /** Bucket id, e.g. `2026-11-30` or `d:20422`. */
  readonly bucket: string;
  /** How long the marker lives (until the bucket ends, plus margin). */
  readonly ttlMs: number;
  /**
   * A short text kept with the marker, read back by {@link Coordinator.periodNote} (a cancel
   * request's reason). The first mark's note stays: a later mark of the bucket changes nothing.
   */
  readonly note?: string;
}

// ── Ordered lock ────────────────────────────────────────────────────────────────────────────

export interface OrderedTicket {
  readonly key: string;
  readonly nonce: number;
  readonly epoch: number;
}
export interface OrderedEnterRequest extends OrderedTicket {
  /** A blocker whose turn has shown no sign of life for this long is passed over. */
  readonly poisonMs: number;
  readonly strict: boolean;
  readonly holder: HolderInfo;
}
export type OrderedEnterResult =
  | { readonly outcome: 'entered' }
  /**
   * Not this position's turn yet. `poisonedInMs`: how long until the head would be passed over if
   * it shows no sign of life meanwhile — when a waiter should try again at the latest.
   */
  | { readonly outcome: 'wait'; readonly head: number; readonly poisonedInMs?: number }
  /** An earlier position failed in strict mode: this position must halt (and still complete). */
  | { readonly outcome: 'chain_failed'; readonly firstFailed: number }
  /** The epoch moved on (drain or reset): this ticket belongs to an old batch. */
  | { readonly outcome: 'stale'; readonly epoch: number }
  /** This position was already completed or skipped. */
  | { readonly outcome: 'passed' };

export interface OrderedCompleteRequest extends OrderedTicket {
  readonly failed: boolean;
  readonly strict: boolean;
}

export interface OrderedState {
  readonly key: string;
  readonly epoch: number;
  /** The last nonce handed out (0 when none). */
  readonly issued: number;
  readonly lastCompleted: number;
  readonly inFlight: number | undefined;
  readonly firstFailed: number | undefined;
  readonly drained: boolean;
}

/** A primitive's kind, used by notifications and views. */
export type PrimitiveKind = 'lock' | 'semaphore' | 'rate' | 'period' | 'ordered';

/**
 * Interest in the changes of one key, registered before the caller's next try (see
 * {@link KeyWatches.watch}): a change that lands while the try is in flight is not missed.
 */
export interface ChangeWatch {
  /**
   * Resolves at once when a change arrived since the watch began, else on the next change or after
   * `timeoutMs`. Never rejects. With an `offer` (a lock), it may resolve with a {@link LockGrant}:
   * the key was handed to the offering owner while it waited, and the caller now holds it.
   */
  wait(timeoutMs: number): Promise<LockGrant | undefined>;
  /** Stops watching (idempotent). */
  close(): void;
}

/** The atomic transitions every backend must implement. */
export interface Coordinator {
  /**
   * True when the coordinator's state lives in this process only (the memory backend): no other
   * process can see its holds, so the engine skips what only serves other processes — an inline
   * run's liveness lease, which a recovery sweep elsewhere would read (docs/decisions/066).
   * Absent: shared.
   */
  readonly processLocal?: boolean;

  /** The backend's clock (Redis: server `TIME`), in ms. */
  time(): Promise<number>;

  lockAcquire(request: LockAcquireRequest): Promise<LockAcquireResult>;
  /** Owner-checked: decrements the nesting; frees the key (and notifies) at zero. */
  lockRelease(key: string, owner: string): Promise<LockReleaseResult>;
  /** Owner-checked TTL refresh; false when the owner no longer holds the key. */
  lockExtend(key: string, owner: string, ttlMs: number): Promise<boolean>;
  lockState(key: string): Promise<LockState | undefined>;

  semaphoreAcquire(request: SemaphoreAcquireRequest): Promise<SemaphoreAcquireResult>;
  /** Decrements the holder's nesting; frees its slot at zero. Never frees another holder's slot. */
  semaphoreRelease(key: string, owner: string): Promise<{ readonly released: boolean; readonly nesting: number }>;
  semaphoreExtend(key: string, owner: string, ttlMs: number): Promise<boolean>;
  semaphoreState(key: string, limit?: number): Promise<SemaphoreState>;

  /** Checks every window and charges all of them, or none. */
  rateTake(request: RateTakeRequest): Promise<RateTakeResult>;
  rateState(key: string, periodMs: number): Promise<RateState>;
  /**
   * Takes the start `id` back out of every window (a charge of an admission that a later rate
   * limit refused: several limits are all charged or none); nothing for an id not charged.
   */
  rateRefund(request: RateRefundRequest): Promise<void>;

  periodIsMarked(key: string, bucket: string): Promise<boolean>;
  /** Marks the bucket; false when it was already marked. */
  periodMark(request: PeriodMarkRequest): Promise<boolean>;
  /** Remaining TTL of a marker in ms, `undefined` when unmarked. */
  periodState(key: string, bucket: string): Promise<number | undefined>;
  /**
   * The note the marker was set with (`PeriodMarkRequest.note`); `undefined` when unmarked or
   * set without one. Optional: without it a cancel request's reason is not read back (the
   * generic reason is used).
   */
  periodNote?(key: string, bucket: string): Promise<string | undefined>;

  /** Hands out the next position of the key's current epoch. */
  orderedTicket(key: string): Promise<OrderedTicket>;
  orderedEnter(request: OrderedEnterRequest): Promise<OrderedEnterResult>;
  /** Liveness of the position in flight; false when it is no longer the one in flight. */
  orderedHeartbeat(ticket: OrderedTicket): Promise<boolean>;
  /** Advances past `nonce` if it is the head (idempotent); drains the key when nothing is left. */
  orderedComplete(request: OrderedCompleteRequest): Promise<OrderedState>;
  orderedState(key: string): Promise<OrderedState>;
  /** Operator action: pass over the head position. */
  orderedSkip(key: string): Promise<OrderedState>;
  /** Operator action: a new epoch with fresh counters; outstanding tickets become stale. */
  orderedReset(key: string): Promise<OrderedState>;

  /**
   * What this backend offers beyond the required transitions (see {@link CoordinatorFastPaths}).
   * Absent: nothing; the engine polls.
   */
  readonly fastPaths?: CoordinatorFastPaths;

  /** Closes connections and timers. */
  close(): Promise<void>;
}

// ── Fast paths: what a backend may offer ────────────────────────────────────────────────────

/**
 * The optional parts of a coordinator, each all or nothing. Every part only makes something
 * faster: without it the engine reaches the same outcome by polling the required transitions
 * (each part's documentation says how). Read only through `coordination/fast-paths.ts`.
 */
export interface CoordinatorFastPaths {
  readonly changes?: KeyChanges;
  readonly watches?: KeyWatches;
  readonly freed?: FreedKeys;
  readonly cancels?: CancelAnnouncements;
  readonly health?: WakeUpHealth;
}

/**
 * Key-change notification: a waiter sleeps until a key it was refused changes. Without it, a
 * waiter sleeps on the engine's clock between tries: 25 ms doubling to 1 s (shortened by a
 * refusal's retry hint) in a coordination wait, the lease's TTL in a worker's wait for a job's
 * liveness lease. A parked execution still wakes on a release in its own process (the wait list)
 * or by its fallback job.
 */
export interface KeyChanges {
  /**
   * Resolves when `key` of `kind` is released (or its state changes in a way that may let a
   * waiter in), or after `timeoutMs`, or when `signal` aborts — whichever is first. Never rejects.
   */
  waitForChange(kind: PrimitiveKind, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Watches that start before a try, with lock hand-over. A backend whose notifications travel
 * over the network offers it, so a release between a refused try and the wait is not lost
 * (docs/decisions/030). A watch with an `offer` may be handed the lock at a release in this
 * process (docs/decisions/037, 043) or granted it by a release in another process
 * (docs/decisions/059). Without it, waiters use {@link KeyChanges.waitForChange} (or poll) and
 * every waiter tries again after a release: no key is handed over.
 */
export interface KeyWatches {
  /** Starts watching `key` of `kind` now, for a wait that begins later. */
  watch(kind: PrimitiveKind, key: string, offer?: LockAcquireRequest): ChangeWatch;
}

/**
 * Keys the backend freed on its own rather than through a caller's release: a key granted to
 * this process that no waiter here could take any more (docs/decisions/059). A backend that
 * grants nothing across processes frees nothing on its own and needs no such part; without it,
 * such a key's parked waiters wake by their fallback job.
 */
export interface FreedKeys {
  /** Calls `listener` for each such key, so the engine wakes parked executions as after a release. Returns the unsubscribe function. */
  onFreed(listener: (kind: 'lock', key: string) => void): () => void;
}

/**
 * Cancel announcements between processes. A fast path only: the cancel marker an operator writes
 * stays the source of truth. Without it, a process running the execution reads the marker when a
 * worker takes a job and at every liveness tick.
 */
export interface CancelAnnouncements {
  /** Tells every process listening with {@link onCancelAnnounced} that `executionId` was asked to cancel. */
  announceCancel(executionId: string): Promise<void>;
  /**
   * Calls `listener` with every execution id a cancel is announced for (any process), until the
   * returned function is called. `onListening` is called once the announcements reach this
   * process: one made before that may have been missed, so the caller re-reads the cancel
   * markers of what it runs (docs/decisions/058).
   */
  onCancelAnnounced(listener: (executionId: string) => void, onListening?: () => void): () => void;
}

/**
 * The health of the backend's notifications (docs/decisions/112). Without it they are never
 * degraded: parked executions keep the configured fallback delay.
 */
export interface WakeUpHealth {
  /**
   * Whether this process's release notifications are degraded: a subscription has gone
   * unconfirmed for longer than its bound, so releases elsewhere may pass this process by.
   * Parked executions then fall back to a shorter poll.
   */
  wakeUpsDegraded(): boolean;
  /**
   * Tells `listener` each time the release notifications become degraded (`degraded` true, with
   * why in `detail`) and when they recover. Returns the unsubscribe function.
   */
  onWakeUpsDegraded(listener: (degraded: boolean, detail: string | undefined) => void): () => void;
}
