/**
 * The `resume` action: answers an interrupt a paused execution waits at with a JSON payload,
 * through `engine.resume`. An invalid payload is refused by the engine with `ResumePayloadError`
 * (and counted toward the interrupt's `maxAttempts`); a valid one continues the run.
 *
 * @module
 */
import type { ExecutionAction } from './action-types.js';

/** Resumes a paused execution at one of its interrupts (`step`, needed when it waits at several). */
export const resumeAction: ExecutionAction = Object.freeze<ExecutionAction>({
  name: 'resume',
  label: 'Resume',
  description:
    "Answers the interrupt with the payload: it is validated against the interrupt's schema and becomes the step's result, then the run continues (here, or in a worker). An invalid payload changes nothing but counts toward the interrupt's maxAttempts; the last one allowed rolls the run back and ends it failed.",
  // Only interrupts: a wait for an event is resumed by a sent event, never by `engine.resume`.
  appliesTo: (e) =>
    e.status === 'paused' &&
    e.pausedOn === undefined &&
    (e.interrupts === undefined || e.interrupts.some((i) => i.event === undefined)),
  fields: Object.freeze([
    { name: 'step', label: 'Interrupt step (needed when it waits at several)', kind: 'text' as const },
    { name: 'payload', label: 'Payload (JSON)', kind: 'json' as const, required: true },
  ]),
  perform: async ({ engine, execution, fields }) => {
    const step = fields['step'];
    const result = await engine.resume(execution.id, fields['payload'], typeof step === 'string' ? { step } : {});
    return { executionId: result.executionId, status: result.status };
  },
});
