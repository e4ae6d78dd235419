/**
 * The CoordinationInspector port: lists the keys a coordinator currently has state for, so
 * operators (the dashboard, `ts-reactor locks`) can see live holds without knowing the keys in
 * advance. Read only; implemented by the memory coordinator and the Redis coordinator (SCAN,
 * never KEYS). Both pass the same contract suite (`test/contract/ops-contract.ts`).
 *
 * @module
 */
import type { PrimitiveKind } from './coordinator.js';

/** One key with state, as listed by {@link CoordinationInspector.inspectKeys}. */
export interface InspectedKey {
  readonly kind: PrimitiveKind;
  /** The key as the caller built it (unescaped). */
  readonly key: string;
  /** Rate limits: the window length this log is kept for. */
  readonly periodMs?: number;
  /** Period markers: the bucket that is marked. */
  readonly bucket?: string;
}

/** Options of {@link CoordinationInspector.inspectKeys}. */
export interface InspectOptions {
  /**
   * A glob over keys: `*` matches any run of characters, `?` one character; every other
   * character is literal. Default `*`.
   */
  readonly pattern?: string;
  /** Stop after this many keys (default 1000). */
  readonly limit?: number;
  /** Called as the listing goes on with the number of backend entries examined so far. */
  readonly onProgress?: (examined: number) => void;
}

/**
 * Lists keys with live state: locks held, semaphores with a live lease, rate logs with a start
 * inside their window, marked period buckets, ordered locks that ever handed out a position.
 */
export interface CoordinationInspector {
  /** The keys of `kind` matching the options, sorted by key (then period or bucket). */
  inspectKeys(kind: PrimitiveKind, options?: InspectOptions): Promise<readonly InspectedKey[]>;
}

/** True when `value` (typically a Coordinator) also implements {@link CoordinationInspector}. */
export function isCoordinationInspector(value: unknown): value is CoordinationInspector {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { inspectKeys?: unknown }).inspectKeys === 'function'
  );
}

/**
 * Compiles an inspector glob (`*`, `?`, the rest literal) to an anchored regular expression.
 *
 * @example
 * ```ts
 * globToRegExp('account:*').test('account:42'); // true
 * ```
 */
export function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (const char of pattern)
    source += char === '*' ? '[\\s\\S]*' : char === '?' ? '[\\s\\S]' : char.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');
  return new RegExp(`^${source}$`, 'u');
}

/** Sorts listed keys by key, then period, then bucket (both backends list in this order). */
export function sortInspected(keys: InspectedKey[]): InspectedKey[] {
  return keys.sort((a, b) =>
    a.key < b.key
      ? -1
      : a.key > b.key
        ? 1
        : (a.periodMs ?? 0) - (b.periodMs ?? 0) || (a.bucket ?? '').localeCompare(b.bucket ?? ''),
  );
}
