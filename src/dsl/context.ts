/** A pino-compatible logger: every method takes either `(message)` or `(fields, message)`. */
export interface Logger {
  debug(fields: object | string, message?: string): void;
  info(fields: object | string, message?: string): void;
  warn(fields: object | string, message?: string): void;
  error(fields: object | string, message?: string): void;
}

/** What every step hook receives besides its arguments. */
export interface StepContext {
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
}
