/**
 * Small, named updates of an execution's {@link BackgroundState} (its job count, what it waits
 * for, when its retry is due): each returns a new state and leaves the one it is given alone.
 *
 * @module
 */
import type { BackgroundState } from '../ports/store.js';

/** The background state of an execution accepted with its first job (`<executionId>:1`). */
export const FIRST_JOB: BackgroundState = Object.freeze({ jobs: 1, contention: 0 });

/** The background state of an execution no job was enqueued for yet (an inline run). */
export const NO_JOB: BackgroundState = Object.freeze({ jobs: 0, contention: 0 });

/** The fields of a {@link BackgroundState} that can be cleared (all but the counters). */
export type ClearableField = Exclude<keyof BackgroundState, 'jobs' | 'contention'>;

/** What `run` has as background state, or `none` (default {@link FIRST_JOB}) when it has none. */
export function backgroundOf(
  run: { readonly background?: BackgroundState | undefined },
  none: BackgroundState = FIRST_JOB,
): BackgroundState {
  return run.background ?? none;
}

/** `background` without `fields` (the other fields keep their order). */
export function cleared(background: BackgroundState, ...fields: readonly ClearableField[]): BackgroundState {
  const rest: { -readonly [K in keyof BackgroundState]?: BackgroundState[K] } = { ...background };
  for (const field of fields) delete rest[field];
  return rest as BackgroundState;
}
