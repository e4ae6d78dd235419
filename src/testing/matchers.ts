/**
 * Matcher logic over run results, independent of any test runner (the Vitest binding is in
 * `vitest.ts`). Every matcher reads the run's event trace or its step states.
 *
 * @module
 */
import type { ReactorEvent } from '../engine/model/events.js';
import type { RunResult } from '../engine/model/results.js';
import { EVENT_ID_TAG, EVENT_NAME_TAG } from '../engine/api/event-triggers.js';
import { parseEventCancelReason } from '../engine/api/event-cancels.js';

/** A matcher verdict. */
export interface Verdict {
  readonly pass: boolean;
  readonly message: string;
}

function isRun(value: unknown): value is RunResult {
  return typeof value === 'object' && value !== null && 'status' in value && 'trace' in value && 'executionId' in value;
}

function guard(received: unknown, check: (run: RunResult) => Verdict): Verdict {
  return isRun(received)
    ? check(received)
    : { pass: false, message: `expected a ts-reactor run result, got ${typeof received}` };
}

function steps(trace: readonly ReactorEvent[], type: ReactorEvent['type']): string[] {
  return trace.filter((e) => e.type === type).map((e) => (e as { step: string }).step);
}

function describe(run: RunResult): string {
  if (run.status === 'failed') return `failed at ${String(run.failedStep)}: ${run.error.message}`;
  if (run.status === 'halted') return `halted at ${run.haltedStep} (${run.reason})`;
  return run.status;
}

