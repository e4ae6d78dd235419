/**
 * The embedded Coordinator: the five coordination primitives kept in this process's memory.
 *
 * It is the default backend, not a mock: it has the same semantics as the Redis coordinator and
 * passes the same contract suite. Every deadline is an absolute time on the injected clock and
 * expiry is evaluated lazily on each call, so no timer drives the state and a `ManualClock`
 * controls every TTL, window and poison-pill age. See `ARCHITECTURE.md` (section "Coordinator").
 *
 * @module
 */
import { systemClock, type Clock } from '../../engine/ports/clock.js';
import type {
  Coordinator,
  HolderInfo,
  LockAcquireRequest,
  LockAcquireResult,
  LockReleaseResult,
  LockState,
  OrderedCompleteRequest,
  OrderedEnterRequest,
  OrderedEnterResult,
  OrderedState,
  OrderedTicket,
  PeriodMarkRequest,
  PrimitiveKind,
  RateState,
  RateTakeRequest,
  RateTakeResult,
  SemaphoreAcquireRequest,
  SemaphoreAcquireResult,
  SemaphoreState,
} from '../../engine/ports/coordinator.js';

/** Options of {@link MemoryCoordinator}. */
export interface MemoryCoordinatorOptions {
  /** The clock every TTL, window and age is measured on. Default: the system clock. */
  readonly clock?: Clock;
}

interface LockHold {
  readonly holder: HolderInfo;
  readonly token: string;
  nesting: number;
  expiresAt: number;
}

interface LockEntry {
  /** The last fencing token handed out for this key (µs scale). Outlives the hold. */
  lastToken: number;
  hold: LockHold | undefined;
}

interface Lease {
  readonly holder: HolderInfo;
  nesting: number;
  expiresAt: number;
}

interface SemaphoreEntry {
  /** The limit of the latest acquire, reported by `semaphoreState` when none is given. */
  limit: number;
  readonly leases: Map<string, Lease>;
}

interface RateStart {
  readonly id: string;
  readonly at: number;
}

interface RateLog {
  /** The longest period this key was used with: starts older than it are dead for any reader. */
  periodMs: number;
  readonly starts: RateStart[];
}

interface OrderedEntry {
  /** 0 until the first ticket; then moves to max(epoch + 1, now) on every drain or reset. */
  epoch: number;
  issued: number;
  lastCompleted: number;
  inFlight: number | undefined;
  heartbeatAt: number;
  /** When the cursor last really advanced (or the batch started). */
  advancedAt: number;
  firstFailed: number | undefined;
  /** Latest sign of life of a position not in flight: its ticket, then each of its waits. */
  readonly seen: Map<number, number>;
  /** Positions completed out of turn, passed over when the head reaches them. */
  readonly done: Set<number>;
}

/** How long a free key's last fencing token is remembered (it only matters while ≥ now in µs). */
const TOKEN_MEMORY_MS = 24 * 60 * 60 * 1000;
/** Dead heads the poison pill passes over in one call at most. */
const MAX_POISON_PASSES = 64;
/** Dead entries (expired holds, empty logs, old markers) are swept after this many calls. */
const SWEEP_EVERY = 1024;

/**
 * The in-memory {@link Coordinator}.
 *
 * @example
 * ```ts
 * const clock = new ManualClock({ autoAdvance: false });
 * const coordinator = new MemoryCoordinator({ clock });
 * await coordinator.lockAcquire({ key: 'acct:1', holder: { owner: 'run-1' }, ttlMs: 30_000 });
 * clock.advance(30_000); // the hold has expired: the next caller gets the key
 * ```
 */
export class MemoryCoordinator implements Coordinator {
  readonly #clock: Clock;
  readonly #locks = new Map<string, LockEntry>();
  readonly #semaphores = new Map<string, SemaphoreEntry>();
  readonly #rates = new Map<string, RateLog>();
  readonly #periods = new Map<string, number>();
  readonly #ordered = new Map<string, OrderedEntry>();
  readonly #listeners = new Map<string, Set<() => void>>();
  #calls = 0;
  #closed = false;

