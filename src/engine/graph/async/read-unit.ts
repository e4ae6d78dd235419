/**
 * Readers of an async unit's result: an in-process caller waits (bounded), a worker waits
 * briefly and then parks its execution until the unit finishes (woken by the unit's terminal
 * record, like wake-on-release).
 *
 * @module
 */
import { AsyncWaitTimeoutError, ReactorError, errorFromJSON } from '../../../errors.js';
import { AsyncPendingError } from '../../model/async/pending.js';
import type { Clock } from '../../../ports/clock.js';
import { TERMINAL_STATUSES, type ExecutionRecord, type Store } from '../../../ports/store.js';
import type { NodeOutcome } from '../../model/outcome.js';
import { errorSummary, type RunState } from '../../run/run-state.js';
import type { StepPlace } from '../../run/step-runner.js';
import type { UnitSignals } from '../../run/async/port.js';

/** Where the reader is and what it reads. */
export interface Reading {
  readonly unitId: string;
  readonly dispatchedAt: number;
}

/** The unit's outcome as this node's outcome, once it is known; a timeout or a park otherwise. */
export async function readUnit(run: RunState, place: StepPlace, reading: Reading): Promise<NodeOutcome> {
  const port = run.async!;
  const store = port.background!.store;
  const inline = run.mode !== 'worker';
  const started = run.clock.now();
  if (inline)
    run.emit({ type: 'async.waiting', step: place.path, reactor: place.reactor, unitId: reading.unitId, mode: 'wait' });
  const record = await waitTerminal(
    store,
    port.signals,
    reading.unitId,
    inline ? port.waitMs : port.workerWaitMs,
    run.clock,
    place.signal,
    inline ? port.settled : undefined,
  );
  if (record) return adopt(run, place, reading, record);
  if (place.signal.aborted) return { kind: 'skipped', value: undefined };
  const deadline = reading.dispatchedAt + port.parkTimeoutMs;
  if (inline || run.clock.now() >= deadline) {
    const waitedMs = inline ? run.clock.now() - started : run.clock.now() - reading.dispatchedAt;
    return timedOut(
      run,
      place,
      reading,
      new AsyncWaitTimeoutError({
        reactor: place.reactor,
        step: place.path,
        unitId: reading.unitId,
        waitedMs,
        mode: inline ? 'wait' : 'park',
      }),
    );
  }
  run.emit({ type: 'async.waiting', step: place.path, reactor: place.reactor, unitId: reading.unitId, mode: 'park' });
  return {
    kind: 'yield',
    step: place.path,
    suspension: { kind: 'awaitUnit', error: new AsyncPendingError(reading.unitId, place.path, deadline) },
  };
}

/**
 * Polls the unit's record until it is terminal, woken early by an in-process signal; undefined
 * after `boundMs`. With `settled` (a test engine's pool), the pool runs what it can before any
 * clock time is spent waiting.
 */
export async function waitTerminal(
  store: Store,
  signals: UnitSignals,
  unitId: string,
  boundMs: number,
  clock: Clock,
  signal?: AbortSignal,
  settled?: (until: number) => Promise<void>,
): Promise<ExecutionRecord | undefined> {
  const deadline = clock.now() + boundMs;
  let poll = 5;
  for (;;) {
    let record = await store.get(unitId);
    if (record && TERMINAL_STATUSES.has(record.status)) return record;
    if (settled) {
      await settled(deadline);
      record = await store.get(unitId);
      if (record && TERMINAL_STATUSES.has(record.status)) return record;
    }
    const left = deadline - clock.now();
    if (left <= 0 || signal?.aborted) return undefined;
    await signals.wait(unitId, Math.min(left, poll), clock);
    poll = Math.min(poll * 2, 200);
  }
}

function adopt(run: RunState, place: StepPlace, reading: Reading, record: ExecutionRecord): NodeOutcome {
  const link = { unitId: reading.unitId, dispatchedAt: reading.dispatchedAt };
  if (record.status === 'completed') {
    run.setStep(place.path, { status: 'completed', attempts: 1, result: record.value, ...link });
    run.emit({ type: 'step.succeeded', step: place.path, attempt: 1, reactor: place.reactor });
    // The unit is its own work: the dispatcher's rollback never undoes it (docs/decisions/011).
    return { kind: 'success', value: record.value, entry: { step: place.path, undo: async () => undefined } };
  }
  if (record.status === 'halted') {
    const reason = record.haltReason ?? 'halted';
    run.setStep(place.path, { status: 'halted', attempts: 1, ...link });
    run.emit({ type: 'step.halted', step: place.path, reason, reactor: place.reactor });
    return {
      kind: 'halt',
      step: place.path,
      reason,
      ...(record.haltData === undefined ? {} : { data: record.haltData }),
    };
  }
  const error = record.error
    ? errorFromJSON(record.error)
    : new ReactorError(
        'async_unit_failed',
        `async unit ${reading.unitId} ended ${record.status}${record.cancelReason === undefined ? '' : `: ${record.cancelReason}`}`,
        { details: { unitId: reading.unitId, status: record.status } },
      );
  run.setStep(place.path, { status: 'failed', attempts: 1, error: errorSummary(error), ...link });
  run.emit({
    type: 'step.failed',
    step: place.path,
    attempt: 1,
    error: errorSummary(error),
    started: true,
    reactor: place.reactor,
  });
  // The unit ran its own compensate in its own job: the dispatcher does not compensate it again.
  return { kind: 'failure', step: place.path, error, validation: [], compensate: undefined };
}

function timedOut(run: RunState, place: StepPlace, reading: Reading, error: AsyncWaitTimeoutError): NodeOutcome {
  run.setStep(place.path, {
    status: 'failed',
    attempts: 0,
    error: errorSummary(error),
    unitId: reading.unitId,
    dispatchedAt: reading.dispatchedAt,
  });
  run.emit({
    type: 'step.failed',
    step: place.path,
    attempt: 0,
    error: errorSummary(error),
    started: false,
    reactor: place.reactor,
  });
  return { kind: 'failure', step: place.path, error, validation: [], compensate: undefined };
}
