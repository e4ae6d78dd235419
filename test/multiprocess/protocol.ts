/**
 * What the multi-process test and its worker processes share: the worker's JSON config, the
 * lines it prints, and the names of the guard and hold keys.
 */
export type WorkerMode = 'lock' | 'semaphore' | 'ordered' | 'hold';

export interface WorkerConfig {
  readonly url: string;
  /** Key prefix of the backend; every process of one test uses the same. */
  readonly prefix: string;
  readonly mode: WorkerMode;
  /** The coordination key (in `hold` mode: the base of three keys, see {@link holdKeys}). */
  readonly key: string;
  /** Base name of the guard keys in Redis. */
  readonly guard: string;
  readonly runs?: number;
  readonly concurrency?: number;
  /** Semaphore limit (mode `semaphore`). */
  readonly limit?: number;
  /** Lease TTL / poison timeout in ms. */
  readonly ttlMs?: number;
  /** How long a run waits for its turn, ms. */
  readonly waitMs?: number;
}

/** One entry into the critical section, as logged in Redis (the `log` list, in entry order). */
export interface GuardEntry {
  readonly pid: number;
  /** The guard value on entry: how many runs were inside, this one included. */
  readonly inside: number;
  /** Fencing token of the lock (mode `lock`). */
  readonly token?: string | undefined;
  /** Ordered-lock position (mode `ordered`). */
  readonly nonce?: number | undefined;
}

/** The result line of modes lock / semaphore / ordered. */
export interface WorkerResult {
  readonly pid: number;
  readonly completed: number;
  readonly failed: number;
  readonly other: number;
  /** The largest guard value this process observed on entry. */
  readonly maxInside: number;
  /** The first failure messages (at most 3). */
  readonly errors: readonly string[];
}

/** The line printed in `hold` mode once every hold is taken. */
export interface HoldingLine {
  readonly holding: true;
  readonly pid: number;
  readonly executionId: string;
  readonly token: string | undefined;
}

/** The guard keys of one test. */
export function guardKeys(guard: string): { cur: string; max: string; total: string; log: string } {
  return { cur: `${guard}:cur`, max: `${guard}:max`, total: `${guard}:total`, log: `${guard}:log` };
}

/** The three keys `hold` mode takes. */
export function holdKeys(key: string): { lock: string; semaphore: string; ordered: string } {
  return { lock: `${key}:lock`, semaphore: `${key}:sem`, ordered: `${key}:ord` };
}
