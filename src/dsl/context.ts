/** A pino-compatible logger: every method takes either `(message)` or `(fields, message)`. */
export interface Logger {
  debug(fields: object | string, message?: string): void;
  info(fields: object | string, message?: string): void;
  warn(fields: object | string, message?: string): void;
  error(fields: object | string, message?: string): void;
}

/**
 * What every step hook receives besides its arguments. `P` is what the step reports as progress
 * (`ctx.progress`): annotate the context to type it (`ctx: StepContext<{ done: number }>`).
 */
export interface StepContext<P = unknown> {
  /** This execution's id. */
  readonly executionId: string;
  /** The outermost execution's id: the same as `executionId` except in nested work. Coordination holds belong to it. */
  readonly rootExecutionId: string;
  /** The reactor running the step (for a composed child: the child's name). */
  readonly reactor: string;
  /** The step's name (inside compose and map: the path, e.g. `payment.charge`). */
  readonly step: string;
  /** 1 for the first attempt, 2 for the first retry … */
  readonly attempt: number;
  /** Aborted when the run stops early (a sibling failed, the caller aborted). */
  readonly signal: AbortSignal;
  /** A child logger carrying the execution id, reactor and step. */
  readonly logger: Logger;
  /**
   * The fencing token of a lock this execution holds: strictly increasing per key, so a
   * downstream store can reject writes from a holder that lost the lock. Without `key`, the
   * token of the only lock held (undefined when none or several).
   */
  fencingToken(key?: string): string | undefined;
  /** The keys this execution holds right now: `lock:<key>` and `semaphore:<key>` (limit-1 semaphores). */
  readonly heldKeys: ReadonlySet<string>;
  /**
   * Reports progress: publishes a `step.progress` event (execution, step, attempt, `data`) that
   * every watcher of the execution receives (`engine.watch`, the dashboard's stream), and keeps
   * it as the step's newest report on the record. Returns at once; nothing is awaited.
   *
   * @throws ProgressInvalidError (`progress_invalid`) when `data` has no JSON form or its JSON is
   *   over 16 KiB: nothing is published or kept.
   * @example
   * ```ts
   * run: async ({ rows }, ctx: StepContext<{ done: number; total: number }>) => {
   *   for (const [i, row] of rows.entries()) {
   *     await importRow(row);
   *     ctx.progress({ done: i + 1, total: rows.length });
   *   }
   * }
   * ```
   */
  progress(data: P): void;
}
