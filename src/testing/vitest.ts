/**
 * Vitest matchers for run results. Register them in one line, in a setup file or a test:
 *
 * ```ts
 * import 'ts-reactor/testing/vitest';
 * ```
 *
 * @module
 */
import { expect } from 'vitest';
import type { RunResult } from '../engine/model/results.js';
import { coordinationMatchers, type OrderedExpectation, type SemaphoreExpectation } from './coordination-matchers.js';
import { runMatchers, type Verdict } from './matchers.js';

type StepsIn<T> = T extends RunResult<unknown, infer S> ? (unknown extends S ? string : keyof S & string) : string;
/** A step path of the received run: a step name, or a nested path under one (`pay.charge`, `items[2]`). */
export type StepPath<T> = StepsIn<T> | `${StepsIn<T>}.${string}` | `${StepsIn<T>}[${number}]${string}`;

/** The ts-reactor matchers, typed by the received run result. */
export interface ReactorMatchers<T = unknown, R = unknown> {
  /** The run ended `completed`. */
  toHaveCompleted(): R;
  /** The run ended `failed` with this failing step. */
  toHaveFailedAt(step: StepPath<T>): R;
  /** The run ended `halted` (optionally with this reason). */
  toHaveHalted(reason?: string): R;
  /** This step returned `skip(...)`. */
  toHaveSkipped(step: StepPath<T>): R;
  /** This step was retried exactly `times` times (attempts = times + 1). */
  toHaveRetried(step: StepPath<T>, times: number): R;
  /** Exactly these steps were compensated, in this order. */
  toHaveCompensated(steps: readonly StepPath<T>[]): R;
  /** Exactly these steps were undone, in this order. */
  toHaveUndone(steps: readonly StepPath<T>[]): R;
  /** This step completed with a value deeply equal to `value`. */
  toHaveStepResult(step: StepPath<T>, value: unknown): R;
  /** A rollback failure matching every given field was reported. */
  toHaveRollbackFailure(expected: {
    step: StepPath<T>;
    kind?: 'compensate' | 'undo';
    reason?: string;
    key?: string;
  }): R;
  /**
   * The run ended `cancelled` by an event its reactor declares in `cancelOn` (its reason is
   * `cancelled by event <name> <id>`), of this name and id when given.
   */
  toHaveBeenCancelledByEvent(name?: string, eventId?: string): R;
  /** The run met a busy key at this step (optionally this key): a wait ran out, a rate limit was full, or the execution parked. */
  toHaveContendedAt(step: StepPath<T>, key?: string): R;
  /** Coordination state (await it): a lock or semaphore slot on `key` is held for this step. */
  toHaveHoldAttributedTo(key: string, step: string): Promise<R>;
  /**
   * The execution was started by a sent event (a reactor's `.on`): of this name and id, when given.
   * Reads the tags a start by event carries (`event.name`, `event`); a run result read after the
   * start (`engine.result`, `TestEngine.send`'s `runs`) has them.
   */
  toBeStartedByEvent(expected?: { readonly name?: string; readonly id?: string }): R;
  /**
   * The run is paused at a `.waitForEvent` step waiting for an event of this name (any event when
   * omitted). Reads the run's open waits and the `wait.paused` entries of its trace.
   */
  toBeWaitingForEvent(name?: string): R;
  /** The run is paused at an interrupt (at this step path, when given). */
  toBePaused(step?: StepPath<T>): R;
  /** A resume of this interrupt was accepted (`interrupt.resumed` is in the trace). */
  toHaveResumed(step: StepPath<T>): R;
  /** The run is paused on a step's failure (`onFailure: 'pause'`), on this step when given. */
  toBePausedOnFailure(step?: StepPath<T>): R;
  /** Coordination state (await it): the lock is held (by this owner, for this step). */
  toBeLockedBy(key: string, owner?: string, step?: string): Promise<R>;
  /** Coordination state (await it): semaphore slots held / available under `limit`. */
  toHaveSemaphoreSlots(key: string, expected: SemaphoreExpectation): Promise<R>;
  /** Coordination state (await it): starts counted in the rate window of `periodMs`. */
  toHaveRateCount(key: string, periodMs: number, count: number): Promise<R>;
  /** Coordination state (await it): the period bucket is marked. */
  toHavePeriodMarked(key: string, bucket: string): Promise<R>;
  /** Coordination state (await it): the ordered-lock cursor (`next`, `lastCompleted`, `inFlight`, `firstFailed`, `drained`). */
  toHaveOrderedState(key: string, expected: OrderedExpectation): Promise<R>;
}

