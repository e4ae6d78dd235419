/**
 * What a pausing node (an interrupt, a wait for an event) answers when it is reached again: it
 * completed, a resume has come (it completes now with the payload), or it still waits. The
 * first time it is reached there is none of these, and the node registers its wait.
 *
 * @module
 */
import type { NodeOutcome } from '../../model/outcome.js';
import type { RunState } from '../../run/run-state.js';
import type { StepPlace } from '../../run/step-runner.js';

/** The outcome of a pausing node reached again, or `undefined` the first time it is reached. */
export function reachedAgain(run: RunState, place: StepPlace): NodeOutcome | undefined {
  const recorded = run.stepRecord(place.path);
  const entry = { step: place.path, undo: async () => undefined }; // a wait has nothing to undo
  if (recorded?.status === 'completed') return { kind: 'success', value: recorded.result, entry };
  if (run.replayOnly) return { kind: 'skipped', value: undefined }; // a rollback replay: it never completed
  const waiting = run.interrupts.find((w) => w.step === place.path);
  if (waiting?.resumedAt !== undefined) {
    run.setStep(place.path, { status: 'completed', attempts: 1, result: waiting.payload });
    run.emit({ type: 'step.succeeded', step: place.path, attempt: 1, reactor: place.reactor });
    return { kind: 'success', value: waiting.payload, entry };
  }
  // Still waiting (another wait of the execution was resumed).
  if (waiting) return { kind: 'yield', step: place.path, suspension: { kind: 'pause', waits: [waiting] } };
  return undefined;
}