  constructor(options: MemoryCoordinatorOptions = {}) {
    this.#clock = options.clock ?? systemClock;
  }

  async time(): Promise<number> {
    return this.#clock.now();
  }

  // ── Exclusive lock ────────────────────────────────────────────────────────────────────────

  async lockAcquire(request: LockAcquireRequest): Promise<LockAcquireResult> {
    assertInteger('ttlMs', request.ttlMs, 1);
    const now = this.#tick();
    const entry = this.#locks.get(request.key) ?? { lastToken: 0, hold: undefined };
    this.#locks.set(request.key, entry);
    const hold = liveHold(entry, now);
    if (hold === undefined) {
      const token = Math.max(entry.lastToken + 1, now * 1000);
      entry.lastToken = token;
      entry.hold = { holder: request.holder, token: String(token), nesting: 1, expiresAt: now + request.ttlMs };
      return { acquired: true, token: String(token), nesting: 1 };
    }
    if (hold.holder.owner === request.holder.owner) {
      hold.nesting += 1;
      hold.expiresAt = Math.max(hold.expiresAt, now + request.ttlMs);
      return { acquired: true, token: hold.token, nesting: hold.nesting };
    }
    return { acquired: false, holder: hold.holder, ttlMs: hold.expiresAt - now };
  }

  async lockRelease(key: string, owner: string): Promise<LockReleaseResult> {
    const now = this.#tick();
    const entry = this.#locks.get(key);
    const hold = entry === undefined ? undefined : liveHold(entry, now);
    if (entry === undefined || hold === undefined || hold.holder.owner !== owner) return { released: false, nesting: 0 };
    hold.nesting -= 1;
    if (hold.nesting > 0) return { released: true, nesting: hold.nesting };
    entry.hold = undefined;
    this.#notify('lock', key);
    return { released: true, nesting: 0 };
  }

