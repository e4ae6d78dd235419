/**
 * The rate limit of the Postgres coordinator: an exact sliding log of starts per key, in tables
 * `coord_rates` and `coord_rate_starts`, through `coord_rate_*`.
 *
 * @module
 */
import type { RateRefundRequest, RateState, RateTakeRequest, RateTakeResult } from '../../../ports/coordinator.js';
import { assertInteger, toNumber, type CoordinationCalls } from './calls.js';

interface TakeRow {
  readonly allowed: boolean;
  readonly charged: boolean | null;
  readonly refused_index: number | null;
  readonly refused_count: number | null;
  readonly retry_after_ms: string | null;
}

/**
 * The rate calls. One log of starts per key (several windows on one key are views of it); a
 * start taken at `t` leaves a window of `periodMs` at `t + periodMs` on the database clock.
 */
export class PostgresRates {
  readonly #calls: CoordinationCalls;

  /** @param calls - The coordinator's SQL calls. */
  constructor(calls: CoordinationCalls) {
    this.#calls = calls;
  }

  /**
   * See `Coordinator.rateTake`: one call that checks every window and charges all of them, or
   * none; a resent id is not charged twice.
   *
   * @throws RangeError on a window `limit` (≥ 0) or `periodMs` (≥ 1) that is not such an integer.
   */
  async take(request: RateTakeRequest): Promise<RateTakeResult> {
    for (const window of request.windows) {
      assertInteger('limit', window.limit, 0);
      assertInteger('periodMs', window.periodMs, 1);
    }
    if (request.windows.length === 0) return { allowed: true };
    const row = await this.#calls.one<TakeRow>('rate-take', 'rate_take', [
      request.id,
      request.windows.map((window) => window.key),
      request.windows.map((window) => window.limit),
      request.windows.map((window) => window.periodMs),
    ]);
    if (row.allowed) return row.charged === false ? { allowed: true, charged: false } : { allowed: true };
    const window = request.windows[(row.refused_index ?? 1) - 1];
    if (window === undefined) throw new RangeError(`coord_rate_take refused unknown window ${row.refused_index}`);
    return {
      allowed: false,
      window,
      count: row.refused_count ?? 0,
      retryAfterMs: toNumber(row.retry_after_ms ?? window.periodMs),
    };
  }

  /** See `Coordinator.rateRefund`: one call; the start leaves every log it was charged to. */
  async refund(request: RateRefundRequest): Promise<void> {
    if (request.windows.length === 0) return;
    await this.#calls.one('rate-refund', 'rate_refund', [request.id, request.windows.map((window) => window.key)]);
  }

  /** See `Coordinator.rateState`. @throws RangeError on a `periodMs` that is not an integer ≥ 1. */
  async state(key: string, periodMs: number): Promise<RateState> {
    assertInteger('periodMs', periodMs, 1);
    const row = await this.#calls.one<{ count: number; reset_in_ms: string }>('rate-state', 'rate_state', [
      key,
      periodMs,
    ]);
    return { key, count: row.count, resetInMs: toNumber(row.reset_in_ms) };
  }
}
