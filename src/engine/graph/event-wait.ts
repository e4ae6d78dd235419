/**
 * A `.waitForEvent` step inside a run. The first time it is reached it registers the wait in the
 * event-wait index (by event name and match key; the registration's `since`, on the backend's
 * clock, opens the window of events that match) and pauses the execution, holding nothing; once
 * an event resumed it (or its timeout gave a value), it completes with the payload. The re-check
 * of the event log after the park is written is `execution/event-wait/deliver.ts` (decision 149).
 *
 * @module
 */
import type { WaitForEventNode } from '../../dsl/definition.js';
import { ReactorError, toError } from '../../errors.js';
import { matchKeyOf } from '../../ports/event-waits.js';
import type { InterruptWait } from '../../ports/store.js';
import type { NodeOutcome } from '../model/outcome.js';
import type { RunState } from '../run/run-state.js';
import { notStarted, type StepPlace } from '../run/step-runner.js';
import { reachedAgain } from './interrupt/reached-again.js';

/** Runs a wait-for-event node: completes with the event that resumed it, or registers and pauses the execution. */
export async function runWaitForEvent(
  run: RunState,
  node: WaitForEventNode,
  place: StepPlace,
  resolve: () => Record<string, unknown>,
): Promise<NodeOutcome> {
  const spec = node.wait;
  const again = reachedAgain(run, place);
  if (again) return again;
  let wait: InterruptWait;
  try {
    const index = run.eventWaits;
    if (index === undefined)
      throw new ReactorError(
        'events_unsupported',
        `waitForEvent "${place.path}" needs an event-wait index: createEngine({ eventWaits }), or a runtime over a backend that has one`,
        { details: { operation: 'waitForEvent' } },
      );
    const args = resolve();
    const matchKey = matchKeyOf(spec.matchOn, args);
    // Registered before the park is written: an event sent from here on finds the wait (decision 149).
    const registered = await index.add({
      event: spec.event,
      matchKey,
      kind: 'resume',
      executionId: run.executionId,
      ref: place.path,
    });
    const now = run.clock.now();
    wait = {
      step: place.path,
      pausedAt: now,
      ...(spec.timeoutMs === undefined ? {} : { timeoutAt: now + spec.timeoutMs }),
      invalidAttempts: 0,
      event: { name: spec.event, matchKey, since: registered.since, args: structuredClone(args) },
    };
  } catch (error) {
    return notStarted(run, place.path, toError(error));
  }
  run.awaitInterrupt(wait);
  run.setStep(place.path, { status: 'running', attempts: 1 });
  run.emit({ type: 'step.started', step: place.path, attempt: 1, reactor: place.reactor });
  run.emit({
    type: 'wait.paused',
    step: place.path,
    reactor: place.reactor,
    event: spec.event,
    matchKey: wait.event!.matchKey,
    ...(wait.timeoutAt === undefined ? {} : { timeoutAt: wait.timeoutAt }),
  });
  return { kind: 'yield', step: place.path, suspension: { kind: 'pause', waits: [wait] } };
}
