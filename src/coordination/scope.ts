import type { CoordinationSpec } from '../dsl/coordination.js';
import type { Clock } from '../ports/clock.js';
import type { Coordinator, HolderInfo } from '../ports/coordinator.js';
import { CoordinationKeyError, type PrimitiveName } from '../errors.js';

/** A coordination event before the run stamps identity and time. */
export type CoordinationEmit = (event: {
  readonly type:
    | 'coordination.acquired'
    | 'coordination.released'
    | 'coordination.waiting'
    | 'coordination.contended'
    | 'coordination.denied'
    | 'coordination.extended'
    | 'coordination.lost';
  readonly primitive: PrimitiveName;
  readonly key: string;
  readonly [field: string]: unknown;
}) => void;

/** Everything the policy needs to take and keep holds for one reactor run or one step attempt. */
export interface CoordinationScope {
  readonly coordinator: Coordinator;
  readonly clock: Clock;
  readonly reactor: string;
  /** The declaring step; undefined at reactor level. */
  readonly step: string | undefined;
  readonly holder: HolderInfo;
  /** Unique per start (rate limits charge one slot per id, even if called twice). */
  readonly startId: string;
  readonly rateLimits: ReadonlyMap<string, readonly { readonly limit: number; readonly periodMs: number }[]>;
  /** The execution's held-key registry (`lock:<key>`, `semaphore:<key>` for limit-1 semaphores). */
  readonly heldKeys: Set<string>;
  /** Fencing tokens of the locks held, by key (the outermost acquisition's token). */
  readonly fencingTokens: Map<string, string>;
  readonly emit: CoordinationEmit;
  /** A position taken earlier for this work (background executions take it when accepted). */
  readonly orderedTicket?: { readonly key: string; readonly nonce: number; readonly epoch: number } | undefined;
  /** Called when a fresh ordered-lock position was taken (a step keeps it across attempts). */
  readonly onOrderedTicket?:
    ((ticket: { readonly key: string; readonly nonce: number; readonly epoch: number }) => void) | undefined;
  /**
   * Whether a position is handed back when the wait for the turn runs out. Default: only a
   * position taken by this admission (one given in `orderedTicket` is kept: the execution parks).
   */
  readonly handBackOnTimeout?: boolean | undefined;
  /** On a contention refusal after the ordered gate, keep the position (the execution parks with it). */
  readonly keepPositionOnRefusal?: boolean | undefined;
  /** Keep a given ordered position when a later primitive of the same admission is contended (the caller parks with it). */
  readonly keepOrderedOnContention?: boolean | undefined;
  /**
   * Re-adopt a lock or semaphore slot this owner still holds (kept across a step's park) instead
   * of acquiring it again: extended, registered, no second `coordination.acquired`.
   */
  readonly adopt?: boolean | undefined;
  /**
   * Keep a given ordered position on every release but `completed` and `failed` (a retry, a
   * halt, a skip, a refusal): the caller — an async unit — keeps it across its retries and hands
   * it back itself when it ends without completing or failing its turn.
   */
  readonly keepOrderedUntilFinal?: boolean | undefined;
  /** Called after a lock, semaphore slot or ordered turn was given back (wake-on-release). */
  readonly onReleased?: ((primitive: 'lock' | 'semaphore' | 'ordered_lock', key: string) => void) | undefined;
  /** Called once when a hold is found lost while working. */
  readonly onLost: (primitive: PrimitiveName, key: string) => void;
}

/** The kind names used in errors and events. */
export const PRIMITIVE: Record<CoordinationSpec['kind'], PrimitiveName> = {
  lock: 'lock',
  semaphore: 'semaphore',
  rate_limit: 'rate_limit',
  period: 'period',
  ordered_lock: 'ordered_lock',
};

/**
 * Computes a declaration's key from the validated arguments. A key function that throws, or
 * returns anything but a non-empty string, is a {@link CoordinationKeyError}: nothing runs.
 */
export function computeKey(
  spec: CoordinationSpec,
  args: unknown,
  scope: Pick<CoordinationScope, 'reactor' | 'step'>,
): string {
  const where = { reactor: scope.reactor, step: scope.step, primitive: PRIMITIVE[spec.kind] };
  if (spec.kind === 'rate_limit' && spec.key === undefined) return spec.name!;
  let key: unknown;
  try {
    key = (spec.key as (a: unknown) => unknown)(args);
  } catch (error) {
    throw new CoordinationKeyError(
      { ...where, problem: `the key function threw: ${error instanceof Error ? error.message : String(error)}` },
      error,
    );
  }
  if (typeof key !== 'string')
    throw new CoordinationKeyError({
      ...where,
      problem: `the key function returned ${key === null ? 'null' : typeof key}, not a string`,
    });
  if (key.length === 0)
    throw new CoordinationKeyError({ ...where, problem: 'the key function returned an empty string' });
  return spec.kind === 'rate_limit' && spec.name !== undefined ? `${spec.name}:${key}` : key;
}