  async lockExtend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertInteger('ttlMs', ttlMs, 1);
    const now = this.#tick();
    const entry = this.#locks.get(key);
    const hold = entry === undefined ? undefined : liveHold(entry, now);
    if (hold === undefined || hold.holder.owner !== owner) return false;
    hold.expiresAt = now + ttlMs;
    return true;
  }

  async lockState(key: string): Promise<LockState | undefined> {
    const now = this.#tick();
    const entry = this.#locks.get(key);
    const hold = entry === undefined ? undefined : liveHold(entry, now);
    if (hold === undefined) return undefined;
    return { key, holder: hold.holder, nesting: hold.nesting, token: hold.token, ttlMs: hold.expiresAt - now };
  }

  // ── Semaphore (leases) ────────────────────────────────────────────────────────────────────

  async semaphoreAcquire(request: SemaphoreAcquireRequest): Promise<SemaphoreAcquireResult> {
    assertInteger('ttlMs', request.ttlMs, 1);
    assertInteger('limit', request.limit, 0);
    const now = this.#tick();
    const entry = this.#semaphores.get(request.key) ?? { limit: request.limit, leases: new Map<string, Lease>() };
    this.#semaphores.set(request.key, entry);
    entry.limit = request.limit;
    pruneLeases(entry, now);
    const own = entry.leases.get(request.holder.owner);
    if (own !== undefined) {
      own.nesting += 1;
      own.expiresAt = Math.max(own.expiresAt, now + request.ttlMs);
      return { acquired: true, nesting: own.nesting, holders: entry.leases.size };
    }
    if (entry.leases.size < request.limit) {
      entry.leases.set(request.holder.owner, { holder: request.holder, nesting: 1, expiresAt: now + request.ttlMs });
      return { acquired: true, nesting: 1, holders: entry.leases.size };
    }
    let earliest = Number.POSITIVE_INFINITY;
    for (const lease of entry.leases.values()) earliest = Math.min(earliest, lease.expiresAt);
    // With no lease at all (a limit of 0) no expiry can help: nothing to wait for.
    const retryAfterMs = Number.isFinite(earliest) ? earliest - now : 0;
    return { acquired: false, holders: entry.leases.size, limit: request.limit, retryAfterMs };
  }

  async semaphoreRelease(key: string, owner: string): Promise<{ readonly released: boolean; readonly nesting: number }> {
    const now = this.#tick();
    const entry = this.#semaphores.get(key);
    if (entry === undefined) return { released: false, nesting: 0 };
    pruneLeases(entry, now);
    const lease = entry.leases.get(owner);
    if (lease === undefined) return { released: false, nesting: 0 };
    lease.nesting -= 1;
    if (lease.nesting > 0) return { released: true, nesting: lease.nesting };
    entry.leases.delete(owner);
    this.#notify('semaphore', key);
    return { released: true, nesting: 0 };
  }

  async semaphoreExtend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertInteger('ttlMs', ttlMs, 1);
    const now = this.#tick();
    const entry = this.#semaphores.get(key);
    if (entry === undefined) return false;
    pruneLeases(entry, now);
    const lease = entry.leases.get(owner);
    if (lease === undefined) return false;
    lease.expiresAt = now + ttlMs;
    return true;
  }

  async semaphoreState(key: string, limit?: number): Promise<SemaphoreState> {
    const now = this.#tick();
    const entry = this.#semaphores.get(key);
    if (entry === undefined) return { key, limit: limit ?? 0, holders: [] };
    pruneLeases(entry, now);
    const holders = [...entry.leases.values()].map((lease) => ({ holder: lease.holder, nesting: lease.nesting, ttlMs: lease.expiresAt - now }));
    return { key, limit: limit ?? entry.limit, holders };
  }

  // ── Rate limit ────────────────────────────────────────────────────────────────────────────

  async rateTake(request: RateTakeRequest): Promise<RateTakeResult> {
    for (const window of request.windows) {
      assertInteger('limit', window.limit, 0);
      assertInteger('periodMs', window.periodMs, 1);
    }
    const now = this.#tick();
    const logs = request.windows.map((window) => this.#rateStarts(window.key, window.periodMs, now));
    // A start already charged (a resend of the same id) is admitted without a second charge.
    if (logs.some((starts) => starts.some((start) => start.id === request.id))) return { allowed: true };
    for (const [index, window] of request.windows.entries()) {
      const starts = logs[index] ?? [];
      if (starts.length < window.limit) continue;
      const oldest = starts[0];
      const retryAfterMs = oldest === undefined ? window.periodMs : oldest.at + window.periodMs - now;
      return { allowed: false, window, count: starts.length, retryAfterMs };
    }
    // One log of starts per key; several windows on one key are views of it, so a start is logged once per key.
    const charged = new Set<string>();
    for (const window of request.windows) {
      const log = this.#rates.get(window.key) ?? { periodMs: window.periodMs, starts: [] };
      log.periodMs = Math.max(log.periodMs, window.periodMs);
      if (!charged.has(window.key)) log.starts.push({ id: request.id, at: now });
      charged.add(window.key);
      this.#rates.set(window.key, log);
    }
    return { allowed: true };
  }

  async rateState(key: string, periodMs: number): Promise<RateState> {
    assertInteger('periodMs', periodMs, 1);
    const now = this.#tick();
    const starts = this.#rateStarts(key, periodMs, now);
    const oldest = starts[0];
    return { key, count: starts.length, resetInMs: oldest === undefined ? 0 : oldest.at + periodMs - now };
  }

  /** The starts of `key` inside the window of `periodMs` ending now, oldest first. */
  #rateStarts(key: string, periodMs: number, now: number): readonly RateStart[] {
    const log = this.#rates.get(key);
    if (log === undefined) return [];
    // A start leaves the window `periodMs` after it was taken: at `now`, starts at ≤ now − period are out.
    pruneStarts(log, now);
    const firstLive = log.starts.findIndex((start) => start.at > now - periodMs);
    return firstLive === -1 ? [] : log.starts.slice(firstLive);
  }

  // ── Period ────────────────────────────────────────────────────────────────────────────────

  async periodIsMarked(key: string, bucket: string): Promise<boolean> {
    return this.#marker(key, bucket, this.#tick()) !== undefined;
  }

  async periodMark(request: PeriodMarkRequest): Promise<boolean> {
    assertInteger('ttlMs', request.ttlMs, 1);
    const now = this.#tick();
    if (this.#marker(request.key, request.bucket, now) !== undefined) return false;
    this.#periods.set(periodId(request.key, request.bucket), now + request.ttlMs);
    this.#notify('period', request.key);
    return true;
  }

  async periodState(key: string, bucket: string): Promise<number | undefined> {
    const now = this.#tick();
    const expiresAt = this.#marker(key, bucket, now);
    return expiresAt === undefined ? undefined : expiresAt - now;
  }

  /** The expiry of a live marker, `undefined` when unmarked (an expired marker is dropped). */
  #marker(key: string, bucket: string, now: number): number | undefined {
    const id = periodId(key, bucket);
    const expiresAt = this.#periods.get(id);
    if (expiresAt === undefined) return undefined;
    if (expiresAt > now) return expiresAt;
    this.#periods.delete(id);
    return undefined;
  }

  // ── Ordered lock ──────────────────────────────────────────────────────────────────────────

  async orderedTicket(key: string): Promise<OrderedTicket> {
    const now = this.#tick();
    const entry = this.#orderedEntry(key);
    if (entry.epoch === 0) entry.epoch = now;
    // A fresh batch: its first head counts its age from now.
    if (entry.issued === entry.lastCompleted) entry.advancedAt = now;
    entry.issued += 1;
    entry.seen.set(entry.issued, now);
    return { key, nonce: entry.issued, epoch: entry.epoch };
  }

  async orderedEnter(request: OrderedEnterRequest): Promise<OrderedEnterResult> {
    assertInteger('poisonMs', request.poisonMs, 0);
    const now = this.#tick();
    const entry = this.#orderedEntry(request.key);
    if (request.epoch !== entry.epoch) return { outcome: 'stale', epoch: entry.epoch };
    if (!Number.isInteger(request.nonce) || request.nonce < 1 || request.nonce > entry.issued) {
      throw new RangeError(`ordered lock '${request.key}': position ${request.nonce} was never issued in epoch ${entry.epoch}`);
    }
    let result: OrderedEnterResult | undefined;
    let moved = false;
    for (let pass = 0; pass < MAX_POISON_PASSES && result === undefined; pass++) {
      const head = entry.lastCompleted + 1;
      if (request.nonce <= entry.lastCompleted) result = { outcome: 'passed' };
      else if (request.strict && entry.firstFailed !== undefined && entry.firstFailed < request.nonce) {
        result = { outcome: 'chain_failed', firstFailed: entry.firstFailed };
      } else if (request.nonce === head) result = { outcome: 'entered' };
      else {
        // The poison pill: a head with no sign of life for longer than `poisonMs` is passed over.
        // Its sign of life is its heartbeat in flight, else its latest ticket or wait, or the
        // last real advance of the cursor, whichever is latest.
        const lastSign = entry.inFlight === head ? entry.heartbeatAt : Math.max(entry.advancedAt, entry.seen.get(head) ?? 0);
        if (now - lastSign <= request.poisonMs) result = { outcome: 'wait', head };
        else {
          passHead(entry);
          moved = true;
        }
      }
    }
    result ??= { outcome: 'wait', head: entry.lastCompleted + 1 };
    if (moved) {
      this.#notify('ordered', request.key);
      if (entry.lastCompleted >= entry.issued) {
        startBatch(entry, now);
        return { outcome: 'passed' };
      }
    }
    if (result.outcome === 'entered') {
      entry.inFlight = request.nonce;
      entry.heartbeatAt = now;
    } else if (result.outcome === 'wait') {
      entry.seen.set(request.nonce, now);
    }
    return result;
  }

  async orderedHeartbeat(ticket: OrderedTicket): Promise<boolean> {
    const now = this.#tick();
    const entry = this.#ordered.get(ticket.key);
    if (entry === undefined || entry.epoch !== ticket.epoch || entry.inFlight !== ticket.nonce) return false;
    entry.heartbeatAt = now;
    return true;
  }

  async orderedComplete(request: OrderedCompleteRequest): Promise<OrderedState> {
    const now = this.#tick();
    const entry = this.#orderedEntry(request.key);
    const outstanding = request.epoch === entry.epoch && request.nonce > entry.lastCompleted && request.nonce <= entry.issued;
    if (!outstanding) return orderedView(request.key, entry);
    // The lowest strict failure poisons the chain; one behind the cursor is a replay and ignored.
    if (request.failed && request.strict) entry.firstFailed = Math.min(entry.firstFailed ?? request.nonce, request.nonce);
    // Out of turn (e.g. a chain_failed halt): remembered, and passed over when the head gets here.
    if (request.nonce !== entry.lastCompleted + 1) entry.done.add(request.nonce);
    else this.#advanceHead(request.key, entry, now);
    return orderedView(request.key, entry);
  }

  async orderedState(key: string): Promise<OrderedState> {
    this.#tick();
    return orderedView(key, this.#ordered.get(key) ?? newOrderedEntry());
  }

  async orderedSkip(key: string): Promise<OrderedState> {
    const now = this.#tick();
    const entry = this.#orderedEntry(key);
    if (entry.lastCompleted < entry.issued) this.#advanceHead(key, entry, now);
    return orderedView(key, entry);
  }

  async orderedReset(key: string): Promise<OrderedState> {
    const now = this.#tick();
    const entry = this.#orderedEntry(key);
    startBatch(entry, now);
    this.#notify('ordered', key);
    return orderedView(key, entry);
  }

  #orderedEntry(key: string): OrderedEntry {
    let entry = this.#ordered.get(key);
    if (entry === undefined) {
      entry = newOrderedEntry();
      this.#ordered.set(key, entry);
    }
    return entry;
  }

  /** A real advance past the head (completed or skipped); drains the key when nothing is left. */
  #advanceHead(key: string, entry: OrderedEntry, now: number): void {
    passHead(entry);
    this.#notify('ordered', key);
    if (entry.lastCompleted >= entry.issued) startBatch(entry, now);
    else entry.advancedAt = now;
  }

  // ── Notifications ─────────────────────────────────────────────────────────────────────────

  waitForChange(kind: PrimitiveKind, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#closed || signal?.aborted === true) return Promise.resolve();
    const id = listenerId(kind, key);
    const stop = new AbortController();
    const wake = (): void => stop.abort();
    const listeners = this.#listeners.get(id) ?? new Set<() => void>();
    this.#listeners.set(id, listeners);
    listeners.add(wake);
    signal?.addEventListener('abort', wake, { once: true });
    // The sleep is registered before returning, so a manual clock advanced next resolves it.
    return this.#clock.sleep(Math.max(0, timeoutMs), stop.signal).then(
      () => this.#unlisten(id, wake, signal),
      () => this.#unlisten(id, wake, signal),
    );
  }

  /** Wakes every waiter; later waits resolve at once. The state itself stays readable. */
  async close(): Promise<void> {
    this.#closed = true;
    const listeners = [...this.#listeners.values()].flatMap((set) => [...set]);
    this.#listeners.clear();
    for (const wake of listeners) wake();
  }

  #unlisten(id: string, wake: () => void, signal: AbortSignal | undefined): void {
    signal?.removeEventListener('abort', wake);
    const listeners = this.#listeners.get(id);
    if (listeners === undefined) return;
    listeners.delete(wake);
    if (listeners.size === 0) this.#listeners.delete(id);
  }

  #notify(kind: PrimitiveKind, key: string): void {
    const listeners = this.#listeners.get(listenerId(kind, key));
    if (listeners === undefined) return;
    for (const wake of [...listeners]) wake();
  }

  // ── Housekeeping ──────────────────────────────────────────────────────────────────────────

  /** The current time; every `SWEEP_EVERY` calls, also drops dead entries of every primitive. */
  #tick(): number {
    const now = this.#clock.now();
    this.#calls += 1;
    if (this.#calls % SWEEP_EVERY === 0) this.#sweep(now);
    return now;
  }

  #sweep(now: number): void {
    for (const [key, entry] of this.#locks) {
      if (liveHold(entry, now) === undefined && entry.lastToken < (now - TOKEN_MEMORY_MS) * 1000) this.#locks.delete(key);
    }
    for (const [key, entry] of this.#semaphores) {
      pruneLeases(entry, now);
      if (entry.leases.size === 0) this.#semaphores.delete(key);
    }
    for (const [id, expiresAt] of this.#periods) if (expiresAt <= now) this.#periods.delete(id);
    for (const [key, log] of this.#rates) {
      pruneStarts(log, now);
      if (log.starts.length === 0) this.#rates.delete(key);
    }
  }
}

