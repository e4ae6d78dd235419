/**
 * Whether any key exists under a key prefix: a worker (or an operations command) started with
 * another prefix than its app's finds nothing to do, and says so.
 *
 * @module
 */
import type { Redis } from 'ioredis';

/** SCAN rounds at most: a keyspace larger than this is not worth scanning for a hint. */
const MAX_ROUNDS = 50;

/**
 * True when a key named `<prefix>:…` exists, false when none does, `undefined` when the keyspace
 * is too large to tell within a few SCAN rounds.
 */
export async function prefixHasKeys(redis: Pick<Redis, 'scan'>, prefix: string): Promise<boolean | undefined> {
  let cursor = '0';
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${escapeGlob(prefix)}:*`, 'COUNT', 1_000);
    if (keys.length > 0) return true;
    if (next === '0') return false;
    cursor = next;
  }
  return undefined;
}

/** `text` with Redis glob characters escaped, so that it matches only itself. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
