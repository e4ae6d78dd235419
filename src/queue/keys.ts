/**
 * The only place the queue layer builds Redis key names (BullMQ names its own keys under
 * `<prefix>:<queue name>:…`). A wait list lives in one key with a hash tag, so it sits in one
 * cluster slot: `<prefix>:{wait:<key>}`. The user-supplied key is escaped like every other key
 * of ts-reactor (see `storage/redis/keys.ts`).
 *
 * @module
 */
import { DEFAULT_PREFIX, escapeSegment } from '../storage/redis/keys.js';

/** Key names of the queue layer under one prefix. */
export class QueueKeys {
  /** The prefix every key starts with (default `rx`, shared with the Redis backend). */
  readonly prefix: string;

  constructor(prefix: string = DEFAULT_PREFIX) {
    if (prefix.length === 0 || /[{}\s]/.test(prefix)) {
      throw new RangeError(
        `redis key prefix must be non-empty, without braces or whitespace; got ${JSON.stringify(prefix)}`,
      );
    }
    this.prefix = prefix;
  }

  /** Wait list of `key`: ZSET job id → arrival number (FIFO). */
  waitList(key: string): string {
    return `${this.prefix}:{wait:${escapeSegment(key)}}`;
  }
}
