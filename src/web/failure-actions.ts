/**
 * The actions on an execution paused on a step's failure (`onFailure: 'pause'`): retry the step
 * (optionally with replaced arguments), skip it with a value, roll the run back — and fork any
 * finished execution (or one paused on a failure) from a step. Each goes through the engine
 * (`retryStep`, `skipStep`, `rollback`, `fork`), which refuses the wrong status, a step that may
 * not be skipped or a second click on the same pause with a `FailureActionError`.
 *
 * @module
 */
import type { ExecutionAction } from './action-types.js';

const FINISHED = new Set(['completed', 'failed', 'halted', 'cancelled', 'aborted']);

/** True when the execution waits for an operator on a failed step. */
const pausedOnFailure = (e: Parameters<ExecutionAction['appliesTo']>[0]): boolean =>
  e.status === 'paused' && e.pausedOn !== undefined;

/** Retry step, skip step, roll back, fork. */
export const failureActions: readonly ExecutionAction[] = Object.freeze([
  {
    name: 'retry-step',
    label: 'Retry step',
    description:
      'Runs the failed step again (with these arguments, when given: they replace its own and are validated against its contract), then the run continues. Completed steps are not run again.',
    appliesTo: pausedOnFailure,
    fields: Object.freeze([{ name: 'args', label: 'Arguments (JSON object, optional)', kind: 'json' as const }]),
    perform: async ({ engine, execution, fields }) => {
      const args = fields['args'];
      const result = await engine.retryStep(
        execution.id,
        args === undefined ? {} : { args: args as Readonly<Record<string, unknown>> },
      );
      return { executionId: result.executionId, status: result.status };
    },
  },
  {
    name: 'skip-step',
    label: 'Skip step',
    description:
      "Continues the run with this value as the failed step's result, where the step is skippable (validated against its schema, if it has one). Nothing of the step is compensated or undone.",
    danger: true,
    appliesTo: pausedOnFailure,
    fields: Object.freeze([{ name: 'value', label: 'Result (JSON)', kind: 'json' as const, required: true }]),
    perform: async ({ engine, execution, fields }) => {
      const result = await engine.skipStep(execution.id, { value: fields['value'] });
      return { executionId: result.executionId, status: result.status };
    },
  },
  {
    name: 'rollback',
    label: 'Roll back',
    description:
      'Rolls the run back as an automatic failure would: the failed step is compensated, the completed steps are undone newest first, and the execution ends failed with the step’s error.',
    danger: true,
    appliesTo: pausedOnFailure,
    perform: async ({ engine, execution }) => {
      const result = await engine.rollback(execution.id);
      return { executionId: result.executionId, status: result.status };
    },
  },
  {
    name: 'fork',
    label: 'Fork',
    description:
      'Starts a new execution linked to this one that reuses the results of the steps before the given step (those that are neither it nor downstream of it, and completed here) and runs from there. With an input, it replaces this one; the reused results are kept as recorded.',
    appliesTo: (e) => FINISHED.has(e.status) || pausedOnFailure(e),
    fields: Object.freeze([
      { name: 'fromStep', label: 'From step', kind: 'text' as const, required: true },
      { name: 'input', label: 'Input (JSON, optional)', kind: 'json' as const },
    ]),
    perform: async ({ engine, execution, fields }) => {
      const input = fields['input'];
      const result = await engine.fork(execution.id, {
        fromStep: String(fields['fromStep']),
        ...(input === undefined ? {} : { input }),
      });
      return { executionId: result.executionId, status: result.status };
    },
  },
]);
