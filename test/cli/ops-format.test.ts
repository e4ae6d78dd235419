/** The text of a hold's owner in `ts-reactor locks`: never an empty reactor slot. */
import { expect, test } from 'vitest';
import { holder, stepStatus } from '../../src/cli/ops-format.js';

test('a holder reads "id (reactor, step s)", and without a known reactor "id (step s)" or "id (reactor level)"', () => {
  expect(holder({ owner: 'o', executionId: 'e1', reactor: 'checkout', step: 'charge', level: 'step' })).toBe(
    'e1 (checkout, step charge)',
  );
  expect(holder({ owner: 'o', executionId: 'e1', reactor: 'checkout', level: 'reactor' })).toBe(
    'e1 (checkout, reactor level)',
  );
  expect(holder({ owner: 'rx-sweep', level: 'reactor' })).toBe('rx-sweep (reactor level)');
  expect(holder({ owner: 'o', executionId: 'e2', step: 'ship', level: 'step' })).toBe('e2 (step ship)');
});

test('a rolled-back step shows its recorded status and what the rollback did', () => {
  const record = { status: 'completed', attempts: 1 } as const;
  expect(stepStatus({ record, rolledBack: 'undone' })).toBe('completed → undone');
  expect(stepStatus({ record: { status: 'failed', attempts: 2 }, rolledBack: 'compensated' })).toBe(
    'failed → compensated',
  );
  expect(stepStatus({ record })).toBe('completed');
});
