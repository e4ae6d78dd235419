/**
 * What P4 and its child processes share: the child config and the contended reactor.
 *
 * @module
 */
import { reactor, type AnyReactorDefinition } from '../../src/index.js';
import { now, section } from './children.js';
import type { P4BackendKind } from './p4-runtime.js';

/** The JSON config of a P4 child. */
export interface P4ChildConfig {
  readonly mode: 'worker' | 'mutex';
  /** Where the pairs run (default `redis`); on `postgres` the anchor is a SQL polling mutex. */
  readonly backend?: P4BackendKind;
  /** The Redis URL or the PostgreSQL connection string. */
  readonly url: string;
  /** The Redis key prefix, or the PostgreSQL schema, of the pair. */
  readonly prefix: string;
  /** The one contended key. */
  readonly key: string;
  readonly sectionMs: number;
  /** Worker concurrency (mode `worker`) or contenders in this process (mode `mutex`). */
  readonly concurrency: number;
  readonly parkFallbackMs: number;
  /** Mode `worker`: the coordinator's in-process lock hand-over (docs/decisions/037); default on. */
  readonly lockHandOff?: boolean;
  /** Mode `worker`: where the lock is declared (docs/decisions/054); default `reactor`. */
  readonly level?: LockLevel;
}

/** The anchor's table on PostgreSQL: one row per held key (created by the benchmark). */
export const SQL_MUTEX_TABLE = 'p4_sql_mutex';

/** The SQL polling mutex's retry interval: `redis-semaphore`'s default, so the two anchors poll alike. */
export const SQL_MUTEX_RETRY_MS = 10;

/** Where P4's lock is declared: on the whole reactor (`withLock`) or on its one step (`lock:`). */
export type LockLevel = 'reactor' | 'step';

/**
 * A reactor with one step, the critical section, under a lock on one key: declared on the reactor
 * (`withLock`, the default) or on the step itself (`lock:`, what quality-bars.md's P4 names).
 */
export function contendedReactor(
  key: string,
  sectionMs: number,
  onSection: (executionId: string, start: number, end: number) => void = () => undefined,
  level: LockLevel = 'reactor',
): AnyReactorDefinition {
  const lock = { key: () => key, ttl: '30s', wait: 0 } as const;
  const run = async (_args: unknown, ctx: { readonly executionId: string }): Promise<number> => {
    const start = now();
    await section(sectionMs);
    onSection(ctx.executionId, start, now());
    return 1;
  };
  if (level === 'step') return reactor('p4-contended-step').step('section', { lock, run }).returns('section');
  return reactor('p4-contended').withLock(lock).step('section', { run }).returns('section');
}
