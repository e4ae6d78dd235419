/**
 * A spec of the step-lock demo's reactor written with the shipped test surface only
 * (`ts-reactor/testing` and `ts-reactor/testing/vitest`): the serialized, contended and
 * compensated paths on the test engine (memory backend, manual clock).
 */
import { expect, test } from 'vitest';
import { stepLockPayment } from '../../src/cli/demo-step-lock-reactor.js';
import { ManualClock, createTestEngine } from '../../src/testing/index.js';
import '../../src/testing/vitest.js';

const payment = (paymentId: string, extra: { failAt?: string; workMs?: number } = {}) => ({
  paymentId,
  account: 'acme',
  amountCents: 500,
  workMs: extra.workMs ?? 1,
  ...(extra.failAt ? { failAt: extra.failAt } : {}),
});

test('serialized: two payments on one account take the charge lock one after the other; each completes', async () => {
  // Virtual time stands still: the second payment waits for the release, not for its wait to run out.
  const t = createTestEngine({ clock: new ManualClock({ autoAdvance: false }) });
  const [a, b] = await Promise.all([t.run(stepLockPayment, payment('p-1')), t.run(stepLockPayment, payment('p-2'))]);
  expect(a).toHaveCompleted();
  expect(b).toHaveCompleted();
  const charge = t.events
    .filter((e) => (e.type === 'coordination.acquired' || e.type === 'coordination.released') && e.step === 'charge')
    .map((e) => `${e.type === 'coordination.acquired' ? '+' : '-'}${e.executionId === a.executionId ? 'a' : 'b'}`);
  expect(charge.join(' ')).toMatch(/^\+(a) -\1 \+(b) -\2$|^\+(b) -\3 \+(a) -\4$/);
});

test('the hold is attributed to the charge step while its body runs', async () => {
  const t = createTestEngine();
  const running = t.run(stepLockPayment, payment('p-1', { workMs: 50 }));
  await expect.poll(() => t.events.some((e) => e.type === 'step.started' && e.step === 'charge')).toBe(true);
  await expect(t.coordinator).toHaveHoldAttributedTo('account:acme', 'charge');
  expect(await running).toHaveCompleted();
});

test('contended: with the account held elsewhere, the payment fails at charge after its wait; nothing to undo, charge never started', async () => {
  const t = createTestEngine();
  await t.coordinator.lockAcquire({ key: 'account:acme', holder: { owner: 'another-system' }, ttlMs: 120_000 });
  const result = await t.run(stepLockPayment, payment('p-1'));
  expect(result).toHaveFailedAt('charge');
  expect(result).toHaveContendedAt('charge', 'account:acme');
  expect(result).toHaveUndone([]); // audit has no undo; charge's body never started
  expect(result).toHaveCompensated([]);
});

test('compensated: notify fails, and the refund runs holding the account key', async () => {
  const t = createTestEngine();
  const result = await t.run(stepLockPayment, payment('p-1', { failAt: 'notify' }));
  expect(result).toHaveFailedAt('notify');
  expect(result).toHaveUndone(['charge']);
  // The refund asserts it holds lock:account:acme; without the re-take it would be reported here.
  expect(result.rollbackFailures).toEqual([]);
  await expect(t.coordinator).not.toBeLockedBy('account:acme');
});

test('compensated under contention: a refund that cannot take the key is reported, not skipped silently', async () => {
  const t = createTestEngine();
  t.engine.subscribe((e) => {
    if (e.type === 'run.rolling_back')
      void t.coordinator.lockAcquire({ key: 'account:acme', holder: { owner: 'another-system' }, ttlMs: 120_000 });
  });
  const result = await t.run(stepLockPayment, payment('p-1', { failAt: 'notify' }));
  expect(result).toHaveFailedAt('notify');
  expect(result).toHaveRollbackFailure({
    step: 'charge',
    kind: 'undo',
    key: 'account:acme',
    reason: 'coordination_unavailable',
  });
});
