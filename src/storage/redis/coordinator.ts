/**
 * The Redis Coordinator: each transition is one Lua script (see `lua/`), reading time from the
 * server's `TIME`. Wake-ups travel over pub/sub on a dedicated, lazily created subscriber
 * connection; they are only hints — every waiter also has a timeout. This file is a facade: it
 * builds the shared services and delegates to one module per primitive (and per fast path) under
 * `coordinator/`. See `ARCHITECTURE.md`.
 *
 * @module
 */
import { layoutOf, quit, type RedisConnection } from './connection.js';
import type {
  CancelAnnouncements,
  ChangeWatch,
  Coordinator,
  CoordinatorFastPaths,
  FreedKeys,
  KeyChanges,
  KeyWatches,
  LockAcquireRequest,
  PrimitiveKind,
  WakeUpHealth,
} from '../../ports/coordinator.js';
import type { CoordinationInspector, InspectedKey, InspectOptions } from '../../ports/inspector.js';
import { CancelChannel } from './cancel-channel.js';
import type { ChannelSubscriberOptions } from './channel-subscriber.js';
import { assertPositiveInteger, type RedisContext } from './coordinator/context.js';
import { GrantReceiver } from './coordinator/grant-receiver.js';
import { RedisLocks } from './coordinator/locks.js';
import { RedisOrdered } from './coordinator/ordered.js';
import { RedisPeriods } from './coordinator/periods.js';
import { RedisRates } from './coordinator/rates.js';
import { RedisSemaphores } from './coordinator/semaphores.js';
import { RedisWatches } from './coordinator/watches.js';
import { GrantBook } from './grants.js';
import { HandOffs } from './handoff.js';
import { HeldLocks } from './held-locks.js';
import { inspectRedis } from './inspect.js';
import { RedisKeys } from './keys.js';
import { runCommand, runScript } from './script.js';
import { CoordinatorFacade, type CoordinatorPrimitives } from '../coordinator-facade.js';
import { combinedHealth, type SubscriptionHealth } from './subscription-health.js';
import { WakeChannels } from './wake-channels.js';

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
   * How long this process stays queued for a grant of a lock after its last registration
   * (default 1,000 ms, docs/decisions/059). For tests that must not depend on the machine's speed.
   */
  readonly grantWindowMs?: number;
  /**
   * How long a subscription may stay unconfirmed before the wake-ups count as degraded and the
   * subscriber connection is replaced by a fresh one (default 1,000 ms, docs/decisions/112). For tests.
   */
  readonly subscriptions?: ChannelSubscriberOptions;
}

/**
 * {@link Coordinator} over Redis ≥ 7 (ioredis). `periodNote` reads the marker string's value (`'1'`
 * is a marker set without a note).
 */
