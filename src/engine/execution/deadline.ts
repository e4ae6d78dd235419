/**
 * A reactor's `deadline` (docs/time.md, "Deadlines"; docs/decisions/081): the instant it passes,
 * counted from the execution's creation (a delayed start's time when it has one), and a one-shot
 * timer on the engine clock that aborts a run's root signal with a {@link DeadlineExceededError}
 * when it passes. Aborted so, the run rolls back like a cancel and ends `cancelled` with the
 * error as its cause (`finish`, `cancelled`).
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import { DeadlineExceededError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import { JOB_FORMAT_VERSION, type JobQueue } from '../../ports/queue.js';
import type { BackgroundState } from '../../ports/store.js';
import type { RunState } from '../run/run-state.js';

/** What the deadline of an execution is computed from: its record, or a run state. */
export interface DeadlineSource {
  readonly id: string;
  readonly createdAt: number;
  readonly background?: BackgroundState | undefined;
}

/** An execution's deadline: the instant (engine clock, ms) and the reactor's option. */
export interface Deadline {
  readonly executionId: string;
  readonly deadlineAt: number;
  readonly deadlineMs: number;
}

/**
 * When `source`'s deadline counts from: its creation, or — a delayed start — its start time
 * (`background.startAt`), so the delay does not count against the deadline.
 */
export function deadlineOrigin(source: DeadlineSource): number {
  const startAt = source.background?.startAt;
  return startAt !== undefined && startAt > source.createdAt ? startAt : source.createdAt;
}

/** The deadline of an execution of `reactor`, or `undefined` when the reactor declares none. */
export function deadlineOf(
  reactor: Pick<AnyReactorDefinition, 'deadlineMs'>,
  source: DeadlineSource,
): Deadline | undefined {
  const deadlineMs = reactor.deadlineMs;
  if (deadlineMs === undefined) return undefined;
  return { executionId: source.id, deadlineAt: deadlineOrigin(source) + deadlineMs, deadlineMs };
}

/**
 * Aborts `root` with a {@link DeadlineExceededError} when `deadline` passes: at once when it has
 * passed already, else by a one-shot timer on `clock`. Returns the function that disarms the
 * timer (call it when the run or the job ends). A root aborted already is left alone.
 */
export function armDeadline(clock: Clock, deadline: Deadline | undefined, root: AbortController): () => void {
  if (deadline === undefined) return () => undefined;
  const fire = (): void => {
    if (!root.signal.aborted) root.abort(new DeadlineExceededError(deadline));
  };
  const left = deadline.deadlineAt - clock.now();
  if (left <= 0) {
    fire();
    return () => undefined;
  }
  let cancel: (() => void) | undefined = clock.every(left, () => {
    cancel?.();
    cancel = undefined;
    fire();
  });
  return () => {
    cancel?.();
    cancel = undefined;
  };
}

/** The {@link DeadlineExceededError} `signal` was aborted with, if that is why it was. */
export function deadlinePassed(signal: AbortSignal): DeadlineExceededError | undefined {
  const reason: unknown = signal.reason;
  return signal.aborted && reason instanceof DeadlineExceededError ? reason : undefined;
}

/**
 * Runs `fn` (an inline run of `state`) with the reactor's deadline armed on `root`: past it the
 * run's signal is aborted with a {@link DeadlineExceededError} and the run rolls back.
 */
export async function withDeadline<T>(
  state: RunState,
  reactor: Pick<AnyReactorDefinition, 'deadlineMs'>,
  root: AbortController,
  fn: () => Promise<T>,
): Promise<T> {
  const disarm = armStateDeadline(state, reactor, root);
  try {
    return await fn();
  } finally {
    disarm();
  }
}

/** {@link armDeadline} for the run of `state`: its deadline counted from the state's `createdAt` (or delayed start). */
export function armStateDeadline(
  state: RunState,
  reactor: Pick<AnyReactorDefinition, 'deadlineMs'>,
  root: AbortController,
): () => void {
  const source = { id: state.executionId, createdAt: state.createdAt, background: state.background };
  return armDeadline(state.clock, deadlineOf(reactor, source), root);
}

/** The id of an execution's deadline job (`<executionId>:deadline`). */
export function deadlineJobId(executionId: string): string {
  return `${executionId}:deadline`;
}

/**
 * Enqueues the deadline job of an execution of `reactor`, due at `deadline` (the fixed id makes it
 * idempotent: enqueued again, it is added once). A worker's job of it rolls the execution back
 * if it has not finished by then (`jobs/deadline-job.ts`).
 */
export async function enqueueDeadlineJob(
  deps: { readonly queue: JobQueue; readonly clock: Clock },
  reactor: string,
  deadline: Deadline,
): Promise<void> {
  await deps.queue.enqueue(
    { v: JOB_FORMAT_VERSION, executionId: deadline.executionId, reactor },
    {
      jobId: deadlineJobId(deadline.executionId),
      delayMs: Math.max(0, deadline.deadlineAt - deps.clock.now()),
    },
  );
}

/**
 * A paused execution (an interrupt) waits with no job running: with a queue, its deadline job
 * wakes it at the deadline — also when it paused inline and never had a job.
 */
export async function scheduleDeadlineOnPause(
  state: RunState,
  reactor: Pick<AnyReactorDefinition, 'deadlineMs' | 'name'>,
): Promise<void> {
  if (!state.queue || state.element !== undefined || state.unit !== undefined) return;
  const deadline = deadlineOf(reactor, {
    id: state.executionId,
    createdAt: state.createdAt,
    background: state.background,
  });
  if (deadline) await enqueueDeadlineJob({ queue: state.queue, clock: state.clock }, reactor.name, deadline);
}
