/**
 * The semaphore of the Redis coordinator: leases, one per owner, in a ZSET and its meta hash
 * (`semaphore-*` scripts).
 *
 * @module
 */
import type { SemaphoreAcquireRequest, SemaphoreAcquireResult, SemaphoreState } from '../../../ports/coordinator.js';
import { settleAfterOutage } from '../script.js';
import { scripts } from '../scripts.js';
import { assertInteger, assertPositiveInteger, type RedisContext } from './context.js';
import { parseHolder } from './holder.js';

/** The semaphore transitions; a lost reply of a counted call is settled from the leases (docs/decisions/065). */
export class RedisSemaphores {
  readonly #context: RedisContext;

  /** @param context - The connection, keys and script runner. */
  constructor(context: RedisContext) {
    this.#context = context;
  }

  /** See `Coordinator.semaphoreAcquire`. @throws RangeError on a `ttlMs` or `limit` that is not a whole number in range. */
  async acquire(request: SemaphoreAcquireRequest): Promise<SemaphoreAcquireResult> {
    assertPositiveInteger('ttlMs', request.ttlMs);
    assertInteger('limit', request.limit, 0);
    const keys = this.#keys(request.key);
    const args = [request.holder.owner, request.limit, request.ttlMs, JSON.stringify(request.holder)];
    try {
      return await this.#context.run(scripts.semaphoreAcquire, keys, args);
    } catch (error) {
      // Lost reply: a lease of this owner means the lost call took it (re-entering the same semaphore twice in one execution is the exception, counted once).
      return settleAfterOutage<SemaphoreAcquireResult>(
        this.#context.redis,
        'semaphore-acquire',
        error,
        async () => {
          const { leases } = await this.#context.run(scripts.semaphoreState, keys, []);
          const lease = leases.find((l) => l.owner === request.holder.owner);
          return lease === undefined ? undefined : { acquired: true, nesting: lease.nesting, holders: leases.length };
        },
        () => this.#context.run(scripts.semaphoreAcquire, keys, args),
      );
    }
  }

  /** See `Coordinator.semaphoreRelease`. */
  async release(key: string, owner: string): Promise<{ readonly released: boolean; readonly nesting: number }> {
    const keys = this.#keys(key);
    const args = [owner, this.#context.keys.semaphoreChannel(key)];
    try {
      return await this.#context.run(scripts.semaphoreRelease, keys, args);
    } catch (error) {
      // Lost reply: no lease of this owner left means the lost call released it; a lease left, that it did not (a nested one is the exception).
      return settleAfterOutage<{ readonly released: boolean; readonly nesting: number }>(
        this.#context.redis,
        'semaphore-release',
        error,
        async () =>
          (await this.#context.run(scripts.semaphoreState, keys, [])).leases.some((l) => l.owner === owner)
            ? undefined
            : { released: true, nesting: 0 },
        () => this.#context.run(scripts.semaphoreRelease, keys, args),
      );
    }
  }

  /** See `Coordinator.semaphoreExtend`. @throws RangeError on a `ttlMs` that is not an integer ≥ 1. */
  async extend(key: string, owner: string, ttlMs: number): Promise<boolean> {
    assertPositiveInteger('ttlMs', ttlMs);
    return this.#context.run(scripts.semaphoreExtend, this.#keys(key), [owner, ttlMs]);
  }

  /** See `Coordinator.semaphoreState`. */
  async state(key: string, limit?: number): Promise<SemaphoreState> {
    const reply = await this.#context.run(scripts.semaphoreState, this.#keys(key), []);
    return {
      key,
      limit: limit ?? reply.limit ?? 0,
      holders: reply.leases.map((lease) => ({
        holder: parseHolder(lease.holderJson, lease.owner),
        nesting: lease.nesting,
        ttlMs: lease.ttlMs,
      })),
    };
  }

  #keys(key: string): [string, string] {
    return [this.#context.keys.semaphore(key), this.#context.keys.semaphoreMeta(key)];
  }
}
