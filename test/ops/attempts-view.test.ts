/**
 * Every attempt of a step, with its worker and outcome, as the read model gives it to the
 * dashboard and `ts-reactor executions show` (docs/decisions/098): from the step's attempt log,
 * a lost worker's attempt included, with the errors and backoffs of the trace; a record written
 * before attempts were logged gets them from the trace alone.
 */
import { expect, test } from 'vitest';
import { attemptText } from '../../src/cli/ops-format.js';
import type { ExecutionRecord, ReactorEvent } from '../../src/index.js';
import { stepViews } from '../../src/ops/steps.js';

const base = { executionId: 'x', rootExecutionId: 'x', reactor: 'pay' } as const;

test('the attempt log gives each attempt its worker and outcome; the trace adds the retry', () => {
  const trace: ReactorEvent[] = [
    { ...base, at: 1, type: 'step.started', step: 'charge', attempt: 2 },
    {
      ...base,
      at: 2,
      type: 'step.retrying',
      step: 'charge',
      attempt: 3,
      delayMs: 50,
      error: { name: 'Error', message: 'declined' },
    },
    { ...base, at: 3, type: 'step.started', step: 'charge', attempt: 3 },
  ];
  const record = {
    v: 1,
    id: 'x',
    rootId: 'x',
    reactor: 'pay',
    status: 'completed',
    input: {},
    rollbackFailures: [],
    createdAt: 0,
    updatedAt: 4,
    trace,
    steps: {
      charge: {
        status: 'completed',
        attempts: 3,
        completedSeq: 1,
        runs: [
          { attempt: 1, worker: 'h-1/a', outcome: 'worker_lost', startedAt: 0, endedAt: 1 },
          { attempt: 2, worker: 'h-2/b', outcome: 'failed', startedAt: 1, endedAt: 2 },
          { attempt: 3, worker: 'h-2/b', outcome: 'succeeded', startedAt: 3, endedAt: 4 },
        ],
      },
    },
  } satisfies ExecutionRecord;
  const [charge] = stepViews(record);
  expect(charge?.attempts.map((a) => [a.attempt, a.outcome, a.worker, a.delayMs])).toEqual([
    [1, 'worker_lost', 'h-1/a', undefined],
    [2, 'retrying', 'h-2/b', 50],
    [3, 'succeeded', 'h-2/b', undefined],
  ]);
  expect(charge?.attempts.map(attemptText)).toEqual([
    'worker lost (started; the body may have run)  on h-1/a',
    'retrying  on h-2/b',
    'succeeded  on h-2/b',
  ]);
});

test('without an attempt log the trace gives the attempts, a lost one included', () => {
  const trace: ReactorEvent[] = [
    { ...base, at: 1, type: 'step.attempt_lost', step: 'ship', attempt: 1, outcome: 'may_have_run', worker: 'h-1/a' },
    { ...base, at: 2, type: 'step.started', step: 'ship', attempt: 2 },
    { ...base, at: 3, type: 'step.succeeded', step: 'ship', attempt: 2 },
  ];
  const record = {
    v: 1,
    id: 'x',
    rootId: 'x',
    reactor: 'pay',
    status: 'completed',
    input: {},
    rollbackFailures: [],
    createdAt: 0,
    updatedAt: 4,
    trace,
    steps: { ship: { status: 'completed', attempts: 2, completedSeq: 1 } },
  } satisfies ExecutionRecord;
  const [ship] = stepViews(record);
  expect(ship?.attempts.map((a) => [a.attempt, a.outcome, a.worker])).toEqual([
    [1, 'may_have_run', 'h-1/a'],
    [2, 'succeeded', undefined],
  ]);
  expect(attemptText(ship!.attempts[0]!)).toBe('may have run (worker lost)  on h-1/a');
});
