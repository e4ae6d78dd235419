/**
 * The once-per-period marker of the Redis coordinator: one string per bucket, set with
 * `SET NX PX` (`period-mark`), read with plain commands.
 *
 * @module
 */
import type { PeriodMarkRequest } from '../../../ports/coordinator.js';
import { runCommand } from '../script.js';
import { scripts } from '../scripts.js';
import { assertPositiveInteger, type RedisContext } from './context.js';

/** The period-marker transitions. */
export class RedisPeriods {
  readonly #context: RedisContext;

  /** @param context - The connection, keys and script runner. */
  constructor(context: RedisContext) {
    this.#context = context;
  }

  /** See `Coordinator.periodIsMarked`. */
  async isMarked(key: string, bucket: string): Promise<boolean> {
    const { redis, keys } = this.#context;
    return (await runCommand('period-is-marked', () => redis.exists(keys.period(key, bucket)), redis)) === 1;
  }

  /** See `Coordinator.periodMark`. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  async mark(request: PeriodMarkRequest): Promise<boolean> {
    assertPositiveInteger('ttlMs', request.ttlMs);
    const note = request.note === undefined ? [] : [request.note];
    return this.#context.run(
      scripts.periodMark,
      [this.#context.keys.period(request.key, request.bucket)],
      [request.ttlMs, ...note],
    );
  }

  /** See `Coordinator.periodNote`: the marker string's value (`'1'` is a marker set without a note). */
  async note(key: string, bucket: string): Promise<string | undefined> {
    const { redis, keys } = this.#context;
    const value = await runCommand('period-note', () => redis.get(keys.period(key, bucket)), redis);
    return value === null || value === '1' ? undefined : value;
  }

  /** See `Coordinator.periodState`: the marker's ms left, `undefined` when unmarked. */
  async state(key: string, bucket: string): Promise<number | undefined> {
    const { redis, keys } = this.#context;
    const ttl = await runCommand('period-state', () => redis.pttl(keys.period(key, bucket)), redis);
    return ttl === -2 ? undefined : Math.max(ttl, 0);
  }
}
