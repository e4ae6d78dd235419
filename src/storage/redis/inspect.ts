/**
 * The Redis coordinator's side of the inspector port: SCAN (never KEYS) over the patterns
 * `keys.ts` builds, parsed back into user keys, re-checked against the glob, and filtered to live
 * state (a semaphore with a lease not yet expired, a rate log with a start inside its window).
 *
 * @module
 */
import { scanTargets, type RedisConnection } from './connection.js';
import type { PrimitiveKind } from '../../ports/coordinator.js';
import { globToRegExp, sortInspected, type InspectedKey, type InspectOptions } from '../../ports/inspector.js';
import type { RedisKeys } from './keys.js';
import { runCommand } from './script.js';

const SCAN_COUNT = 500;

/** Lists the live keys of `kind` matching `options.pattern` with SCAN. */
export async function inspectRedis(
  redis: RedisConnection,
  keys: RedisKeys,
  kind: PrimitiveKind,
  options: InspectOptions = {},
): Promise<InspectedKey[]> {
  const glob = options.pattern ?? '*';
  const limit = options.limit ?? 1000;
  const match = globToRegExp(glob);
  const found = new Map<string, InspectedKey>();
  let examined = 0;
  // Every master of a cluster holds its own keys; a single server is its own one target.
  for (const node of scanTargets(redis))
    for (const pattern of keys.scanPatterns(kind, glob)) {
      let cursor = '0';
      do {
        const [next, batch] = await runCommand('inspect-scan', () =>
          node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT),
        );
        cursor = next;
        examined += batch.length;
        for (const redisKey of batch) {
          const parsed = keys.parseScanned(kind, redisKey);
          if (parsed !== undefined && match.test(parsed.key)) found.set(redisKey, { kind, ...parsed });
        }
        options.onProgress?.(examined);
      } while (cursor !== '0');
    }
  const live = await keepLive(redis, keys, [...found.values()]);
  return sortInspected(live).slice(0, limit);
}

/** Drops semaphores whose leases all expired and rate logs with no start left in their window. */
async function keepLive(redis: RedisConnection, keys: RedisKeys, candidates: InspectedKey[]): Promise<InspectedKey[]> {
  const checked = candidates.filter((k) => k.kind === 'semaphore' || k.kind === 'rate');
  if (checked.length === 0) return candidates;
  const [seconds, micros] = await runCommand('inspect-time', () => redis.time());
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  // One command per key, sent together (a cluster's pipeline may not span slots).
  const counts = await runCommand('inspect-live', () =>
    Promise.all(
      checked.map((k) =>
        k.kind === 'semaphore'
          ? redis.zcount(keys.semaphore(k.key), `(${now}`, '+inf')
          : redis.zcount(keys.rate(k.key, k.periodMs ?? 1), `(${now - (k.periodMs ?? 1)}`, '+inf'),
      ),
    ),
  );
  const dead = new Set(checked.filter((_, i) => (counts[i] ?? 0) === 0));
  return candidates.filter((k) => !dead.has(k));
}
