import { DefinitionError } from '../errors.js';
import { parseDuration, type Duration } from './duration.js';

/** How a step is retried after a failure. */
export interface RetryOptions {
  /** Attempts in all, counting the first. At least 1. */
  readonly maxAttempts: number;
  /** How the delay grows: `base·2^(n-1)`, `base·n` or `base`. Default `'exponential'`. */
  readonly backoff?: 'exponential' | 'linear' | 'fixed';
  /** Base delay. Default 100 ms. */
  readonly baseDelay?: Duration;
  /** Upper bound on one delay. Default: none. */
  readonly maxDelay?: Duration;
  /** Randomize each delay in `[delay/2, delay]` ("equal jitter"). Default false. */
  readonly jitter?: boolean;
}

/** A validated retry policy with delays in milliseconds. */
export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly backoff: 'exponential' | 'linear' | 'fixed';
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly jitter: boolean;
}

/** The policy of a step that declares none: run once. */
export const NO_RETRY: RetryPolicy = Object.freeze({
  maxAttempts: 1,
  backoff: 'fixed',
  baseDelayMs: 0,
  maxDelayMs: Infinity,
  jitter: false,
});

/** Validates retry options; throws a {@link DefinitionError} naming the reactor and step. */
export function toRetryPolicy(
  options: RetryOptions | undefined,
  where: { reactor: string; step: string },
): RetryPolicy {
  if (options === undefined) return NO_RETRY;
  const fail = (what: string): never => {
    throw new DefinitionError(
      `reactor "${where.reactor}", step "${where.step}": retry ${what}`,
      where.reactor,
      where.step,
    );
  };
  if (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1)
    fail(`maxAttempts must be an integer >= 1 (got ${String(options.maxAttempts)})`);
  const backoff = options.backoff ?? 'exponential';
  if (!['exponential', 'linear', 'fixed'].includes(backoff))
    fail(`backoff must be 'exponential', 'linear' or 'fixed' (got ${String(backoff)})`);
  const baseDelayMs =
    parseDuration(options.baseDelay ?? 100) ?? fail(`baseDelay is not a duration (got ${String(options.baseDelay)})`);
  const maxDelayMs =
    options.maxDelay === undefined
      ? Infinity
      : (parseDuration(options.maxDelay) ?? fail(`maxDelay is not a duration (got ${String(options.maxDelay)})`));
  return Object.freeze({
    maxAttempts: options.maxAttempts,
    backoff,
    baseDelayMs,
    maxDelayMs,
    jitter: options.jitter ?? false,
  });
}

/**
 * The delay before attempt `failedAttempt + 1`, in ms. `random` returns a number in [0, 1) and
 * is only used with jitter.
 */
export function retryDelay(policy: RetryPolicy, failedAttempt: number, random: () => number = Math.random): number {
  const base = policy.baseDelayMs;
  const raw =
    policy.backoff === 'exponential'
      ? base * 2 ** (failedAttempt - 1)
      : policy.backoff === 'linear'
        ? base * failedAttempt
        : base;
  const capped = Math.min(raw, policy.maxDelayMs);
  return policy.jitter ? capped / 2 + (capped / 2) * random() : capped;
}
