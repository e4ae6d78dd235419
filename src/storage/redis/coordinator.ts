/**
 * The Redis Coordinator: each transition is one Lua script (see `lua/`), reading time from the
 * server's `TIME`. Wake-ups travel over pub/sub on a dedicated, lazily created subscriber
 * connection; they are only hints — every waiter also has a timeout.
 *
 * @module
 */
import { layoutOf, type RedisConnection } from './connection.js';
import type {
  CancelAnnouncements,
  ChangeWatch,
  Coordinator,
  CoordinatorFastPaths,
  FreedKeys,
  HolderInfo,
  KeyChanges,
  KeyWatches,
  LockAcquireRequest,
  LockAcquireResult,
  LockGrant,
  LockReleaseResult,
  LockState,
  OrderedCompleteRequest,
  OrderedEnterRequest,
  OrderedEnterResult,
  OrderedState,
  OrderedTicket,
  PeriodMarkRequest,
  PrimitiveKind,
  RateRefundRequest,
  RateState,
  RateTakeRequest,
  RateTakeResult,
  SemaphoreAcquireRequest,
  SemaphoreAcquireResult,
  SemaphoreState,
  WakeUpHealth,
} from '../../ports/coordinator.js';
import type { CoordinationInspector, InspectedKey, InspectOptions } from '../../ports/inspector.js';
import { CancelChannel } from './cancel-channel.js';
import { CLAIM_TTL_MS, GRANT_PLACEHOLDER, GrantBook, REGISTRATION_WINDOW_MS } from './grants.js';
import { HandOffs, type HandOffCandidate } from './handoff.js';
import { HeldLocks, monotonic } from './held-locks.js';
import { inspectRedis } from './inspect.js';
import { RedisKeys } from './keys.js';
import { runCommand, runScript, settleAfterOutage, type ScriptArg, type ScriptDescriptor } from './script.js';
import {
  scripts,
  type LockAcquireReply,
  type LockReleaseReply,
  type LockTransferReply,
  type OrderedCounters,
  type StoredHolder,
} from './scripts.js';
import { WakeChannels } from './wake-channels.js';
import type { ChannelSubscriberOptions } from './channel-subscriber.js';
import { combinedHealth, type SubscriptionHealth } from './subscription-health.js';

/** Options of {@link RedisCoordinator}. */
export interface RedisCoordinatorOptions {
  /** The command connection. The coordinator never closes it unless `closeConnection` is set. */
  readonly redis: RedisConnection;
  /** Key prefix (default `rx`); ignored when `keys` is given. */
  readonly prefix?: string;
  /** A shared key builder. */
  readonly keys?: RedisKeys;
  /** Quit `redis` on {@link RedisCoordinator.close} (default false). */
  readonly closeConnection?: boolean;
  /**
   * Hand a released lock straight to a waiter of this process (docs/decisions/037, 060), and queue
   * this process for grants of locks released by other processes (docs/decisions/059). Default
   * true; `false` frees the key at every release and takes no grants.
   */
  readonly lockHandOff?: boolean;
  /**
   * The monotonic clock (ms) that bounds a run of in-process hand-overs in time (100 ms,
   * docs/decisions/060); default `performance.now`. For tests that must not depend on the
   * machine's speed.
   */
  readonly handOffClock?: () => number;
  /**
   * How long a subscription may stay unconfirmed before the wake-ups count as degraded and the
   * subscriber connection is replaced by a fresh one (default 1,000 ms, docs/decisions/112). For tests.
   */
  readonly subscriptions?: ChannelSubscriberOptions;
}

