/**
 * The operator actions, as data: each has a name, a label, when it applies, optional form fields
 * and what it does. The dashboard renders buttons, confirm pages and API routes from these lists,
 * so a new action (e.g. resuming an interrupt with a payload) is one more entry passed to
 * `createDashboard({ actions })`.
 *
 * @module
 */
import type { ExecutionAction, OrderedLockAction } from './action-types.js';
import { failureActions } from './failure-actions.js';
import { resumeAction } from './resume-action.js';

export type { ActionField, ExecutionAction, ExecutionActionContext, OrderedLockAction } from './action-types.js';

const FINISHED_RETRYABLE = new Set(['failed', 'halted', 'cancelled', 'aborted']);
const UNFINISHED = new Set(['queued', 'running', 'parked', 'paused', 'rolling_back']);

/** Retry, cancel, undo, resume (an interrupt, with a JSON payload), and the actions on a failure pause: the built-in execution actions. */
export const executionActions: readonly ExecutionAction[] = Object.freeze([
  {
    name: 'retry',
    label: 'Retry',
    description:
      'Runs the reactor again with the same input, as a new execution linked to this one (retryOf). This execution stays as it is; its trace records the retry.',
    appliesTo: (e) => FINISHED_RETRYABLE.has(e.status),
    perform: ({ engine, execution }) => engine.retry(execution.id),
  },
  {
    name: 'cancel',
    label: 'Cancel',
    description:
      'Stops the execution: a queued or parked one is rolled back now (completed steps undone, newest first); one running in a worker gets a cancel request it acts on at its next liveness check.',
    danger: true,
    appliesTo: (e) => UNFINISHED.has(e.status),
    perform: ({ engine, execution, reason }) => engine.cancel(execution.id, { reason }),
  },
  {
    name: 'undo',
    label: 'Undo',
    description: 'Runs the undo of every completed step, newest first; the execution ends cancelled.',
    danger: true,
    appliesTo: (e) => e.status === 'completed',
    perform: ({ engine, execution, reason }) => engine.undo(execution.id, { reason }),
  },
  resumeAction,
  ...failureActions,
]);

/** Skip and reset: the built-in ordered-lock actions. */
export const orderedLockActions: readonly OrderedLockAction[] = Object.freeze([
  {
    name: 'skip',
    label: 'Skip head',
    description:
      'Passes over the position whose turn it is (e.g. a stuck or failed one), so the next position may enter.',
    danger: true,
    perform: (model, key) => model.orderedSkip(key),
  },
  {
    name: 'reset',
    label: 'Reset',
    description:
      'Starts a new epoch with fresh counters: every outstanding position of the old batch becomes stale and ends without running its turn.',
    danger: true,
    perform: (model, key) => model.orderedReset(key),
  },
]);
