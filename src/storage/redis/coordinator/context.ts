/**
 * What every part of the Redis coordinator shares: the command connection, the key builder, the
 * script runner and whether the coordinator is closed.
 *
 * @module
 */
import type { RedisConnection } from '../connection.js';
import type { RedisKeys } from '../keys.js';
import type { ScriptArg, ScriptDescriptor } from '../script.js';

/** The services a part gets from the `RedisCoordinator` facade. */
export interface RedisContext {
  /** The command connection. */
  readonly redis: RedisConnection;
  /** The key builder. */
  readonly keys: RedisKeys;
  /** Runs one script on `redis` (EVALSHA, riding an outage out; see `script.ts`). */
  readonly run: <R>(script: ScriptDescriptor<R>, keys: readonly string[], args: readonly ScriptArg[]) => Promise<R>;
  /** Whether the coordinator was closed: nothing new is listened to or handed over after that. */
  readonly closed: () => boolean;
}

/**
 * Durations are whole numbers of at least 1 ms, as on Redis (which refuses anything else).
 *
 * @throws RangeError when `value` is not a safe integer `>= 1`.
 */
export function assertPositiveInteger(name: string, value: number): void {
  assertInteger(name, value, 1);
}

/**
 * Durations and limits are whole numbers.
 *
 * @throws RangeError when `value` is not a safe integer `>= min`.
 */
export function assertInteger(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer >= ${min}; got ${String(value)}`);
}