/** Durations and limits are whole numbers, as on Redis (which refuses anything else). */
function assertInteger(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) throw new RangeError(`${name} must be an integer >= ${min}; got ${String(value)}`);
}

function liveHold(entry: LockEntry, now: number): LockHold | undefined {
  if (entry.hold !== undefined && entry.hold.expiresAt <= now) entry.hold = undefined;
  return entry.hold;
}

/** Drops the starts no window of this key can still see. */
function pruneStarts(log: RateLog, now: number): void {
  const firstLive = log.starts.findIndex((start) => start.at > now - log.periodMs);
  log.starts.splice(0, firstLive === -1 ? log.starts.length : firstLive);
}

function pruneLeases(entry: SemaphoreEntry, now: number): void {
  for (const [owner, lease] of entry.leases) if (lease.expiresAt <= now) entry.leases.delete(owner);
}

function newOrderedEntry(): OrderedEntry {
  return { epoch: 0, issued: 0, lastCompleted: 0, inFlight: undefined, heartbeatAt: 0, advancedAt: 0, firstFailed: undefined, seen: new Map(), done: new Set() };
}

/** Moves the cursor past the head and past every position already done behind it. */
function passHead(entry: OrderedEntry): void {
  entry.lastCompleted += 1;
  entry.seen.delete(entry.lastCompleted);
  while (entry.done.delete(entry.lastCompleted + 1)) {
    entry.lastCompleted += 1;
    entry.seen.delete(entry.lastCompleted);
  }
  if (entry.inFlight !== undefined && entry.inFlight <= entry.lastCompleted) entry.inFlight = undefined;
}

/** A drain or reset: a new epoch (fencing every ticket of the old batch) with zero counters. */
function startBatch(entry: OrderedEntry, now: number): void {
  entry.epoch = Math.max(entry.epoch + 1, now);
  entry.issued = 0;
  entry.lastCompleted = 0;
  entry.inFlight = undefined;
  entry.heartbeatAt = 0;
  entry.advancedAt = now;
  entry.firstFailed = undefined;
  entry.seen.clear();
  entry.done.clear();
}

function orderedView(key: string, entry: OrderedEntry): OrderedState {
  return {
    key,
    epoch: entry.epoch,
    issued: entry.issued,
    lastCompleted: entry.lastCompleted,
    inFlight: entry.inFlight,
    firstFailed: entry.firstFailed,
    drained: entry.lastCompleted >= entry.issued,
  };
}

function periodId(key: string, bucket: string): string {
  return `${key}\u0000${bucket}`;
}

function listenerId(kind: PrimitiveKind, key: string): string {
  return `${kind}\u0000${key}`;
}
