/**
 * The memory coordinator's side of the inspector port: the live keys of each primitive store,
 * filtered by the glob and sorted like the Redis listing.
 *
 * @module
 */
import type { PrimitiveKind } from '../../../ports/coordinator.js';
import { globToRegExp, sortInspected, type InspectedKey, type InspectOptions } from '../../../ports/inspector.js';
import type { MemoryLocks } from './locks.js';
import type { MemoryOrdered } from './ordered.js';
import type { MemoryPeriods } from './periods.js';
import type { MemoryRates } from './rates.js';
import type { MemorySemaphores } from './semaphores.js';

/** The primitive stores an inspection reads. */
export interface InspectableStores {
  readonly locks: MemoryLocks;
  readonly semaphores: MemorySemaphores;
  readonly rates: MemoryRates;
  readonly periods: MemoryPeriods;
  readonly ordered: MemoryOrdered;
}

/** Lists the live keys of `kind` matching `options.pattern`, at most `options.limit`. */
export function inspectMemory(stores: InspectableStores, kind: PrimitiveKind, options: InspectOptions): InspectedKey[] {
  const all = liveOf(stores, kind);
  options.onProgress?.(all.length);
  const match = globToRegExp(options.pattern ?? '*');
  return sortInspected(all.filter((k) => match.test(k.key))).slice(0, options.limit ?? 1000);
}

function liveOf(stores: InspectableStores, kind: PrimitiveKind): InspectedKey[] {
  switch (kind) {
    case 'lock':
      return stores.locks.liveKeys().map((key) => ({ kind, key }));
    case 'semaphore':
      return stores.semaphores.liveKeys().map((key) => ({ kind, key }));
    case 'rate':
      return stores.rates.liveKeys().map(({ key, periodMs }) => ({ kind, key, periodMs }));
    case 'period':
      return stores.periods.liveKeys().map(({ key, bucket }) => ({ kind, key, bucket }));
    case 'ordered':
      return stores.ordered.liveKeys().map((key) => ({ kind, key }));
  }
}
