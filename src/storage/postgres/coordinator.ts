/**
 * The Postgres Coordinator: the five coordination primitives in typed tables, each transition one
 * SQL function (migration 2, `coordination`) called in one round trip, every TTL, window and
 * age on the database clock (`clock_timestamp()`). Wake-ups and cancel announcements travel by
 * LISTEN/NOTIFY on one dedicated connection; they are only hints — every waiter also has a
 * timeout. This file is a facade: each primitive lives in its own module under `coordinator/`.
 * See `coordinator/ARCHITECTURE.md` and docs/decisions/127, 128.
 *
 * @module
 */
import pg from 'pg';
import type { Client, Pool } from 'pg';
import { postgresConnection, type PostgresConnection, type PostgresConnectionOption } from './connection.js';
import { PostgresNames } from './names.js';
import type {
  CancelAnnouncements,
  ChangeWatch,
  Coordinator,
  CoordinatorFastPaths,
  KeyChanges,
  KeyWatches,
  LockAcquireRequest,
  PrimitiveKind,
  WakeUpHealth,
} from '../../ports/coordinator.js';
import type { CoordinationInspector, InspectedKey, InspectOptions } from '../../ports/inspector.js';
import { CoordinatorFacade, type CoordinatorPrimitives } from '../coordinator-facade.js';
import { CoordinationCalls, toCoordinationError, toNumber } from './coordinator/calls.js';
import { inspectPostgres } from './coordinator/inspect.js';
import { NotificationListener } from './coordinator/listener.js';
import { PostgresLocks } from './coordinator/locks.js';
import { PostgresOrdered } from './coordinator/ordered.js';
import { PostgresPeriods } from './coordinator/periods.js';
import { PostgresRates } from './coordinator/rates.js';
import { PostgresSemaphores } from './coordinator/semaphores.js';
import { changePayload, WakeUps } from './coordinator/wake-ups.js';

/** The `application_name` of the LISTEN connection (for operators reading `pg_stat_activity`). */
export const LISTEN_APPLICATION = 'ts-reactor/listen';

/** The payload prefix of a cancel announcement on the coordination channel. */
const CANCEL_PREFIX = 'cancel:';

/** Options of {@link PostgresCoordinator}. */
export interface PostgresCoordinatorOptions {
  /**
   * Where to connect: a connection string, a `pg` pool config, or your own `pg.Pool` (never ended
   * by the coordinator; share the store's to share its connections).
   */
  readonly connection: PostgresConnectionOption;
  /** The schema of ts-reactor's tables (default `ts_reactor`), migrated to version 9 or later. */
  readonly schema?: string;
  /**
   * Makes the client of the LISTEN connection (a new, unconnected one per connection attempt).
   * Default: a `pg.Client` with the pool's options, named {@link LISTEN_APPLICATION}.
   */
  readonly listenClient?: () => Client;
  /**
   * How long a call rides out a connection that cannot be had or was lost, in ms, before it fails
   * with `CoordinationUnavailableError` (docs/decisions/132). Default 30 s; 0 fails at once.
   */
  readonly outageToleranceMs?: number;
  /**
   * Whether each connection prepares a call's statement once, under a name of its own, and then
   * only binds and executes it (default true; docs/decisions/155). Set false behind a pooler in
   * transaction mode that does not keep prepared statements (PgBouncer before 1.21, or without
   * `max_prepared_statements`): every call is then parsed and planned again.
   */
  readonly prepareStatements?: boolean;
}

/**
 * {@link Coordinator} over PostgreSQL ≥ 13 (`pg`). A lock acquire's `waits` queues nothing (this
 * backend offers no grants).
 *
 * @example
 * ```ts
 * const coordinator = new PostgresCoordinator({ connection: 'postgres://localhost/app' });
 * await coordinator.lockAcquire({ key: 'acct:1', holder: { owner: 'run-1' }, ttlMs: 30_000 });
 * ```
 */
