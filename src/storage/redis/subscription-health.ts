/**
 * Whether a process's pub/sub subscriptions (wake-ups, grants, cancel announcements) are in
 * place: the shape a coordinator reports and readiness checks read (docs/operations.md,
 * "Readiness"). A subscription that is not confirmed misses what is published on its channel;
 * the process then only learns of it by polling.
 *
 * @module
 */

/** How long after a refused re-subscription (e.g. `NOPERM`) it is sent again. */
export const RESUBSCRIBE_RETRY_MS = 1_000;

/** The state of one subscriber connection's subscriptions, or of all of a process's. */
export interface SubscriptionHealth {
  /**
   * True when every channel listened on is subscribed on a connected subscriber, and every
   * subscription made again after a reconnect was answered (confirmed). True when nothing is
   * listened on.
   */
  readonly confirmed: boolean;
  /** How many channels are listened on. */
  readonly channels: number;
  /** Of them, how many are not confirmed (all of them while the subscriber is disconnected). */
  readonly unconfirmed: number;
  /** Why not confirmed; absent when confirmed. */
  readonly detail?: string;
}

/** What one subscriber knows of its subscriptions, for {@link subscriptionHealth}. */
export interface SubscriberState {
  /** What the subscriber listens for, in the detail: `wake-up`, `cancel`. */
  readonly kind: string;
  /** The subscriber's ioredis status (`ready`, `connecting`, `reconnecting` …); undefined before it exists. */
  readonly status: string | undefined;
  readonly channels: number;
  /** Channels whose subscription awaits its answer after the subscriber (re)connected. */
  readonly awaiting: number;
  /** The last failed SUBSCRIBE's message, while one is awaited again. */
  readonly failure?: string;
}

/** The health of one subscriber from its state. */
export function subscriptionHealth(state: SubscriberState): SubscriptionHealth {
  const { kind, channels } = state;
  if (channels === 0) return { confirmed: true, channels: 0, unconfirmed: 0 };
  if (state.status !== 'ready')
    return {
      confirmed: false,
      channels,
      unconfirmed: channels,
      detail: `the ${kind} subscriber connection is ${state.status ?? 'not open'}`,
    };
  if (state.awaiting === 0) return { confirmed: true, channels, unconfirmed: 0 };
  const failed = state.failure === undefined ? '' : ` (SUBSCRIBE failed: ${state.failure})`;
  return {
    confirmed: false,
    channels,
    unconfirmed: state.awaiting,
    detail: `${state.awaiting} of ${channels} ${kind} subscription(s) not confirmed since the subscriber reconnected${failed}`,
  };
}

/** The health of several subscribers together: confirmed when each is; the details joined. */
export function combinedHealth(parts: readonly SubscriptionHealth[]): SubscriptionHealth {
  const details = parts.flatMap((part) => (part.detail === undefined ? [] : [part.detail]));
  const confirmed = parts.every((part) => part.confirmed);
  return {
    confirmed,
    channels: parts.reduce((sum, part) => sum + part.channels, 0),
    unconfirmed: parts.reduce((sum, part) => sum + part.unconfirmed, 0),
    ...(confirmed ? {} : { detail: details.join('; ') }),
  };
}
