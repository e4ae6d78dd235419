/**
 * The rate limit of the Redis coordinator: a sliding log of starts per window (`rate-*` scripts);
 * on a cluster, a take over several keys is taken key by key (docs/decisions/091).
 *
 * @module
 */
import type { RateRefundRequest, RateState, RateTakeRequest, RateTakeResult } from '../../../ports/coordinator.js';
import { runCommand, type ScriptArg } from '../script.js';
import { scripts } from '../scripts.js';
import { assertInteger, assertPositiveInteger, type RedisContext } from './context.js';

/** The rate-limit transitions. */
export class RedisRates {
  readonly #context: RedisContext;

  /** @param context - The connection, keys and script runner. */
  constructor(context: RedisContext) {
    this.#context = context;
  }

  /** See `Coordinator.rateTake`. @throws RangeError on a window whose `limit` or `periodMs` is not a whole number in range. */
  async take(request: RateTakeRequest): Promise<RateTakeResult> {
    if (request.windows.length === 0) return { allowed: true };
    const args: ScriptArg[] = [request.id];
    for (const window of request.windows) {
      assertInteger('limit', window.limit, 0);
      assertPositiveInteger('periodMs', window.periodMs);
      args.push(window.limit, window.periodMs);
    }
    const { keys } = this.#context;
    if (keys.layout === 'cluster' && request.windows.some((w) => w.key !== request.windows[0]?.key))
      return this.#takeBySlot(request);
    const logs = request.windows.map((window) => keys.rate(window.key, window.periodMs));
    const reply = await this.#context.run(scripts.rateTake, logs, args);
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
  async #takeBySlot(request: RateTakeRequest): Promise<RateTakeResult> {
    const byKey = new Map<string, RateTakeRequest['windows'][number][]>();
    for (const window of request.windows) byKey.set(window.key, [...(byKey.get(window.key) ?? []), window]);
    const taken: RateTakeRequest['windows'][number][] = [];
    let already = false;
    for (const windows of byKey.values()) {
      const result = await this.take({ ...request, windows });
      if (!result.allowed) {
        if (taken.length > 0) await this.refund({ id: request.id, windows: taken });
        return result;
      }
      // A key the id was charged to already keeps that charge: a refund takes back only what this call charged.
      if (result.charged === false) already = true;
      else taken.push(...windows);
    }
    return already ? { allowed: true, charged: false } : { allowed: true };
  }

  /** See `Coordinator.rateState`. @throws RangeError on a `periodMs` that is not an integer ≥ 1. */
  async state(key: string, periodMs: number): Promise<RateState> {
    assertPositiveInteger('periodMs', periodMs);
    const reply = await this.#context.run(scripts.rateState, [this.#context.keys.rate(key, periodMs)], [periodMs]);
    return { key, ...reply };
  }

  /** See `Coordinator.rateRefund`. */
  async refund(request: RateRefundRequest): Promise<void> {
    const { redis, keys } = this.#context;
    // One ZREM per window log: each is atomic on its own, and a refund half done only leaves a charge that would have stayed anyway.
    await Promise.all(
      request.windows.map((window) =>
        runCommand('rate-refund', () => redis.zrem(keys.rate(window.key, window.periodMs), request.id), redis),
      ),
    );
  }
}