/** {@link Coordinator} over Redis ≥ 7 (ioredis). */
export class RedisCoordinator
  implements Coordinator, KeyChanges, KeyWatches, FreedKeys, CancelAnnouncements, WakeUpHealth, CoordinationInspector
{
  /** Every fast path: pub/sub change notifications, watches with hand-over and grants, freed keys, cancel announcements, their health. */
  readonly fastPaths: CoordinatorFastPaths = { changes: this, watches: this, freed: this, cancels: this, health: this };
  /** The command connection. */
  readonly redis: RedisConnection;
  /** The key builder. */
  readonly keys: RedisKeys;
  readonly #closeConnection: boolean;
  readonly #lockHandOff: boolean;
  /** The wake-up channels and their subscriber connection. */
  readonly #channels: WakeChannels;
  /** The lock key of each lock channel listened on: at its subscription's confirmation, only a free key (or a grant) is news. */
  readonly #lockChannelKeys = new Map<string, string>();
  /** Waiters of this process offering to take a lock at its release (docs/decisions/037). */
  readonly #handOffs: HandOffs;
  /** What this process knows of the locks its owners hold, for in-memory hand-overs (docs/decisions/043). */
  readonly #held = new HeldLocks();
  /** Grants from other processes (docs/decisions/059). */
  readonly #grants: GrantBook;
  /** Cancel announcements (docs/decisions/053). */
  readonly #cancels: CancelChannel;
  /** Listeners of {@link RedisCoordinator.onFreed}. */
  readonly #freed = new Set<(kind: 'lock', key: string) => void>();
  /** Listeners of {@link RedisCoordinator.onWakeUpsDegraded}. */
  readonly #degradedListeners = new Set<(degraded: boolean, detail: string | undefined) => void>();
  /** Whether the wake-ups were degraded when last told. */
  #degraded = false;
  #closed = false;

  constructor(options: RedisCoordinatorOptions) {
    this.redis = options.redis;
    this.keys = options.keys ?? new RedisKeys(options.prefix, layoutOf(options.redis));
    this.#closeConnection = options.closeConnection ?? false;
    this.#lockHandOff = options.lockHandOff ?? true;
    this.#handOffs = new HandOffs(options.handOffClock);
    this.#grants = new GrantBook(this.#lockHandOff);
    const onDegraded = (): void => this.#degradedChanged();
    this.#cancels = new CancelChannel(this.redis, this.keys.cancelChannel(), onDegraded, options.subscriptions);
    this.#channels = new WakeChannels(
      this.redis,
      {
        onMessage: (channel, message) => {
          if (!message.startsWith('g ')) return false;
          this.#onGrant(channel, message); // a grant names one process; the others' waiters sleep on (the key is not free)
          return true;
        },
        onConfirmed: (channel, wakeWatches) => this.#confirmed(channel, wakeWatches),
        onUnlisten: (channel) => {
          const key = this.#lockChannelKeys.get(channel);
          if (key !== undefined) this.#grants.drop(key);
          this.#lockChannelKeys.delete(channel);
        },
        onDegraded,
      },
      options.subscriptions,
    );
  }

  async time(): Promise<number> {
    const [seconds, micros] = await runCommand('time', () => this.redis.time(), this.redis);
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  // ── Lock ──

  async lockAcquire(request: LockAcquireRequest): Promise<LockAcquireResult> {
    assertPositiveInteger('ttlMs', request.ttlMs);
    const { holder, key } = request;
    const pending = this.#held.pending(key, holder.owner);
    if (pending !== undefined) await pending;
    const end = this.#held.begin(key, holder.owner);
    const sentAt = monotonic();
    // A refused caller that waits here queues this process for a grant by another process's release (decision 059).
    const registration = request.waits === true || this.#grants.offering(key) ? this.#grants.register(key, sentAt) : '';
    const args = [
      holder.owner,
      request.ttlMs,
      holder.executionId ?? '',
      holder.reactor ?? '',
      holder.step ?? '',
      this.#grants.pid,
      registration,
      REGISTRATION_WINDOW_MS,
      request.unfenced === true ? '1' : '',
    ];
    const lockKeys = [this.keys.lock(key), this.keys.lockFence(key)];
    let reply: LockAcquireReply;
    try {
      reply = await this.#run(scripts.lockAcquire, lockKeys, args);
    } catch (error) {
      reply = await this.#acquireAfterOutage(error, key, holder.owner, lockKeys, args);
    } finally {
      end();
    }
    if (reply.acquired || !reply.registered) this.#grants.forget(registration);
    else this.#keepListening(key);
    if (reply.acquired) {
      this.#held.acquired(key, holder.owner, reply.token, reply.nesting, request.ttlMs, sentAt);
      return reply;
    }
    return { acquired: false, holder: toHolder(reply.holder), ttlMs: reply.ttlMs };
  }

  async lockRelease(key: string, owner: string): Promise<LockReleaseResult> {
    const pending = this.#held.pending(key, owner);
    if (pending !== undefined) await pending;
    const candidate = this.#closed ? undefined : this.#handOffs.take(key);
    if (candidate === undefined) return this.#release(key, owner);
    const token = this.#held.nextToken(key, owner);
    if (token !== undefined) return this.#handOverNow(key, owner, candidate, token);
    return this.#transfer(key, owner, candidate.request, candidate.settle);
  }

  /**
   * A plain release: frees the key, or grants it to the process queued first for it; with waiters
   * of its own still offering, this process queues up again behind the others (decision 059).
   */
  async #release(key: string, owner: string): Promise<LockReleaseResult> {
    const end = this.#held.begin(key, owner);
    const requeue = this.#grants.offering(key) ? this.#grants.register(key, monotonic()) : '';
    const args = [
      owner,
      this.keys.lockChannel(key),
      this.#grants.pid,
      CLAIM_TTL_MS,
      GRANT_PLACEHOLDER,
      requeue,
      REGISTRATION_WINDOW_MS,
    ];
    const lockKeys = [this.keys.lock(key), this.keys.lockFence(key)];
    let reply: LockReleaseReply;
    try {
      reply = await this.#run(scripts.lockRelease, lockKeys, args);
    } catch (error) {
      reply = await this.#releaseAfterOutage(error, key, owner, lockKeys, args);
    } finally {
      end();
    }
    this.#held.released(key, owner, reply.released, reply.nesting);
    if (reply.requeued === true) this.#keepListening(key);
    else this.#grants.forget(requeue);
    return reply.granted === undefined
      ? { released: reply.released, nesting: reply.nesting }
      : { released: true, nesting: 0, handedOver: true };
  }

  /**
   * A release in another process granted `key` to this process's placeholder (decision 059): it
   * holds the key at nesting 1 until at least its registration's send time + the claim TTL, and
   * hands it on at once — to the oldest waiter here (in memory when that bound allows), or frees it.
   */
  #granted(key: string, registration: string, token: string): void {
    const since = this.#grants.take(key, registration, token);
    if (since === undefined || this.#closed) return; // taken already (seen by its notification and by a read)
    const placeholder = this.#grants.placeholder;
    this.#held.acquired(key, placeholder, token, 1, CLAIM_TTL_MS, since);
    void this.lockRelease(key, placeholder).then(
      (r) => {
        // Nobody here could take it and it is free now: parked executions are woken as after any release.
        if (r.released && r.nesting === 0 && r.handedOver !== true)
          for (const listener of this.#freed) listener('lock', key);
      },
      () => undefined, // a failure leaves the placeholder to its claim TTL
    );
  }

  onFreed(listener: (kind: 'lock', key: string) => void): () => void {
    this.#freed.add(listener);
    return () => this.#freed.delete(listener);
  }

  /** Listens on `key`'s lock channel for as long as a registration may still be answered by a grant. */
  #keepListening(key: string): void {
    if (this.#closed) return;
    const channel = this.keys.lockChannel(key);
    this.#lockChannelKeys.set(channel, key);
    this.#channels.keep(channel, REGISTRATION_WINDOW_MS + CLAIM_TTL_MS);
  }

  /**
   * Hands `key` to a waiter of this process at once, on the releaser's still valid lease, and
   * records it in Redis behind it (docs/decisions/043): the receiver starts without waiting for
   * the round trip; its grant's `confirmed` tells it whether Redis took the hand-over.
   */
  async #handOverNow(
    key: string,
    owner: string,
    candidate: HandOffCandidate,
    token: string,
  ): Promise<LockReleaseResult> {
    const { holder, ttlMs } = candidate.request;
    const sentAt = monotonic(); // no later than the send: a safe start for the receiver's own lease
    const args = [owner, holder.owner, ttlMs, holder.executionId ?? '', holder.reactor ?? '', holder.step ?? '', token];
    // The receiver's path to its step (microtasks) runs first; the script goes out one macrotask later,
    // and before the releaser's own bookkeeping (its terminal record).
    const turn = new Promise<void>((resolve) => setImmediate(resolve));
    const confirmed = turn
      .then(() => this.#runTransfer(key, owner, holder.owner, args))
      .then(
        (reply) => reply.handedOver && reply.token === token,
        () => false,
      );
    const leaseLeftMs = this.#held.leaseLeft(key); // the releaser's lease: the receiver's until Redis confirms (decision 063)
    this.#held.handedOver(key, holder.owner, token, ttlMs, sentAt, confirmed);
    candidate.settle({ acquired: true, token, nesting: 1, confirmed, leaseLeftMs });
    await turn;
    return { released: true, nesting: 0, handedOver: true };
  }

  /** Hands `key` from `owner` to a waiter of this process; a waiter that got nothing retries its acquire. */
  async #transfer(
    key: string,
    owner: string,
    to: LockAcquireRequest,
    settle: (grant: LockGrant | undefined) => void,
  ): Promise<LockReleaseResult> {
    const { holder } = to;
    try {
      const sentAt = monotonic();
      const reply = await this.#runTransfer(key, owner, holder.owner, [
        owner,
        holder.owner,
        to.ttlMs,
        holder.executionId ?? '',
        holder.reactor ?? '',
        holder.step ?? '',
      ]);
      if (reply.handedOver) {
        this.#held.acquired(key, holder.owner, reply.token, 1, to.ttlMs, sentAt);
        settle({
          acquired: true,
          token: reply.token,
          nesting: 1,
          leaseLeftMs: Math.max(0, sentAt + to.ttlMs - monotonic()),
        });
        // The receiver's step starts before the releaser's own bookkeeping (its terminal record).
        await new Promise<void>((resolve) => setImmediate(resolve));
        return { released: true, nesting: 0, handedOver: true };
      }
      this.#held.released(key, owner, reply.released, reply.nesting);
      settle(undefined);
      return { released: reply.released, nesting: reply.nesting };
    } catch (error) {
      settle(undefined);
      throw error;
    }
  }

  async lockExtend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertPositiveInteger('ttlMs', ttlMs);
    const pending = this.#held.pending(key, owner);
    if (pending !== undefined) await pending;
    const end = this.#held.begin(key, owner);
    const sentAt = monotonic();
    const ok = await this.#run(scripts.lockExtend, [this.keys.lock(key)], [owner, ttlMs]).finally(end);
    this.#held.extended(key, owner, ok, ttlMs, sentAt);
    return ok;
  }

  async lockState(key: string): Promise<LockState | undefined> {
    // A hand-over of this process not recorded in Redis yet is read as done (this process reads its own writes).
    const pending = this.#held.pendingAny(key);
    if (pending !== undefined) await pending;
    const reply = await this.#run(scripts.lockState, [this.keys.lock(key)], []);
    if (reply === undefined) return undefined;
    return { key, holder: toHolder(reply.holder), nesting: reply.nesting, token: reply.token, ttlMs: reply.ttlMs };
  }

  // ── Semaphore ──

  async semaphoreAcquire(request: SemaphoreAcquireRequest): Promise<SemaphoreAcquireResult> {
    assertPositiveInteger('ttlMs', request.ttlMs);
    assertInteger('limit', request.limit, 0);
    const keys = this.#semaphoreKeys(request.key);
    const args = [request.holder.owner, request.limit, request.ttlMs, JSON.stringify(request.holder)];
    try {
      return await this.#run(scripts.semaphoreAcquire, keys, args);
    } catch (error) {
      // Lost reply: a lease of this owner means the lost call took it (re-entering the same semaphore twice in one execution is the exception, counted once).
      return settleAfterOutage<SemaphoreAcquireResult>(
        this.redis,
        'semaphore-acquire',
        error,
        async () => {
          const { leases } = await this.#run(scripts.semaphoreState, keys, []);
          const lease = leases.find((l) => l.owner === request.holder.owner);
          return lease === undefined ? undefined : { acquired: true, nesting: lease.nesting, holders: leases.length };
        },
        () => this.#run(scripts.semaphoreAcquire, keys, args),
      );
    }
  }

  async semaphoreRelease(
    key: string,
    owner: string,
  ): Promise<{ readonly released: boolean; readonly nesting: number }> {
    const keys = this.#semaphoreKeys(key);
    const args = [owner, this.keys.semaphoreChannel(key)];
    try {
      return await this.#run(scripts.semaphoreRelease, keys, args);
    } catch (error) {
      // Lost reply: no lease of this owner left means the lost call released it; a lease left, that it did not (a nested one is the exception).
      return settleAfterOutage<{ readonly released: boolean; readonly nesting: number }>(
        this.redis,
        'semaphore-release',
        error,
        async () =>
          (await this.#run(scripts.semaphoreState, keys, [])).leases.some((l) => l.owner === owner)
            ? undefined
            : { released: true, nesting: 0 },
        () => this.#run(scripts.semaphoreRelease, keys, args),
      );
    }
  }

  async semaphoreExtend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertPositiveInteger('ttlMs', ttlMs);
    return this.#run(scripts.semaphoreExtend, this.#semaphoreKeys(key), [owner, ttlMs]);
  }

  async semaphoreState(key: string, limit?: number): Promise<SemaphoreState> {
    const reply = await this.#run(scripts.semaphoreState, this.#semaphoreKeys(key), []);
    return {
      key,
      limit: limit ?? reply.limit ?? 0,
      holders: reply.leases.map((lease) => ({
        holder: parseHolder(lease.holderJson, lease.owner),
        nesting: lease.nesting,
        ttlMs: lease.ttlMs,
      })),
    };
  }

  // ── Rate limit ──

  async rateTake(request: RateTakeRequest): Promise<RateTakeResult> {
    if (request.windows.length === 0) return { allowed: true };
    const args: ScriptArg[] = [request.id];
    for (const window of request.windows) {
      assertInteger('limit', window.limit, 0);
      assertPositiveInteger('periodMs', window.periodMs);
      args.push(window.limit, window.periodMs);
    }
    if (this.keys.layout === 'cluster' && request.windows.some((w) => w.key !== request.windows[0]?.key))
      return this.#rateTakeBySlot(request);
    const keys = request.windows.map((window) => this.keys.rate(window.key, window.periodMs));
    const reply = await this.#run(scripts.rateTake, keys, args);
    if (reply.allowed) return reply;
    const window = request.windows[reply.index];
    if (window === undefined) throw new RangeError(`rate-take refused unknown window ${reply.index}`);
    return { allowed: false, window, count: reply.count, retryAfterMs: reply.retryAfterMs };
  }

  /**
   * A take whose windows have several keys, on a cluster (their logs sit in several slots,
   * docs/decisions/091): one all-or-nothing take per key, in the request's order; a refusal
   * refunds the keys charged before it. Meanwhile those charges count against other requests,
   * which may be refused for them: never one start too many in a window, at worst one too few.
   */
  async #rateTakeBySlot(request: RateTakeRequest): Promise<RateTakeResult> {
    const byKey = new Map<string, RateTakeRequest['windows'][number][]>();
    for (const window of request.windows) byKey.set(window.key, [...(byKey.get(window.key) ?? []), window]);
    const taken: RateTakeRequest['windows'][number][] = [];
    let already = false;
    for (const windows of byKey.values()) {
      const result = await this.rateTake({ ...request, windows });
      if (!result.allowed) {
        if (taken.length > 0) await this.rateRefund({ id: request.id, windows: taken });
        return result;
      }
      // A key the id was charged to already keeps that charge: a refund takes back only what this call charged.
      if (result.charged === false) already = true;
      else taken.push(...windows);
    }
    return already ? { allowed: true, charged: false } : { allowed: true };
  }

  async rateState(key: string, periodMs: number): Promise<RateState> {
    assertPositiveInteger('periodMs', periodMs);
    const reply = await this.#run(scripts.rateState, [this.keys.rate(key, periodMs)], [periodMs]);
    return { key, ...reply };
  }

  async rateRefund(request: RateRefundRequest): Promise<void> {
    // One ZREM per window log: each is atomic on its own, and a refund half done only leaves a charge that would have stayed anyway.
    await Promise.all(
      request.windows.map((window) =>
        runCommand(
          'rate-refund',
          () => this.redis.zrem(this.keys.rate(window.key, window.periodMs), request.id),
          this.redis,
        ),
      ),
    );
  }

  // ── Period ──

  async periodIsMarked(key: string, bucket: string): Promise<boolean> {
    return (
      (await runCommand('period-is-marked', () => this.redis.exists(this.keys.period(key, bucket)), this.redis)) === 1
    );
  }

  async periodMark(request: PeriodMarkRequest): Promise<boolean> {
    assertPositiveInteger('ttlMs', request.ttlMs);
    const note = request.note === undefined ? [] : [request.note];
    return this.#run(scripts.periodMark, [this.keys.period(request.key, request.bucket)], [request.ttlMs, ...note]);
  }

  /** See {@link Coordinator.periodNote}: the marker string's value (`'1'` is a marker set without a note). */
  async periodNote(key: string, bucket: string): Promise<string | undefined> {
    const value = await runCommand('period-note', () => this.redis.get(this.keys.period(key, bucket)), this.redis);
    return value === null || value === '1' ? undefined : value;
  }

  async periodState(key: string, bucket: string): Promise<number | undefined> {
    const ttl = await runCommand('period-state', () => this.redis.pttl(this.keys.period(key, bucket)), this.redis);
    return ttl === -2 ? undefined : Math.max(ttl, 0);
  }

  // ── Ordered lock ──

  async orderedTicket(key: string): Promise<OrderedTicket> {
    const reply = await this.#run(scripts.orderedTicket, [this.keys.ordered(key)], []);
    return { key, nonce: reply.nonce, epoch: reply.epoch };
  }

  async orderedEnter(request: OrderedEnterRequest): Promise<OrderedEnterResult> {
    assertInteger('poisonMs', request.poisonMs, 0);
    return this.#run(
      scripts.orderedEnter,
      [this.keys.ordered(request.key)],
      [
        request.nonce,
        request.epoch,
        request.poisonMs,
        request.strict ? '1' : '0',
        JSON.stringify(request.holder),
        this.keys.orderedChannel(request.key),
      ],
    );
  }

  async orderedHeartbeat(ticket: OrderedTicket): Promise<boolean> {
    return this.#run(scripts.orderedHeartbeat, [this.keys.ordered(ticket.key)], [ticket.nonce, ticket.epoch]);
  }

  async orderedComplete(request: OrderedCompleteRequest): Promise<OrderedState> {
    const reply = await this.#run(
      scripts.orderedComplete,
      [this.keys.ordered(request.key)],
      [
        request.nonce,
        request.epoch,
        request.failed ? '1' : '0',
        request.strict ? '1' : '0',
        this.keys.orderedChannel(request.key),
      ],
    );
    return toOrderedState(request.key, reply);
  }

  async orderedState(key: string): Promise<OrderedState> {
    return toOrderedState(key, await this.#run(scripts.orderedState, [this.keys.ordered(key)], []));
  }

  async orderedSkip(key: string): Promise<OrderedState> {
    return toOrderedState(
      key,
      await this.#run(scripts.orderedSkip, [this.keys.ordered(key)], [this.keys.orderedChannel(key)]),
    );
  }

  async orderedReset(key: string): Promise<OrderedState> {
    return toOrderedState(
      key,
      await this.#run(scripts.orderedReset, [this.keys.ordered(key)], [this.keys.orderedChannel(key)]),
    );
  }

  // ── Inspection ──

  /** See {@link CoordinationInspector.inspectKeys}: SCAN over the key layout, never KEYS. */
  inspectKeys(kind: PrimitiveKind, options: InspectOptions = {}): Promise<readonly InspectedKey[]> {
    return inspectRedis(this.redis, this.keys, kind, options);
  }

  // ── Notifications ──

  waitForChange(kind: PrimitiveKind, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.#closed || signal?.aborted === true) return Promise.resolve();
    const channel = this.#channel(kind, key);
    return new Promise<void>((resolve) => {
      const done = (): boolean => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.#channels.remove(channel, done);
        resolve();
        return true;
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      signal?.addEventListener('abort', done, { once: true });
      this.#channels.add(channel, done, { wakeOne: wakesOne(kind) });
    });
  }

  /**
   * Registers a waiter now; its timer starts at `wait` (a release in between is kept, not lost).
   * With an `offer` (a lock), each `wait` also offers to take the key at a release by this process.
   */
  watch(kind: PrimitiveKind, key: string, offer?: LockAcquireRequest): ChangeWatch {
    const channel = this.#channel(kind, key);
    let changed = this.#closed;
    let wake: (() => void) | undefined;
    // The listener stays registered until `close` (a caller's next watch is registered before it closes
    // this one), so the channel stays subscribed between tries instead of flapping (docs/decisions/057).
    const listener = (): boolean => {
      if (changed) return false;
      changed = true;
      wake?.();
      return true;
    };
    if (kind === 'lock') this.#lockChannelKeys.set(channel, key);
    if (!changed) this.#channels.add(channel, listener, { wakeOne: wakesOne(kind), watch: true });
    // While a watch offers, this process has a waiter that can take a grant from another process (decision 059).
    const stopOffering = offer !== undefined && kind === 'lock' ? this.#grants.offer(key) : () => undefined;
    return {
      wait: (timeoutMs) =>
        changed
          ? Promise.resolve(undefined)
          : new Promise<LockGrant | undefined>((resolve) => {
              let selected = false;
              const settle = (grant: LockGrant | undefined): void => {
                clearTimeout(timer);
                wake = undefined;
                withdraw();
                resolve(grant);
              };
              // Once a release picked this offer, only its outcome ends the wait (a grant is never dropped).
              const done = (): void => {
                if (!selected) settle(undefined);
              };
              const timer = setTimeout(done, Math.max(0, timeoutMs));
              wake = done;
              const withdraw =
                offer === undefined || this.#closed || !this.#lockHandOff
                  ? () => undefined
                  : this.#handOffs.offer(offer.key, { request: offer, select: () => (selected = true), settle });
            }),
      close: () => {
        stopOffering();
        this.#channels.remove(channel, listener);
      },
    };
  }

  /**
   * Whether this process's subscriptions (wake-ups and grants, cancel announcements) are in
   * place: each channel listened on is subscribed on a connected subscriber and, after a
   * reconnect, confirmed again (docs/decisions/061). Until then, what is published on a channel
   * passes this process by. A readiness check reads it (`redisReadiness({ subscriptions })`).
   */
  subscriptions(): SubscriptionHealth {
    return combinedHealth([this.#channels.health(), this.#cancels.health()]);
  }

  /**
   * See {@link WakeUpHealth.wakeUpsDegraded}: a subscription (wake-ups, grants, cancel
   * announcements) unconfirmed for longer than its bound (docs/decisions/112).
   */
  wakeUpsDegraded(): boolean {
    return this.subscriptions().degraded === true;
  }

  /** See {@link WakeUpHealth.onWakeUpsDegraded}. */
  onWakeUpsDegraded(listener: (degraded: boolean, detail: string | undefined) => void): () => void {
    this.#degradedListeners.add(listener);
    return () => this.#degradedListeners.delete(listener);
  }

  /** A subscriber became degraded or recovered: the listeners hear of a change of the whole. */
  #degradedChanged(): void {
    const health = this.subscriptions();
    const degraded = health.degraded === true;
    if (degraded === this.#degraded || this.#closed) return;
    this.#degraded = degraded;
    for (const listener of [...this.#degradedListeners]) listener(degraded, health.detail);
  }

  /** Wakes every waiter, closes the subscriber connection, and quits `redis` if it owns it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const subscriber = this.#channels.close();
    const cancels = this.#cancels.close();
    await Promise.all([
      subscriber ? quit(subscriber) : undefined,
      cancels ? quit(cancels) : undefined,
      this.#closeConnection ? quit(this.redis) : undefined,
    ]);
  }

  // ── Counted calls after a lost reply (docs/decisions/065) ──
  // A re-entrant acquire, a release and a hand-over each count; whether a call whose reply was
  // lost took effect is read from the lock (its owner, its nesting against what this process
  // knew before the call), and only a call that did not is sent again.

  #acquireAfterOutage(
    error: unknown,
    key: string,
    owner: string,
    keys: readonly string[],
    args: readonly ScriptArg[],
  ): Promise<LockAcquireReply> {
    const before = this.#held.nesting(key, owner);
    return settleAfterOutage<LockAcquireReply>(
      this.redis,
      'lock-acquire',
      error,
      async () => {
        const state = await this.#run(scripts.lockState, keys.slice(0, 1), []);
        return state?.holder.owner === owner && state.nesting > before
          ? { acquired: true, token: state.token, nesting: state.nesting }
          : undefined;
      },
      () => this.#run(scripts.lockAcquire, keys, args),
    );
  }

  #releaseAfterOutage(
    error: unknown,
    key: string,
    owner: string,
    keys: readonly string[],
    args: readonly ScriptArg[],
  ): Promise<LockReleaseReply> {
    const before = this.#held.nesting(key, owner);
    return settleAfterOutage<LockReleaseReply>(
      this.redis,
      'lock-release',
      error,
      async () => {
        const state = await this.#run(scripts.lockState, keys.slice(0, 1), []);
        // Not held by the owner any more: released (freed or granted) when it held the key; else sending again is a harmless no-op.
        if (state?.holder.owner !== owner) return before > 0 ? { released: true, nesting: 0 } : undefined;
        return state.nesting < before ? { released: true, nesting: state.nesting } : undefined;
      },
      () => this.#run(scripts.lockRelease, keys, args),
    );
  }

  /** Sends `lock-transfer` from `from` to `to`; a lost reply is settled from the lock: held by `to` is a hand-over, by `from` at a lower nesting a release. */
  async #runTransfer(key: string, from: string, to: string, args: readonly ScriptArg[]): Promise<LockTransferReply> {
    const keys = [this.keys.lock(key), this.keys.lockFence(key)];
    try {
      return await this.#run(scripts.lockTransfer, keys, args);
    } catch (error) {
      const before = this.#held.nesting(key, from);
      return settleAfterOutage<LockTransferReply>(
        this.redis,
        'lock-transfer',
        error,
        async () => {
          const state = await this.#run(scripts.lockState, keys.slice(0, 1), []);
          if (state?.holder.owner === to) return { handedOver: true, token: state.token };
          if (state?.holder.owner !== from) return { handedOver: false, released: false, nesting: 0 };
          return state.nesting < before ? { handedOver: false, released: true, nesting: state.nesting } : undefined;
        },
        () => this.#run(scripts.lockTransfer, keys, args),
      );
    }
  }

  #run<R>(script: ScriptDescriptor<R>, keys: readonly string[], args: readonly ScriptArg[]): Promise<R> {
    return runScript(this.redis, script, keys, args);
  }

  #semaphoreKeys(key: string): [string, string] {
    return [this.keys.semaphore(key), this.keys.semaphoreMeta(key)];
  }

  #channel(kind: PrimitiveKind, key: string): string {
    switch (kind) {
      case 'lock':
        return this.keys.lockChannel(key);
      case 'semaphore':
        return this.keys.semaphoreChannel(key);
      case 'ordered':
        return this.keys.orderedChannel(key);
      case 'rate':
        return this.keys.rateChannel(key);
      case 'period':
        return this.keys.periodChannel(key);
    }
  }

  /** See {@link CancelAnnouncements.announceCancel}: a PUBLISH on the prefix's cancel channel. */
  async announceCancel(executionId: string): Promise<void> {
    await this.#cancels.announce(executionId);
  }

  /** See {@link CancelAnnouncements.onCancelAnnounced}: a subscriber connection listens to the cancel channel while anyone does. */
  onCancelAnnounced(listener: (executionId: string) => void, onListening?: () => void): () => void {
    return this.#cancels.listen(listener, onListening);
  }

  /**
   * A subscription took effect (first, or again after a reconnect): what was published while it
   * was on its way reached nobody here (docs/decisions/057, 061). A lock channel reads the lock: a
   * free key wakes its watches, a key held by this process's grant placeholder is a grant to take
   * (decision 059); a held one will be heard of at its next release. Other channels wake their
   * watches at once (their callers try again). One-shot `waitForChange` waiters keep their timeout.
   */
  #confirmed(channel: string, wakeWatches: () => void): void {
    const lockKey = this.#lockChannelKeys.get(channel);
    if (lockKey === undefined) return wakeWatches();
    this.lockState(lockKey).then(
      (state) => {
        if (state === undefined) wakeWatches();
        else if (state.holder.owner === this.#grants.placeholder) this.#granted(lockKey, '', state.token);
      },
      () => wakeWatches(),
    );
  }

  /** `g <pid> <registration> <token>` on a lock channel: a grant; only the named process acts on it. */
  #onGrant(channel: string, message: string): void {
    const [, pid, registration = '', token] = message.split(' ');
    const key = this.#lockChannelKeys.get(channel);
    if (pid !== this.#grants.pid || token === undefined || key === undefined || this.#closed) return;
    this.#granted(key, registration, token);
  }
}

