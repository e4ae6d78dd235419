/**
 * The rate limit of the memory coordinator: an exact sliding log of starts per key.
 *
 * @module
 */
import type { RateRefundRequest, RateState, RateTakeRequest, RateTakeResult } from '../../../ports/coordinator.js';
import { assertInteger, type PrimitiveContext } from './context.js';
import type { Sweepable } from './sweep.js';

interface RateStart {
  readonly id: string;
  readonly at: number;
}

interface RateLog {
  /** The longest period this key was used with: starts older than it are dead for any reader. */
  periodMs: number;
  readonly starts: RateStart[];
}

/**
 * The rate logs, one per key; several windows on one key are views of the same log. A start taken
 * at `t` leaves a window of `periodMs` at `t + periodMs`.
 */
export class MemoryRates implements Sweepable {
  readonly #context: PrimitiveContext;
  readonly #rates = new Map<string, RateLog>();

  /** @param context - The shared tick and notifier. */
  constructor(context: PrimitiveContext) {
    this.#context = context;
  }

  /**
   * See `Coordinator.rateTake`: charges every window at once or none; a resent id is not charged twice.
   *
   * @throws RangeError on a window `limit` (≥ 0) or `periodMs` (≥ 1) that is not such an integer.
   */
  take(request: RateTakeRequest): RateTakeResult {
    for (const window of request.windows) {
      assertInteger('limit', window.limit, 0);
      assertInteger('periodMs', window.periodMs, 1);
    }
    const now = this.#context.tick();
    const logs = request.windows.map((window) => this.#starts(window.key, window.periodMs, now));
    // A start already charged (a resend of the same id) is admitted without a second charge.
    if (logs.some((starts) => starts.some((start) => start.id === request.id)))
      return { allowed: true, charged: false };
    for (const [index, window] of request.windows.entries()) {
      const starts = logs[index] ?? [];
      if (starts.length < window.limit) continue;
      const oldest = starts[0];
      const retryAfterMs = oldest === undefined ? window.periodMs : oldest.at + window.periodMs - now;
      return { allowed: false, window, count: starts.length, retryAfterMs };
    }
    // One log of starts per key; several windows on one key are views of it, so a start is logged once per key.
    const charged = new Set<string>();
    for (const window of request.windows) {
      const log = this.#rates.get(window.key) ?? { periodMs: window.periodMs, starts: [] };
      log.periodMs = Math.max(log.periodMs, window.periodMs);
      if (!charged.has(window.key)) log.starts.push({ id: request.id, at: now });
      charged.add(window.key);
      this.#rates.set(window.key, log);
    }
    return { allowed: true };
  }

  /** See `Coordinator.rateRefund`: the start leaves every log it was charged to. */
  refund(request: RateRefundRequest): void {
    for (const window of request.windows) {
      const log = this.#rates.get(window.key);
      if (log === undefined) continue;
      const at = log.starts.findIndex((start) => start.id === request.id);
      if (at >= 0) log.starts.splice(at, 1);
      if (log.starts.length === 0) this.#rates.delete(window.key);
    }
  }

  /** See `Coordinator.rateState`. @throws RangeError on a `periodMs` that is not an integer ≥ 1. */
  state(key: string, periodMs: number): RateState {
    assertInteger('periodMs', periodMs, 1);
    const now = this.#context.tick();
    const starts = this.#starts(key, periodMs, now);
    const oldest = starts[0];
    return { key, count: starts.length, resetInMs: oldest === undefined ? 0 : oldest.at + periodMs - now };
  }

  /** The keys with a start inside their longest window, with that window's length (for the inspector). */
  liveKeys(): { key: string; periodMs: number }[] {
    const now = this.#context.tick();
    const live: { key: string; periodMs: number }[] = [];
    for (const [key, log] of this.#rates) {
      pruneStarts(log, now);
      if (log.starts.length > 0) live.push({ key, periodMs: log.periodMs });
    }
    return live;
  }

  /** Drops starts no window can still see, and keys left with none. */
  sweep(now: number): void {
    for (const [key, log] of this.#rates) {
      pruneStarts(log, now);
      if (log.starts.length === 0) this.#rates.delete(key);
    }
  }

  /** The starts of `key` inside the window of `periodMs` ending now, oldest first. */
  #starts(key: string, periodMs: number, now: number): readonly RateStart[] {
    const log = this.#rates.get(key);
    if (log === undefined) return [];
    // A start leaves the window `periodMs` after it was taken: at `now`, starts at ≤ now − period are out.
    pruneStarts(log, now);
    const firstLive = log.starts.findIndex((start) => start.at > now - periodMs);
    return firstLive === -1 ? [] : log.starts.slice(firstLive);
  }
}

/** Drops the starts no window of this key can still see. */
function pruneStarts(log: RateLog, now: number): void {
  const firstLive = log.starts.findIndex((start) => start.at > now - log.periodMs);
  log.starts.splice(0, firstLive === -1 ? log.starts.length : firstLive);
}