export class PostgresCoordinator
  extends CoordinatorFacade
  implements Coordinator, KeyChanges, KeyWatches, CancelAnnouncements, WakeUpHealth, CoordinationInspector
{
  /**
   * Key-change notifications, watches (without hand-over: no key is granted), cancel
   * announcements and their health, all over LISTEN/NOTIFY; no freed keys (docs/decisions/128).
   */
  readonly fastPaths: CoordinatorFastPaths = { changes: this, watches: this, cancels: this, health: this };
  /** The schema's names. */
  readonly names: PostgresNames;
  readonly #connection: PostgresConnection;
  readonly #calls: CoordinationCalls;
  readonly #locks: PostgresLocks;
  protected override readonly primitives: CoordinatorPrimitives;
  readonly #wakeUps = new WakeUps();
  readonly #listener: NotificationListener;
  /** Listeners of {@link PostgresCoordinator.onCancelAnnounced}, each with its `onListening`. */
  readonly #cancelListeners = new Map<(executionId: string) => void, (() => void) | undefined>();
  /** Listeners of {@link PostgresCoordinator.onWakeUpsDegraded}. */
  readonly #degradedListeners = new Set<(degraded: boolean, detail: string | undefined) => void>();
  #closed = false;

  constructor(options: PostgresCoordinatorOptions) {
    super();
    this.names = new PostgresNames(options.schema, 'PostgresCoordinator');
    this.#connection = postgresConnection(options.connection);
    this.#calls = new CoordinationCalls(
      this.pool,
      this.names,
      options.outageToleranceMs,
      options.prepareStatements ?? true,
    );
    this.#locks = new PostgresLocks(this.#calls);
    this.primitives = {
      locks: this.#locks,
      semaphores: new PostgresSemaphores(this.#calls),
      rates: new PostgresRates(this.#calls),
      periods: new PostgresPeriods(this.#calls),
      ordered: new PostgresOrdered(this.#calls),
    };
    const listenClient =
      options.listenClient ?? (() => new pg.Client({ ...this.pool.options, application_name: LISTEN_APPLICATION }));
    this.#listener = new NotificationListener(listenClient, this.names.coordChannel, {
      onNotification: (payload) => this.#onNotification(payload),
      onListening: () => this.#onListening(),
      onDegraded: (degraded, detail) => {
        for (const listener of [...this.#degradedListeners]) listener(degraded, detail);
      },
    });
  }

  /** The database clock (`clock_timestamp()`), in ms. */
  async time(): Promise<number> {
    return toNumber((await this.#calls.one<{ coord_time: string }>('time', 'time', [])).coord_time);
  }

  /** The pool the transitions run on. */
  get pool(): Pool {
    return this.#connection.pool;
  }

  // ── Inspection ────────────────────────────────────────────────────────────────────────────

  /** See {@link CoordinationInspector.inspectKeys}: plain `SELECT`s that lock nothing. */
  inspectKeys(kind: PrimitiveKind, options: InspectOptions = {}): Promise<readonly InspectedKey[]> {
    return inspectPostgres(this.pool, this.names, kind, options);
  }

  // ── Notifications ─────────────────────────────────────────────────────────────────────────

  /**
   * Starts the LISTEN connection (if not started yet) and resolves once it listens and the locks
   * waited for are marked wanted (see {@link PostgresCoordinator.waitForChange}), or at close.
   * Optional: the first wait or watch starts it too; a caller that must not miss a notification
   * sent right after (a test) awaits this first.
   */
  async listening(): Promise<void> {
    await Promise.all([this.#listener.listening(), this.#locks.wanting()]);
  }

  /**
   * See {@link KeyChanges.waitForChange}: woken by NOTIFY, wake-one for locks and semaphores. A
   * lock's release notifies only while the key is wanted: a refused acquire marks it so, and a
   * wait for a lock this process was not refused marks it in the background (docs/decisions/139).
   */
  waitForChange(kind: PrimitiveKind, key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    this.#listener.start();
    if (kind === 'lock' && signal?.aborted !== true && !this.#closed)
      this.#locks.want(key, timeoutMs, this.#freed(key));
    return this.#wakeUps.wait(kind, key, timeoutMs, signal);
  }

  /**
   * See {@link KeyWatches.watch}: registered now, so a release between a refused try and the
   * wait is kept; a lock is marked wanted as by {@link PostgresCoordinator.waitForChange}.
   * `offer` is ignored: this backend never grants a lock (docs/decisions/128).
   */
  watch(kind: PrimitiveKind, key: string, offer?: LockAcquireRequest): ChangeWatch {
    void offer;
    this.#listener.start();
    if (kind === 'lock' && !this.#closed) this.#locks.want(key, 0, this.#freed(key));
    return this.#wakeUps.watch(kind, key);
  }

  /** See {@link CancelAnnouncements.announceCancel}: a NOTIFY on the coordination channel. */
  async announceCancel(executionId: string): Promise<void> {
    try {
      await this.pool.query('SELECT pg_notify($1, $2)', [this.names.coordChannel, `${CANCEL_PREFIX}${executionId}`]);
    } catch (error) {
      throw toCoordinationError('cancel-announce', 'pg_notify', error);
    }
  }

  /** See {@link CancelAnnouncements.onCancelAnnounced}: `onListening` at first and after every reconnect. */
  onCancelAnnounced(listener: (executionId: string) => void, onListening?: () => void): () => void {
    this.#cancelListeners.set(listener, onListening);
    this.#listener.start();
    if (this.#listener.isListening && onListening !== undefined) queueMicrotask(onListening);
    return () => void this.#cancelListeners.delete(listener);
  }

  /** See {@link WakeUpHealth.wakeUpsDegraded}: the LISTEN connection down for longer than 1 s. */
  wakeUpsDegraded(): boolean {
    return this.#listener.degraded;
  }

  /** See {@link WakeUpHealth.onWakeUpsDegraded}. */
  onWakeUpsDegraded(listener: (degraded: boolean, detail: string | undefined) => void): () => void {
    this.#degradedListeners.add(listener);
    return () => void this.#degradedListeners.delete(listener);
  }

  /** Wakes every waiter, ends the LISTEN connection, and ends the pool if the coordinator created it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#wakeUps.close();
    this.#cancelListeners.clear();
    await this.#listener.close();
    await this.#locks.wanting();
    await this.#calls.settle();
    await this.#connection.end();
  }

  /** Wakes a waiter of lock `key` as its release's notification would have (a release before its mark). */
  #freed(key: string): () => void {
    return () => this.#wakeUps.notify(changePayload('lock', key));
  }

  #onNotification(payload: string): void {
    if (!payload.startsWith(CANCEL_PREFIX)) return this.#wakeUps.notify(payload);
    const executionId = payload.slice(CANCEL_PREFIX.length);
    for (const listener of [...this.#cancelListeners.keys()]) listener(executionId);
  }

  /** LISTEN took effect: whatever was notified before passed this process by, so everyone looks again. */
  #onListening(): void {
    this.#wakeUps.wakeAll();
    for (const [listener, onListening] of [...this.#cancelListeners])
      if (onListening !== undefined && this.#cancelListeners.has(listener)) onListening();
  }
}
