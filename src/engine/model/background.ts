/**
 * Small, named updates of an execution's {@link BackgroundState} (its job count, what it waits
 * for, when its retry is due): each returns a new state and leaves the one it is given alone.
 *
 * @module
 */
import type { BackgroundState, ExecutionTags } from '../../ports/store.js';

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

/** When a start's first job runs and with which priority (the checked start options, `api/start-options.ts`). */
export interface StartPlan {
  /** The first job's delay, in ms (0: at once). */
  readonly delayMs: number;
  /** The start time (engine clock, ms) of a start delayed into the future; absent otherwise. */
  readonly startAt?: number;
  /** The priority of every job of the execution; absent: none. */
  readonly priority?: number;
  /** A debounced start's key and window (ms); absent otherwise (docs/decisions/086). */
  readonly debounce?: { readonly key: string; readonly windowMs: number };
  /** The execution's tags, checked (absent: none). */
  readonly tags?: ExecutionTags;
}

/** `{ priority }` of an execution's background state, or nothing: what each of its jobs is enqueued with. */
export function priorityOf(background: BackgroundState | undefined): { readonly priority?: number } {
  return background?.priority === undefined ? {} : { priority: background.priority };
}

/**
 * `{ startAt }` of a delayed start not begun yet (its first job still to run), or nothing: what a
 * `queued` result and the operator views show.
 */
export function pendingStartOf(record: {
  readonly status: string;
  readonly background?: BackgroundState | undefined;
}): { readonly startAt?: number } {
  const background = record.background;
  if (record.status !== 'pending' || background?.startAt === undefined || background.jobs !== 1) return {};
  return { startAt: background.startAt };
}
