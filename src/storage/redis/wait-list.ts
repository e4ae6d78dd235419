/**
 * {@link WaitList} over Redis: one ZSET per key (`RedisKeys.waitList`), member = the parked job's id, score = its
 * arrival number. `add` appends with score = last score + 1 unless the id is already present
 * (one script, `wait-list-add.lua`, so "check, read the tail, append" is atomic); `shift` is `ZPOPMIN`,
 * `remove` is `ZREM`, `list` is `ZRANGE`. An emptied list disappears with its last member, so no
 * counter outlives it; a list nobody added to for `ttlMs` expires (its waiters' executions
 * have expired too).
 *
 * @module
 */
import type { RedisConnection } from './connection.js';
import type { WaitList } from '../../ports/wait-list.js';
import { runCommand, runScript } from './script.js';
import { scripts } from './scripts.js';
import { RedisKeys } from './keys.js';
import { positiveInteger } from '../positive-integer.js';

/** Default lifetime of a wait list without new waiters: 7 days (the default record TTL). */
export const DEFAULT_WAIT_LIST_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Options of {@link RedisWaitList}. */
export interface RedisWaitListOptions {
  /** The connection (never closed by the wait list). */
  readonly redis: RedisConnection;
  /** Key prefix (default `rx`). */
  readonly prefix?: string;
  /** How long a list lives after its last `add`; default {@link DEFAULT_WAIT_LIST_TTL_MS}. */
  readonly ttlMs?: number;
}

/** Wait lists in Redis, shared by every worker process. */
export class RedisWaitList implements WaitList {
  readonly redis: RedisConnection;
  readonly keys: RedisKeys;
  readonly ttlMs: number;

  constructor(options: RedisWaitListOptions) {
    this.redis = options.redis;
    this.keys = new RedisKeys(options.prefix);
    this.ttlMs = positiveInteger('ttlMs', options.ttlMs ?? DEFAULT_WAIT_LIST_TTL_MS);
  }

  async add(key: string, jobId: string): Promise<void> {
    await runScript(this.redis, scripts.waitListAdd, [this.keys.waitList(key)], [jobId, this.ttlMs]);
  }

  async shift(key: string): Promise<string | undefined> {
    // Sent again after a lost reply, ZPOPMIN takes the next waiter: the one popped by the lost call wakes by its fallback job instead.
    const reply = await runCommand('wait-list-shift', () => this.redis.zpopmin(this.keys.waitList(key)), this.redis);
    return reply[0];
  }

  async remove(key: string, jobId: string): Promise<void> {
    await runCommand('wait-list-remove', () => this.redis.zrem(this.keys.waitList(key), jobId), this.redis);
  }

  async list(key: string): Promise<readonly string[]> {
    return runCommand('wait-list-list', () => this.redis.zrange(this.keys.waitList(key), 0, -1), this.redis);
  }
}
