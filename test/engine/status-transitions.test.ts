/**
 * The status table (docs/decisions/111): which live status may follow which, for which cause.
 * Every transition the engine writes is allowed; what no write makes is a typed
 * `StatusTransitionError` naming the cause, revived from its JSON.
 */
import { describe, expect, it } from 'vitest';
import { errorFromJSON, errorToJSON, StatusTransitionError } from '../../src/errors.js';
import { checkTransition, TRANSITIONS, type TransitionCause } from '../../src/engine/model/status-machine.js';
import type { ExecutionStatus } from '../../src/ports/store.js';

const ALL: readonly ExecutionStatus[] = [
  'pending',
  'running',
  'parked',
  'paused',
  'rolling_back',
  'completed',
  'failed',
  'halted',
  'cancelled',
  'aborted',
];
const LIVE: readonly ExecutionStatus[] = ['pending', 'running', 'parked', 'paused', 'rolling_back'];
const CAUSES: readonly TransitionCause[] = ['run', 'undo', 'element_undone'];

const allowed = (from: ExecutionStatus, to: ExecutionStatus, cause: TransitionCause): boolean => {
  try {
    checkTransition('e', from, to, cause);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(StatusTransitionError);
    return false;
  }
};

/** Transitions the engine's writes make, each with its cause (from the checkpoint call sites). */
const WRITTEN: readonly (readonly [ExecutionStatus, ExecutionStatus, TransitionCause])[] = [
  ['pending', 'running', 'run'], // a worker's first job
  ['pending', 'completed', 'run'], // the `running` write skipped inside a checkpoint interval
  ['pending', 'parked', 'run'], // a job refused on a busy key
  ['pending', 'paused', 'run'], // a worker reaches an interrupt
  ['pending', 'rolling_back', 'run'],
  ['pending', 'rolling_back', 'undo'], // a queued execution cancelled, or superseded
  ['pending', 'failed', 'run'],
  ['pending', 'halted', 'run'],
  ['pending', 'cancelled', 'run'],
  ['running', 'pending', 'run'], // a hand-off, a retry's later job
  ['running', 'parked', 'run'],
  ['running', 'paused', 'run'],
  ['running', 'rolling_back', 'run'],
  ['running', 'rolling_back', 'undo'],
  ['running', 'completed', 'run'],
  ['running', 'failed', 'run'],
  ['running', 'halted', 'run'],
  ['running', 'cancelled', 'run'],
  ['parked', 'running', 'run'], // woken
  ['parked', 'pending', 'run'],
  ['parked', 'paused', 'run'],
  ['parked', 'rolling_back', 'run'],
  ['parked', 'rolling_back', 'undo'],
  ['parked', 'completed', 'run'],
  ['parked', 'failed', 'run'],
  ['parked', 'halted', 'run'],
  ['parked', 'cancelled', 'run'],
  ['paused', 'pending', 'run'], // resumed in a worker
  ['paused', 'running', 'run'], // resumed here
  ['paused', 'completed', 'run'],
  ['paused', 'rolling_back', 'run'], // an interrupt's failure, an operator's rollback of a failure pause
  ['paused', 'rolling_back', 'undo'], // cancelled while paused, or past its deadline
  ['rolling_back', 'failed', 'run'],
  ['rolling_back', 'cancelled', 'run'],
  ['rolling_back', 'parked', 'run'], // waits on a fan-out map's elements being undone
  ['completed', 'rolling_back', 'undo'],
  ['completed', 'cancelled', 'element_undone'],
  ['halted', 'rolling_back', 'undo'],
  ['halted', 'cancelled', 'element_undone'],
];

describe('the status table', () => {
  it('allows every transition the engine writes, and a write of the status a record already has', () => {
    for (const [from, to, cause] of WRITTEN) expect(allowed(from, to, cause), `${from} → ${to} (${cause})`).toBe(true);
    for (const status of ALL) for (const cause of CAUSES) expect(allowed(status, status, cause)).toBe(true);
    for (const to of ALL) expect(allowed(undefined as unknown as ExecutionStatus, to, 'run')).toBe(true);
  });

  it('an undo from outside a run only starts a rollback', () => {
    for (const from of ALL)
      for (const to of ALL)
        if (from !== to && to !== 'rolling_back') expect(allowed(from, to, 'undo'), `${from} → ${to}`).toBe(false);
  });

  it('an undone fan-out element is a finished one: no live status follows for it', () => {
    for (const from of LIVE)
      for (const to of ALL) if (from !== to) expect(allowed(from, to, 'element_undone'), `${from} → ${to}`).toBe(false);
  });

  it('narrows the live statuses: no checkpoint aborts, a rollback never runs again, a pause never parks without running', () => {
    for (const from of LIVE) expect(allowed(from, 'aborted', 'run')).toBe(false);
    for (const to of ['running', 'paused', 'completed'] as const)
      expect(allowed('rolling_back', to, 'run')).toBe(false);
    expect(allowed('paused', 'parked', 'run')).toBe(false);
  });

  it('keeps finished statuses final but for an undo', () => {
    for (const from of ['failed', 'cancelled', 'aborted'] as const)
      expect(Object.keys(TRANSITIONS[from])).toEqual([from]);
    expect(allowed('completed', 'rolling_back', 'run')).toBe(false);
  });

  it('refuses with a typed error naming the cause, revived from its JSON', () => {
    let caught: unknown;
    try {
      checkTransition('e1', 'paused', 'parked', 'run');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StatusTransitionError);
    const error = caught as StatusTransitionError;
    expect(error.code).toBe('status_transition_invalid');
    expect(error.message).toBe('execution e1: status paused cannot become parked (written by run)');
    const revived = errorFromJSON(JSON.parse(JSON.stringify(errorToJSON(error))));
    expect(revived).toBeInstanceOf(StatusTransitionError);
    expect(revived.details).toEqual({ executionId: 'e1', from: 'paused', to: 'parked' });
  });
});
