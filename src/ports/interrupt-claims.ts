/**
 * The InterruptClaims port: the two atomic claims interrupts need, implemented by the memory
 * store and the Redis store (a Lua script and `SET NX`). Kept apart from {@link Store} so a store
 * without interrupts still satisfies the Store port.
 *
 * @module
 */

/** The outcome of a claim: won, or already held by someone else. */
export type Claim = { readonly claimed: true } | { readonly claimed: false; readonly holder: string };

/** Atomic claims for interrupts. */
export interface InterruptClaims {
  /**
   * Claims `correlationId` for `executionId` (unique across executions). Claiming it again for the
   * same execution answers claimed; `replace` takes it over from that holder only (a stale claim
   * of an execution that no longer waits on it).
   */
  claimCorrelation(correlationId: string, executionId: string, options?: { readonly replace?: string }): Promise<Claim>;
  /** The execution holding `correlationId`, if any. */
  correlation(correlationId: string): Promise<string | undefined>;
  /**
   * Claims the resume of one interrupt of one execution for `ttlMs`: of concurrent claimants
   * exactly one wins. The claim is a lease over the short window until the winner has written
   * the payload into the record (which is what answers later resumes "already resumed"); a
   * winner that dies in that window lets the claim expire, and a later resume can win.
   */
  claimResume(executionId: string, step: string, claimant: string, ttlMs: number): Promise<Claim>;
  /** Gives a resume claim back (owner-checked), when its winner could not write the payload. */
  releaseResume(executionId: string, step: string, claimant: string): Promise<void>;
}

/** True when `value` implements {@link InterruptClaims}. */
export function hasInterruptClaims(value: unknown): value is InterruptClaims {
  const v = value as Partial<InterruptClaims> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.claimCorrelation === 'function' &&
    typeof v.correlation === 'function' &&
    typeof v.claimResume === 'function' &&
    typeof v.releaseResume === 'function'
  );
}