/** The matchers by name. */
export const runMatchers = {
  toHaveCompleted: (received: unknown): Verdict =>
    guard(received, (run) => ({
      pass: run.status === 'completed',
      message: `expected the run to have completed; it ${describe(run)}`,
    })),
  toHaveFailedAt: (received: unknown, step: string): Verdict =>
    guard(received, (run) => ({
      pass: run.status === 'failed' && run.failedStep === step,
      message: `expected the run to have failed at "${step}"; it ${describe(run)}`,
    })),
  toHaveHalted: (received: unknown, reason?: string): Verdict =>
    guard(received, (run) => ({
      pass: run.status === 'halted' && (reason === undefined || run.reason === reason),
      message: `expected the run to have halted${reason === undefined ? '' : ` with reason "${reason}"`}; it ${describe(run)}`,
    })),
  toHaveSkipped: (received: unknown, step: string): Verdict =>
    guard(received, (run) => ({
      pass: steps(run.trace, 'step.skipped').includes(step),
      message: `expected step "${step}" to have been skipped; skipped: [${steps(run.trace, 'step.skipped').join(', ')}]`,
    })),
  toHaveRetried: (received: unknown, step: string, times: number): Verdict =>
    guard(received, (run) => {
      const n = steps(run.trace, 'step.retrying').filter((s) => s === step).length;
      return {
        pass: n === times,
        message: `expected step "${step}" to have been retried ${times} time(s); it was retried ${n}`,
      };
    }),
  toHaveCompensated: (received: unknown, expected: readonly string[]): Verdict =>
    guard(received, (run) => order(steps(run.trace, 'step.compensated'), expected, 'compensated')),
  toHaveUndone: (received: unknown, expected: readonly string[]): Verdict =>
    guard(received, (run) => order(steps(run.trace, 'step.undone'), expected, 'undone')),
  toHaveStepResult: (
    received: unknown,
    step: string,
    value: unknown,
    equals: (a: unknown, b: unknown) => boolean,
  ): Verdict =>
    guard(received, (run) => {
      const record = run.steps[step];
      return {
        pass: record?.status === 'completed' && equals(record.result, value),
        message: `expected step "${step}" to have returned ${JSON.stringify(value)}; it ${record ? `is ${record.status} with ${JSON.stringify(record.result)}` : 'never ran'}`,
      };
    }),
  toBePaused: (received: unknown, step?: string): Verdict =>
    guard(received, (run) => {
      const waits = run.status === 'paused' ? run.interrupts.map((i) => i.step) : [];
      const onFailure = run.status === 'paused' && run.pausedOn?.kind === 'failure' ? run.pausedOn.step : undefined;
      return {
        pass: run.status === 'paused' && onFailure === undefined && (step === undefined || waits.includes(step)),
        message: `expected the run to be paused${step === undefined ? '' : ` at "${step}"`}; it ${onFailure !== undefined ? `is paused on the failure of "${onFailure}"` : run.status === 'paused' ? `is paused at [${waits.join(', ')}]` : describe(run)}`,
      };
    }),
  toBePausedOnFailure: (received: unknown, step?: string): Verdict =>
    guard(received, (run) => {
      const on = run.status === 'paused' ? run.pausedOn : undefined;
      const failed = on?.kind === 'failure' ? on.step : undefined;
      return {
        pass: failed !== undefined && (step === undefined || failed === step),
        message: `expected the run to be paused on the failure of ${step === undefined ? 'a step' : `"${step}"`}; it ${failed !== undefined ? `is paused on the failure of "${failed}"` : run.status === 'paused' ? 'is paused at an interrupt' : describe(run)}`,
      };
    }),
  toHaveResumed: (received: unknown, step: string): Verdict =>
    guard(received, (run) => ({
      pass: steps(run.trace, 'interrupt.resumed').includes(step),
      message: `expected interrupt "${step}" to have been resumed; resumed: [${steps(run.trace, 'interrupt.resumed').join(', ')}]`,
    })),
  toHaveRollbackFailure: (
    received: unknown,
    expected: { step: string; kind?: string; reason?: string; key?: string },
  ): Verdict =>
    guard(received, (run) => ({
      pass: run.rollbackFailures.some((f) =>
        Object.entries(expected).every(
          ([k, v]) => v === undefined || (f as unknown as Record<string, unknown>)[k] === v,
        ),
      ),
      message: `expected a rollback failure matching ${JSON.stringify(expected)}; got ${JSON.stringify(run.rollbackFailures)}`,
    })),
  toBeStartedByEvent: (received: unknown, expected: { name?: string; id?: string } = {}): Verdict =>
    guard(received, (run) => {
      const by = { name: run.tags?.[EVENT_NAME_TAG], id: run.tags?.[EVENT_ID_TAG] };
      const pass =
        by.name !== undefined &&
        (expected.name === undefined || by.name === expected.name) &&
        (expected.id === undefined || by.id === expected.id);
      return {
        pass,
        message: `expected the run to have been started by an event${expected.name === undefined ? '' : ` "${expected.name}"`}${expected.id === undefined ? '' : ` with id "${expected.id}"`}; it ${by.name === undefined ? 'was not started by an event' : `was started by "${by.name}" (${by.id ?? 'id not tagged'})`}`,
      };
    }),
  toHaveBeenCancelledByEvent: (received: unknown, name?: string, eventId?: string): Verdict =>
    guard(received, (run) => {
      const by = run.status === 'cancelled' ? parseEventCancelReason(run.reason) : undefined;
      const wanted = `${name === undefined ? 'an event' : `event "${name}"`}${eventId === undefined ? '' : ` (id "${eventId}")`}`;
      return {
        pass:
          by !== undefined &&
          (name === undefined || by.name === name) &&
          (eventId === undefined || by.eventId === eventId),
        message: `expected the run to have been cancelled by ${wanted}; it ${by !== undefined ? `was cancelled by event "${by.name}" (id "${by.eventId}")` : run.status === 'cancelled' ? `was cancelled: ${run.reason}` : describe(run)}`,
      };
    }),
  toBeWaitingForEvent: (received: unknown, name?: string): Verdict =>
    guard(received, (run) => {
      const waits = eventWaits(run);
      const wanted = name === undefined ? 'an event' : `event "${name}"`;
      const seen =
        waits.length > 0
          ? `waits for ${waits.map((w) => `"${w.event}" at "${w.step}"`).join(', ')}`
          : run.status === 'paused' && run.pausedOn?.kind === 'failure'
            ? `is paused on the failure of "${run.pausedOn.step}"`
            : run.status === 'paused'
              ? `is paused at interrupts [${run.interrupts.map((i) => i.step).join(', ')}], none a wait for an event`
              : describe(run);
      return {
        pass: waits.some((w) => name === undefined || w.event === name),
        message: `expected the run to be paused waiting for ${wanted}; it ${seen}`,
      };
    }),
  toHaveContendedAt: (received: unknown, step: string, key?: string): Verdict =>
    guard(received, (run) => {
      const seen = contentions(run.trace);
      return {
        pass: seen.some((c) => c.step === step && (key === undefined || c.key === key)),
        message: `expected the run to have been contended at step "${step}"${key === undefined ? '' : ` on key "${key}"`}; contentions: ${JSON.stringify(seen)}`,
      };
    }),
};

/** The `.waitForEvent` steps a paused run still waits at, with the event each waits for (its open waits that name one). */
function eventWaits(run: RunResult): { step: string; event: string }[] {
  if (run.status !== 'paused' || run.pausedOn?.kind === 'failure') return [];
  return run.interrupts.flatMap((i) => (i.event === undefined ? [] : [{ step: i.step, event: i.event }]));
}

/**
 * Where a run met a busy key: a wait that ran out (`coordination.contended`), a full rate limit
 * (`coordination.denied`, `rate_limited`) or a park in a worker (`run.parked`).
 */
function contentions(trace: readonly ReactorEvent[]): { step: string | undefined; key: string; how: string }[] {
  const out: { step: string | undefined; key: string; how: string }[] = [];
  for (const e of trace) {
    if (e.type === 'coordination.contended' || (e.type === 'coordination.denied' && e.reason === 'rate_limited'))
      out.push({ step: e.step, key: e.key, how: e.type });
    else if (e.type === 'run.parked') out.push({ step: e.step, key: e.key, how: e.type });
  }
  return out;
}

function order(actual: readonly string[], expected: readonly string[], what: string): Verdict {
  const pass = actual.length === expected.length && actual.every((s, i) => s === expected[i]);
  return { pass, message: `expected steps ${what} in order [${expected.join(', ')}]; got [${actual.join(', ')}]` };
}
