/**
 * The period marker of the Postgres coordinator: "done once in this bucket", expiring at a
 * deadline on the database clock, in table `coord_periods`, through `coord_period_*`.
 *
 * @module
 */
import type { PeriodMarkRequest } from '../../../ports/coordinator.js';
import { assertInteger, toNumber, type CoordinationCalls } from './calls.js';

/** The period calls. */
export class PostgresPeriods {
  readonly #calls: CoordinationCalls;

  /** @param calls - The coordinator's SQL calls. */
  constructor(calls: CoordinationCalls) {
    this.#calls = calls;
  }

  /** See `Coordinator.periodIsMarked`. */
  async isMarked(key: string, bucket: string): Promise<boolean> {
    return (await this.#marker(key, bucket)) !== undefined;
  }

  /**
   * See `Coordinator.periodMark`: `true` when this call set the marker; a later mark changes
   * nothing (the first note and expiry stay).
   *
   * @throws RangeError on a `ttlMs` that is not an integer ≥ 1.
   */
  async mark(request: PeriodMarkRequest): Promise<boolean> {
    assertInteger('ttlMs', request.ttlMs, 1);
    const row = await this.#calls.one<{ coord_period_mark: boolean }>('period-mark', 'period_mark', [
      request.key,
      request.bucket,
      request.ttlMs,
      request.note ?? null,
    ]);
    return row.coord_period_mark;
  }

  /** See `Coordinator.periodNote`: the live marker's note, `undefined` when unmarked or set without one. */
  async note(key: string, bucket: string): Promise<string | undefined> {
    return (await this.#marker(key, bucket))?.note ?? undefined;
  }

  /** See `Coordinator.periodState`: the marker's remaining ms, `undefined` when unmarked. */
  async state(key: string, bucket: string): Promise<number | undefined> {
    const marker = await this.#marker(key, bucket);
    return marker === undefined ? undefined : toNumber(marker.ttl_ms);
  }

  async #marker(key: string, bucket: string): Promise<{ ttl_ms: string; note: string | null } | undefined> {
    const [row] = await this.#calls.rows<{ ttl_ms: string; note: string | null }>('period-state', 'period_state', [
      key,
      bucket,
    ]);
    return row;
  }
}
