/**
 * The health a backend reports to readiness checks: whether the notifications it sends between
 * processes (lock wake-ups, grants, cancel announcements) reach this process.
 *
 * @module
 */

/** The state of one subscriber connection's subscriptions, or of all of a process's. */
export interface SubscriptionHealth {
  /**
   * True when every channel listened on is subscribed on a connected subscriber, and every
   * subscription made again after a reconnect was answered (confirmed). True when nothing is
   * listened on. A first subscription still on its way counts as confirmed until
   * its confirmation bound has passed (Redis: 1 s).
   */
  readonly confirmed: boolean;
  /** How many channels are listened on. */
  readonly channels: number;
  /** Of them, how many are not confirmed (all of them while the subscriber is disconnected). */
  readonly unconfirmed: number;
  /** Why not confirmed; absent when confirmed. */
  readonly detail?: string;
  /**
   * Present when not confirmed: true once a subscription has been unconfirmed for longer than
   * its confirmation bound (wake-ups then come from fallback polls; the subscriber
   * connection is replaced by a fresh one).
   */
  readonly degraded?: boolean;
  /** Present when not confirmed: how long the oldest unconfirmed subscription has been waiting, ms. */
  readonly unconfirmedForMs?: number;
}

/** What a backend reports at each readiness check (`Backend.health`). */
export interface BackendHealth {
  /**
   * The backend's subscriptions to notifications from other processes; a backend that sends
   * none (the memory one) reports `{ confirmed: true, channels: 0, unconfirmed: 0 }`.
   */
  readonly subscriptions: SubscriptionHealth;
}

/** The health of a backend with no subscriptions: always confirmed. */
export const NO_SUBSCRIPTIONS: SubscriptionHealth = Object.freeze({ confirmed: true, channels: 0, unconfirmed: 0 });