declare module 'vitest' {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- must match Vitest's own declaration to merge
  interface Matchers<T = any> extends ReactorMatchers<T> {}
}

const toResult = (v: Verdict): { pass: boolean; message: () => string } => ({ pass: v.pass, message: () => v.message });

expect.extend({
  toHaveCompleted: (r: unknown) => toResult(runMatchers.toHaveCompleted(r)),
  toHaveFailedAt: (r: unknown, step: string) => toResult(runMatchers.toHaveFailedAt(r, step)),
  toHaveHalted: (r: unknown, reason?: string) => toResult(runMatchers.toHaveHalted(r, reason)),
  toHaveSkipped: (r: unknown, step: string) => toResult(runMatchers.toHaveSkipped(r, step)),
  toHaveRetried: (r: unknown, step: string, times: number) => toResult(runMatchers.toHaveRetried(r, step, times)),
  toHaveCompensated: (r: unknown, steps: readonly string[]) => toResult(runMatchers.toHaveCompensated(r, steps)),
  toHaveUndone: (r: unknown, steps: readonly string[]) => toResult(runMatchers.toHaveUndone(r, steps)),
  toHaveStepResult(r: unknown, step: string, value: unknown) {
    return toResult(runMatchers.toHaveStepResult(r, step, value, (a, b) => this.equals(a, b)));
  },
  toHaveRollbackFailure: (r: unknown, expected: { step: string }) =>
    toResult(runMatchers.toHaveRollbackFailure(r, expected)),
  toHaveBeenCancelledByEvent: (r: unknown, name?: string, eventId?: string) =>
    toResult(runMatchers.toHaveBeenCancelledByEvent(r, name, eventId)),
  toHaveContendedAt: (r: unknown, step: string, key?: string) => toResult(runMatchers.toHaveContendedAt(r, step, key)),
  toHaveHoldAttributedTo: async (c: unknown, key: string, step: string) =>
    toResult(await coordinationMatchers.toHaveHoldAttributedTo(c, key, step)),
  toBePaused: (r: unknown, step?: string) => toResult(runMatchers.toBePaused(r, step)),
  toBeStartedByEvent: (r: unknown, expected?: { name?: string; id?: string }) =>
    toResult(runMatchers.toBeStartedByEvent(r, expected)),
  toBeWaitingForEvent: (r: unknown, name?: string) => toResult(runMatchers.toBeWaitingForEvent(r, name)),
  toHaveResumed: (r: unknown, step: string) => toResult(runMatchers.toHaveResumed(r, step)),
  toBePausedOnFailure: (r: unknown, step?: string) => toResult(runMatchers.toBePausedOnFailure(r, step)),
  toBeLockedBy: async (c: unknown, key: string, owner?: string, step?: string) =>
    toResult(await coordinationMatchers.toBeLockedBy(c, key, owner, step)),
  toHaveSemaphoreSlots: async (c: unknown, key: string, expected: SemaphoreExpectation) =>
    toResult(await coordinationMatchers.toHaveSemaphoreSlots(c, key, expected)),
  toHaveRateCount: async (c: unknown, key: string, periodMs: number, count: number) =>
    toResult(await coordinationMatchers.toHaveRateCount(c, key, periodMs, count)),
  toHavePeriodMarked: async (c: unknown, key: string, bucket: string) =>
    toResult(await coordinationMatchers.toHavePeriodMarked(c, key, bucket)),
  toHaveOrderedState: async (c: unknown, key: string, expected: OrderedExpectation) =>
    toResult(await coordinationMatchers.toHaveOrderedState(c, key, expected)),
});
