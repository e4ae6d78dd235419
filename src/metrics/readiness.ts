/**
 * Readiness checks for a process that works over Redis or PostgreSQL: the datastore answers
 * within a bound (Redis a `PING`, PostgreSQL a `SELECT 1`), its notifications are confirmed
 * (Redis's pub/sub subscriptions, PostgreSQL's LISTEN connection), and (for a worker) the worker
 * is running.
 *
 * @module
 */
import type { Cluster, Redis } from 'ioredis';
import type { Readiness, ReadinessCheck } from './server.js';

/** Options of {@link redisReadiness}. */
export interface RedisReadinessOptions {
  /** A connection of the process (its command connection): one server's, or a cluster's (PING goes to one of its nodes). */
  readonly redis: Redis | Cluster;
  /** How long `PING` may take before Redis counts as unreachable. Default 1,000 ms. */
  readonly timeoutMs?: number;
  /** Whether the process's worker runs (absent: not checked). */
  readonly workerRunning?: () => boolean;
  /**
   * Whether the process's pub/sub subscriptions (wake-ups, grants, cancel announcements) are
   * confirmed, e.g. `() => runtime.health().subscriptions` of a Redis runtime (absent: not checked).
   */
  readonly subscriptions?: () => SubscriptionsState;
}

/** What {@link RedisReadinessOptions.subscriptions} returns: a `SubscriptionHealth` of `ts-reactor/redis` fits. */
export interface SubscriptionsState {
  readonly confirmed: boolean;
  /** Why not confirmed: the check's `detail`. */
  readonly detail?: string;
  /** True when a subscription has been unconfirmed for longer than its bound (wake-ups degraded). */
  readonly degraded?: boolean;
}

/**
 * Readiness of a process over Redis: `redis` (PING answered in time) and, when given,
 * `subscriptions` (confirmed) and `worker` (running).
 */
export function redisReadiness(options: RedisReadinessOptions): Readiness {
  const timeoutMs = options.timeoutMs ?? 1_000;
  return async () => {
    const checks: ReadinessCheck[] = [await ping(options.redis, timeoutMs)];
    if (options.subscriptions) checks.push(subscriptionsCheck(options.subscriptions));
    if (options.workerRunning) checks.push({ name: 'worker', ok: options.workerRunning() });
    return checks;
  };
}

/** Options of {@link postgresReadiness}. */
export interface PostgresReadinessOptions {
  /** A `pg.Pool` of the process (anything with `query`): `SELECT 1` goes through it. */
  readonly pool: { query(text: string): Promise<unknown> };
  /** How long `SELECT 1` may take before PostgreSQL counts as unreachable. Default 1,000 ms. */
  readonly timeoutMs?: number;
  /** Whether the process's worker runs (absent: not checked). */
  readonly workerRunning?: () => boolean;
  /**
   * Whether the LISTEN connection that carries wake-ups and cancel announcements listens, e.g.
   * `() => runtime.health().subscriptions` of a PostgreSQL runtime (absent: not checked).
   */
  readonly subscriptions?: () => SubscriptionsState;
}

/**
 * Readiness of a process over PostgreSQL: `postgres` (`SELECT 1` answered in time) and, when
 * given, `subscriptions` (the LISTEN connection listening) and `worker` (running).
 */
export function postgresReadiness(options: PostgresReadinessOptions): Readiness {
  const timeoutMs = options.timeoutMs ?? 1_000;
  return async () => {
    const checks: ReadinessCheck[] = [
      await answered('postgres', () => options.pool.query('SELECT 1'), timeoutMs, 'SELECT 1'),
    ];
    if (options.subscriptions) checks.push(subscriptionsCheck(options.subscriptions));
    if (options.workerRunning) checks.push({ name: 'worker', ok: options.workerRunning() });
    return checks;
  };
}

function subscriptionsCheck(read: () => SubscriptionsState): ReadinessCheck {
  try {
    const state = read();
    if (state.confirmed) return { name: 'subscriptions', ok: true };
    return { name: 'subscriptions', ok: false, detail: state.detail ?? 'subscriptions not confirmed' };
  } catch (error) {
    return { name: 'subscriptions', ok: false, detail: error instanceof Error ? error.message : String(error) };
  }
}

function ping(redis: Redis | Cluster, timeoutMs: number): Promise<ReadinessCheck> {
  return answered('redis', () => redis.ping(), timeoutMs, 'PING');
}

/** The check `name`: ok when `call` resolves within `timeoutMs`, else its error or the silence. */
async function answered(
  name: string,
  call: () => Promise<unknown>,
  timeoutMs: number,
  what: string,
): Promise<ReadinessCheck> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ReadinessCheck>((resolve) => {
    timer = setTimeout(
      () => resolve({ name, ok: false, detail: `no answer to ${what} within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([
      call().then(
        (): ReadinessCheck => ({ name, ok: true }),
        (error: unknown): ReadinessCheck => ({
          name,
          ok: false,
          detail: error instanceof Error ? error.message : String(error),
        }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
