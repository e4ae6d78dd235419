import type { HolderInfo, LockAcquireRequest } from './coordinator.js';
import type { ExecutionRecord } from './store.js';

/** What a worker asks for when it takes up one job of an execution. */
export interface JobEnterRequest {
  /** The execution's liveness lock: its key, this delivery's holder, the lease. */
  readonly lease: LockAcquireRequest;
  /** The record read once the lease is taken. */
  readonly executionId: string;
  /** The period marker that says an operator asked to cancel the execution. */
  readonly cancel: { readonly key: string; readonly bucket: string };
}

/** The answer of {@link JobLeases.enterJob}. */
export type JobEnterResult =
  | {
      readonly acquired: true;
      /** The record as it was once the lease was taken (undefined: expired or never written). */
      readonly record: ExecutionRecord | undefined;
      readonly cancelRequested: boolean;
    }
  | { readonly acquired: false; readonly holder: HolderInfo | undefined; readonly ttlMs: number };

/**
 * The two moments of a worker's job that touch both the store and the coordinator, each as one
 * call (docs/decisions/040). A backend whose store and coordinator share one server answers
 * each in one round trip; without one the engine composes them from `Store` and `Coordinator`
 * calls (`engine/jobs/job-lease.ts`), with the same observable outcome.
 */
export interface JobLeases {
  /**
   * Takes the liveness lock like `Coordinator.lockAcquire`; when it is taken, also reads the
   * record (after the acquisition: whatever the previous holder wrote before releasing is seen)
   * and whether the cancel marker is set. A refusal reads nothing.
   */
  enterJob(request: JobEnterRequest): Promise<JobEnterResult>;
  /**
   * While `owner` holds the lock `key`: saves `record` like `Store.save`, then releases one level
   * of that lock like `Coordinator.lockRelease`, atomically where the backend can. The record is
   * written before the lock is free, so the next holder reads it. When `owner` no longer holds
   * the lock nothing is written and it throws `LeaseLostError` (docs/decisions/064). When the save
   * fails nothing is released; when it throws after the save, the caller releases again (harmless).
   */
  saveAndRelease(record: ExecutionRecord, key: string, owner: string): Promise<void>;
  /**
   * Saves `record` like `Store.save` only while `owner` holds the lock `key` (the execution's
   * liveness lease): a worker's checkpoint. Otherwise nothing is written and it throws
   * `LeaseLostError`. The Redis backend checks and writes in one script, the Postgres one in one SQL function; the composed version
   * checks, then writes, in two calls (exact where no other process shares the backend).
   */
  saveFenced(record: ExecutionRecord, key: string, owner: string): Promise<void>;
}
