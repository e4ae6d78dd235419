/**
 * Whether a process's pub/sub subscriptions (wake-ups, grants, cancel announcements) are in
 * place: the shape a coordinator reports and readiness checks read (docs/operations.md,
 * "Readiness"). A subscription that is not confirmed misses what is published on its channel;
 * the process then only learns of it by polling.
 *
 * @module
 */
import type { SubscriptionHealth } from '../../ports/health.js';

/** How long after a refused re-subscription (e.g. `NOPERM`) it is sent again. */
export const RESUBSCRIBE_RETRY_MS = 1_000;

/** How long a subscription may go unanswered before its subscriber is replaced by a fresh connection. */
export const SUBSCRIBE_CONFIRM_MS = 1_000;

export type { SubscriptionHealth } from '../../ports/health.js';

/** What one subscriber knows of its subscriptions, for {@link subscriptionHealth}. */
export interface SubscriberState {
  /** What the subscriber listens for, in the detail: `wake-up`, `cancel`. */
  readonly kind: string;
  /** The subscriber's ioredis status (`ready`, `connecting`, `reconnecting` …); undefined before it exists. */
  readonly status: string | undefined;
  readonly channels: number;
  /** Channels whose subscription awaits its answer: again after the subscriber (re)connected, or for longer than the bound. */
  readonly awaiting: number;
  /** Whether one of them awaits it again after a reconnect (else: a first subscription unanswered past the bound). */
  readonly again?: boolean;
  /** How long the oldest channel not confirmed has waited, ms (0 when none). */
  readonly unconfirmedForMs?: number;
  /** The bound past which an unconfirmed subscription is degraded. Default {@link SUBSCRIBE_CONFIRM_MS}. */
  readonly confirmMs?: number;
  /** How many times the subscriber connection was replaced by a fresh one. */
  readonly replacements?: number;
  /** The last failed SUBSCRIBE's message, while one is awaited again. */
  readonly failure?: string;
}

/** The health of one subscriber from its state. */
export function subscriptionHealth(state: SubscriberState): SubscriptionHealth {
  const { kind, channels } = state;
  if (channels === 0) return { confirmed: true, channels: 0, unconfirmed: 0 };
  const bound = state.confirmMs ?? SUBSCRIBE_CONFIRM_MS;
  const degraded = (state.unconfirmedForMs ?? 0) > bound;
  const waitedMs = Math.round(state.unconfirmedForMs ?? 0);
  const suffix = degraded
    ? `; degraded for ${waitedMs} ms (a subscription unconfirmed longer than ${bound} ms; subscriber connection replaced ${state.replacements ?? 0} time(s))`
    : '';
  if (state.status !== 'ready')
    return {
      confirmed: false,
      channels,
      unconfirmed: channels,
      detail: `the ${kind} subscriber connection is ${state.status ?? 'not open'}${suffix}`,
      degraded,
      unconfirmedForMs: waitedMs,
    };
  if (state.awaiting === 0) return { confirmed: true, channels, unconfirmed: 0 };
  const failed = state.failure === undefined ? '' : ` (SUBSCRIBE failed: ${state.failure})`;
  const why = state.again === false ? `within ${bound} ms of their SUBSCRIBE` : 'since the subscriber reconnected';
  return {
    confirmed: false,
    channels,
    unconfirmed: state.awaiting,
    detail: `${state.awaiting} of ${channels} ${kind} subscription(s) not confirmed ${why}${failed}${suffix}`,
    degraded,
    unconfirmedForMs: waitedMs,
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
    ...(confirmed
      ? {}
      : {
          detail: details.join('; '),
          degraded: parts.some((part) => part.degraded === true),
          unconfirmedForMs: Math.max(0, ...parts.map((part) => part.unconfirmedForMs ?? 0)),
        }),
  };
}