export class RedisCoordinator
  extends CoordinatorFacade
  implements Coordinator, KeyChanges, KeyWatches, FreedKeys, CancelAnnouncements, WakeUpHealth, CoordinationInspector
{
  /** Every fast path: pub/sub change notifications, watches with hand-over and grants, freed keys, cancel announcements, their health. */
  readonly fastPaths: CoordinatorFastPaths = { changes: this, watches: this, freed: this, cancels: this, health: this };
  /** The command connection. */
  readonly redis: RedisConnection;
  /** The key builder. */
  readonly keys: RedisKeys;
  readonly #closeConnection: boolean;
  /** The wake-up channels and their subscriber connection. */
  readonly #channels: WakeChannels;
  /** Cancel announcements (docs/decisions/053). */
  readonly #cancels: CancelChannel;
  readonly #locks: RedisLocks;
  protected override readonly primitives: CoordinatorPrimitives;
  /** Grants of locks from other processes (docs/decisions/059), and the lock channels listened on. */
  readonly #receiver: GrantReceiver;
  readonly #watches: RedisWatches;
  /** Listeners of {@link RedisCoordinator.onWakeUpsDegraded}. */
  readonly #degradedListeners = new Set<(degraded: boolean, detail: string | undefined) => void>();
  /** Whether the wake-ups were degraded when last told. */
  #degraded = false;
  #closed = false;

  constructor(options: RedisCoordinatorOptions) {
    super();
    this.redis = options.redis;
    this.keys = options.keys ?? new RedisKeys(options.prefix, layoutOf(options.redis));
    this.#closeConnection = options.closeConnection ?? false;
    const lockHandOff = options.lockHandOff ?? true;
    const redis = this.redis;
    const context: RedisContext = {
      redis,
      keys: this.keys,
      run: (script, keys, args) => runScript(redis, script, keys, args),
      closed: () => this.#closed,
    };
    const held = new HeldLocks();
    const handOffs = new HandOffs(options.handOffClock);
    if (options.grantWindowMs !== undefined) assertPositiveInteger('grantWindowMs', options.grantWindowMs);
    const grants = new GrantBook(lockHandOff, options.grantWindowMs);
    const onDegraded = (): void => this.#degradedChanged();
    this.#cancels = new CancelChannel(this.redis, this.keys.cancelChannel(), onDegraded, options.subscriptions);
    this.#channels = new WakeChannels(
      this.redis,
      {
        onMessage: (channel, message) => this.#receiver.message(channel, message),
        onConfirmed: (channel, wakeWatches) => this.#receiver.confirmed(channel, wakeWatches),
        onUnlisten: (channel) => this.#receiver.unlisten(channel),
        onDegraded,
      },
      options.subscriptions,
    );
    this.#locks = new RedisLocks(context, {
      held,
      handOffs,
      grants,
      keepListening: (key) => this.#receiver.keepListening(key),
    });
    this.#receiver = new GrantReceiver(context, grants, held, this.#channels, this.#locks);
    this.#watches = new RedisWatches(context, {
      channels: this.#channels,
      grants,
      receiver: this.#receiver,
      handOffs,
      lockHandOff,
    });
    this.primitives = {
      locks: this.#locks,
      semaphores: new RedisSemaphores(context),
      rates: new RedisRates(context),
      periods: new RedisPeriods(context),
      ordered: new RedisOrdered(context),
    };
  }

  async time(): Promise<number> {
    const [seconds, micros] = await runCommand('time', () => this.redis.time(), this.redis);
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /** See {@link FreedKeys.onFreed}. */
  onFreed(listener: (kind: 'lock', key: string) => void): () => void {
    return this.#receiver.onFreed(listener);
  }

  // ── Inspection ──

  /** See {@link CoordinationInspector.inspectKeys}: SCAN over the key layout, never KEYS. */
  inspectKeys(kind: PrimitiveKind, options: InspectOptions = {}): Promise<readonly InspectedKey[]> {
    return inspectRedis(this.redis, this.keys, kind, options);
  }

  // ── Notifications ──

  waitForChange(kind: PrimitiveKind, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.#watches.waitForChange(kind, key, timeoutMs, signal);
  }

  /**
   * Registers a waiter now; its timer starts at `wait` (a release in between is kept, not lost).
   * With an `offer` (a lock), each `wait` also offers to take the key at a release by this process.
   */
  watch(kind: PrimitiveKind, key: string, offer?: LockAcquireRequest): ChangeWatch {
    return this.#watches.watch(kind, key, offer);
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
    const subscribers = this.#channels.close();
    const cancels = this.#cancels.close();
    await Promise.all([
      ...subscribers.map(quit),
      cancels ? quit(cancels) : undefined,
      this.#closeConnection ? quit(this.redis) : undefined,
    ]);
  }

  /** See {@link CancelAnnouncements.announceCancel}: a PUBLISH on the prefix's cancel channel. */
  async announceCancel(executionId: string): Promise<void> {
    await this.#cancels.announce(executionId);
  }

  /** See {@link CancelAnnouncements.onCancelAnnounced}: a subscriber connection listens to the cancel channel while anyone does. */
  onCancelAnnounced(listener: (executionId: string) => void, onListening?: () => void): () => void {
    return this.#cancels.listen(listener, onListening);
  }
}
