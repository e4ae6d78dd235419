/**
 * Coordination keys the engine builds for an execution (not declared by a reactor): its liveness
 * lock, its cross-process cancel request, the wait lists, a debounce slot.
 *
 * @module
 */

/** The key of an execution's cross-process cancel request (checked by the worker running it). */
export const cancelRequestKey = (executionId: string): string => `cancel:${executionId}`;

/** The key of an execution's liveness lock (one worker at a time). */
export const livenessKey = (executionId: string): string => `execution:${executionId}`;

/**
 * The wait list of executions parked on `key` of `primitive` (`lock:<key>`, …; `async:<unitId>`
 * for the readers of an async unit): a release, or the unit's end, promotes their jobs.
 */
export const waitListKey = (primitive: string, key: string): string => `${primitive}:${key}`;

/**
 * The coordination key of a debounce slot: the latest start of `reactor` with debounce key `key`
 * (docs/decisions/086), held as a lock owned by that start for its window.
 */
export const debounceKey = (reactor: string, key: string): string => `debounce:${reactor}:${key}`;
