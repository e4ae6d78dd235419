/**
 * The `executionsByStatus` gauge's source over a store: how many executions are not finished,
 * by state. A parked execution whose wait is a sleep step counts as `sleeping`, apart from
 * the ones parked on a busy key, a fan-out map or an async unit (`parked`). Counting reads the
 * records (a store's status indexes may hold entries that moved on), so it is bounded
 * ({@link ExecutionCountsOptions.cap}) and a count is reused for a while
 * ({@link ExecutionCountsOptions.maxAgeMs}) instead of being read again at every scrape.
 *
 * @module
 */
import { statusName, type ExecutionStatus, type Store } from '../ports/store.js';

/** The states counted: the unfinished statuses by name (`queued`: stored `pending`), with `sleeping` split from `parked` and `paused_on_failure` from `paused`. */
export const COUNTED_STATES = [
  'queued',
  'running',
  'parked',
  'sleeping',
  'paused',
  'paused_on_failure',
  'rolling_back',
] as const;

/** Options of {@link executionCounts}. */
export interface ExecutionCountsOptions {
  /** Records read per status at most (parked and sleeping share one status); past it, the count stops there. Default 10,000. */
  readonly cap?: number;
  /** A count younger than this is returned again without reading the store. Default 5,000 ms. */
  readonly maxAgeMs?: number;
  /** The time in ms, for the count's age. Default `Date.now`. */
  readonly now?: () => number;
}

const PAGE = 1_000;
const STATUSES: readonly ExecutionStatus[] = ['pending', 'running', 'parked', 'paused', 'rolling_back'];

/**
 * A gauge source (`GaugeSources.executionsByStatus`) that counts the unfinished executions of
 * `store` by state: queued, running, parked, sleeping, paused, paused_on_failure (a step failed
 * under `onFailure: 'pause'`), rolling_back.
 *
 * @example
 * ```ts
 * import { createRedisBackend } from 'ts-reactor/redis';
 * import { executionCounts, prometheusMetrics } from 'ts-reactor/metrics';
 * const { store } = createRedisBackend({ url });
 * const metrics = prometheusMetrics({ gauges: { executionsByStatus: executionCounts(store) } });
 * ```
 */
export function executionCounts(
  store: Pick<Store, 'list'>,
  options: ExecutionCountsOptions = {},
): () => Promise<Readonly<Record<string, number>>> {
  const cap = options.cap ?? 10_000;
  const maxAgeMs = options.maxAgeMs ?? 5_000;
  const now = options.now ?? Date.now;
  if (!Number.isSafeInteger(cap) || cap < 1) throw new RangeError(`cap must be a positive integer; got ${String(cap)}`);
  if (!Number.isFinite(maxAgeMs) || maxAgeMs < 0)
    throw new RangeError(`maxAgeMs must be a finite number >= 0; got ${String(maxAgeMs)}`);
  let last: { readonly at: number; readonly counts: Promise<Readonly<Record<string, number>>> } | undefined;
  return () => {
    const at = now();
    if (last === undefined || at - last.at >= maxAgeMs) {
      const counts = countAll(store, cap);
      last = { at, counts };
      counts.catch(() => {
        if (last?.counts === counts) last = undefined; // a failed read is not reused
      });
    }
    return last.counts;
  };
}

async function countAll(store: Pick<Store, 'list'>, cap: number): Promise<Readonly<Record<string, number>>> {
  const counts: Record<string, number> = Object.fromEntries(COUNTED_STATES.map((state) => [state, 0]));
  for (const status of STATUSES) {
    let cursor: string | undefined;
    let read = 0;
    do {
      const page = await store.list({ status, limit: Math.min(PAGE, cap - read), ...(cursor ? { cursor } : {}) });
      for (const record of page.records) {
        const state =
          status === 'parked' && record.background?.waitingFor?.primitive === 'sleep'
            ? 'sleeping'
            : status === 'paused' && record.pausedOn
              ? 'paused_on_failure'
              : statusName(status);
        counts[state] = (counts[state] ?? 0) + 1;
      }
      read += page.records.length;
      cursor = page.cursor;
    } while (cursor !== undefined && read < cap);
  }
  return counts;
}
