/**
 * The WaitList port: the executions parked on a key, in the order they parked, so a release
 * wakes the first. Implementations: `MemoryWaitList` (`queue/memory.ts`), `RedisWaitList`
 * (`storage/redis/wait-list.ts`) and `PostgresWaitList` (`storage/postgres/wait-list.ts`). Without a wait list, a parked execution wakes by its fallback
 * job only.
 *
 * @module
 */

/** Executions parked on a key, first come first served (the wake list). */
export interface WaitList {
  /** Registers `jobId` (the parked execution's delayed job) as waiting on `key`; registering twice keeps one entry and its place. */
  add(key: string, jobId: string): Promise<void>;
  /** Removes and returns the first waiter of `key`, if any. */
  shift(key: string): Promise<string | undefined>;
  /** Removes `jobId` from `key`'s list (it was woken by its fallback timer, or cancelled). */
  remove(key: string, jobId: string): Promise<void>;
  /** The waiters of `key`, first first. */
  list(key: string): Promise<readonly string[]>;
}
