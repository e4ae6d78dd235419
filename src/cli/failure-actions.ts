/**
 * The actions of `ts-reactor executions` on an execution paused on a step's failure
 * (`onFailure: 'pause'`): `retry-step`, `skip-step`, `rollback` — and `fork` of a finished one
 * (or one paused on a failure). Entries of the same table as `execution-actions.ts`; the engine
 * refuses what does not fit (an interrupt's pause, a step that is not skippable, another action
 * on the same pause first) with a `FailureActionError`.
 *
 * @module
 */
import type { RunResult } from '../engine/model/results.js';
import { TERMINAL_STATUSES } from '../ports/store.js';
import type { ExecutionDetail } from '../ops/types.js';
import type { ExecutionActionCommand, OptionValues } from './execution-actions.js';
import { UsageError } from './worker.js';

const who = (e: ExecutionDetail): string => `execution ${e.id} (${e.reactor}, ${e.status})`;
const failed = (e: ExecutionDetail): string => (e.pausedOn ? `step "${e.pausedOn.step}"` : 'its failed step');
const became = (result: RunResult): string =>
  `execution ${result.executionId} is ${result.status}${result.status === 'failed' ? `: ${result.error.message}` : ''}${result.status === 'queued' ? ' (a worker continues it)' : ''}`;
const PAUSED_HINT = 'only an execution paused on a step failure (onFailure: pause) can be steered';

/** `--<name> <json>`, parsed; undefined when not given. @throws UsageError on bad JSON (exit 2). */
function json(values: OptionValues, name: string): unknown {
  const raw = values[name];
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch (error) {
    throw new UsageError(`--${name} is not JSON: ${(error as Error).message}`, false);
  }
}

const retryStep: ExecutionActionCommand = {
  kind: 'action',
  usage: '[--args <json>]',
  summary: 'run the failed step of an execution paused on a failure again (with these arguments); the run goes on',
  options: { args: { type: 'string' } },
  appliesTo: ['paused'],
  hint: PAUSED_HINT,
  question: (e) => `Run ${failed(e)} of ${who(e)} again and continue?`,
  prepare: (values) => {
    const args = json(values, 'args');
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
      throw new UsageError('--args must be a JSON object of argument values', false);
    return (engine, id) =>
      engine.retryStep(id, args === undefined ? {} : { args: args as Readonly<Record<string, unknown>> });
  },
  done: (_id, result) => `step retried: ${became(result)}`,
};

const skipStep: ExecutionActionCommand = {
  kind: 'action',
  usage: '--value <json>',
  summary: "continue an execution paused on a skippable step's failure with this value as its result",
  options: { value: { type: 'string' } },
  appliesTo: ['paused'],
  hint: PAUSED_HINT,
  question: (e) => `Skip ${failed(e)} of ${who(e)} with this value as its result?`,
  prepare: (values) => {
    if (typeof values['value'] !== 'string')
      throw new UsageError('executions skip-step: missing --value <json>', false);
    const value = json(values, 'value');
    return (engine, id) => engine.skipStep(id, { value });
  },
  done: (_id, result) => `step skipped: ${became(result)}`,
};

const rollback: ExecutionActionCommand = {
  kind: 'action',
  usage: '',
  summary:
    'roll back an execution paused on a failure: compensate the failed step, undo the completed ones newest first',
  options: {},
  appliesTo: ['paused'],
  hint: PAUSED_HINT,
  question: (e) => `Roll ${who(e)} back? ${failed(e)} is compensated and every completed step undone, newest first.`,
  prepare: () => (engine, id) => engine.rollback(id),
  done: (_id, result) => `rolled back: ${became(result)}`,
};

const fork: ExecutionActionCommand = {
  kind: 'action',
  usage: '--step <name> [--input <json>]',
  summary: 'start a new linked execution that reuses the results before <name> and runs from there',
  options: { step: { type: 'string' }, input: { type: 'string' } },
  appliesTo: [...TERMINAL_STATUSES, 'paused'],
  hint: 'only a finished execution, or one paused on a failure, can be forked',
  question: (e) => `Start a new execution from this step of ${who(e)}, reusing the results before it?`,
  prepare: (values) => {
    const step = values['step'];
    if (typeof step !== 'string' || step === '')
      throw new UsageError('executions fork: missing --step <name> (the step it runs from)', false);
    const input = json(values, 'input');
    return (engine, id) => engine.fork(id, { fromStep: step, ...(input === undefined ? {} : { input }) });
  },
  done: (id, result) => `forked ${id}: new ${became(result)}`,
};

/** The actions on a failure pause, and fork, by subcommand name. */
export const FAILURE_ACTIONS: Readonly<Record<string, ExecutionActionCommand>> = Object.freeze({
  'retry-step': retryStep,
  'skip-step': skipStep,
  rollback,
  fork,
});