/** A lock holder as stored (`''` = absent) → the port's shape. */
export function toHolder(stored: StoredHolder): HolderInfo {
  return {
    owner: stored.owner,
    ...(stored.executionId === '' ? {} : { executionId: stored.executionId }),
    ...(stored.reactor === '' ? {} : { reactor: stored.reactor }),
    ...(stored.step === '' ? {} : { step: stored.step }),
  };
}

function parseHolder(json: string, owner: string): HolderInfo {
  try {
    const value = JSON.parse(json) as Partial<HolderInfo> | null;
    if (value === null || typeof value !== 'object') return { owner };
    return {
      owner,
      ...(typeof value.executionId === 'string' ? { executionId: value.executionId } : {}),
      ...(typeof value.reactor === 'string' ? { reactor: value.reactor } : {}),
      ...(typeof value.step === 'string' ? { step: value.step } : {}),
    };
  } catch {
    return { owner };
  }
}

function toOrderedState(key: string, counters: OrderedCounters): OrderedState {
  return {
    key,
    epoch: counters.epoch,
    issued: counters.issued,
    lastCompleted: counters.lastCompleted,
    inFlight: counters.inFlight === 0 ? undefined : counters.inFlight,
    firstFailed: counters.firstFailed === 0 ? undefined : counters.firstFailed,
    drained: counters.issued === counters.lastCompleted,
  };
}

/** Locks and semaphores: a release frees one place, so it wakes one waiter per process (docs/decisions/030). */
function wakesOne(kind: PrimitiveKind): boolean {
  return kind === 'lock' || kind === 'semaphore';
}

function assertPositiveInteger(name: string, value: number): void {
  assertInteger(name, value, 1);
}

function assertInteger(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer >= ${min}; got ${String(value)}`);
}

/** Quits a connection politely when it is up, or drops it at once when it is not. */
export async function quit(connection: RedisConnection): Promise<void> {
  if (connection.status === 'end') return;
  if (connection.status !== 'ready') return connection.disconnect();
  try {
    await connection.quit();
  } catch {
    connection.disconnect();
  }
}
