/**
 * Failures an operator steers, on the memory backend (manual clock, no sleeps): a step that
 * fails for good under `onFailure: 'pause'` pauses the run holding nothing; `retryStep`,
 * `skipStep`, `rollback` and `fork` continue, end or branch it; each is refused with a typed
 * error on the wrong status, and one of two concurrent actions wins.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  errorFromJSON,
  errorToJSON,
  FailureActionError,
  reactor,
  ResumeRefusedError,
  type ReactorEvent,
  type RunResult,
} from '../../src/index.js';
import { createTestEngine } from '../../src/testing/index.js';
import { approval, memoryRig } from '../interrupt/helpers.js';
import { ledger, order } from './helpers.js';

const types = (trace: readonly ReactorEvent[]): string[] => trace.map((e) => e.type);

async function refusal(p: Promise<unknown>): Promise<FailureActionError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FailureActionError);
  return error as FailureActionError;
}

function pausedOn(result: RunResult | undefined): unknown {
  return result?.status === 'paused' ? result.pausedOn : undefined;
}

describe('pause on failure', () => {
  test('a step that fails for good pauses the run: nothing rolled back or compensated, visible in the result and the record', async () => {
    const l = ledger();
    const t = createTestEngine();
    const paused = await t.run(order(l), { orderId: 'o1', amount: 5 });
    expect(paused).toBePausedOnFailure('charge');
    expect(pausedOn(paused)).toMatchObject({ kind: 'failure', step: 'charge', error: { message: 'card declined' } });
    expect(paused.status === 'paused' && paused.interrupts).toEqual([]);
    expect(l.rollback).toEqual([]);
    expect(l.bodies).toEqual({ reserve: 1, price: 1, charge: 1 });
    expect(types(paused.trace).slice(-2)).toEqual(['step.failed', 'run.paused_on_failure']);
    const record = await t.store.get(paused.executionId);
    expect(record).toMatchObject({ status: 'paused', pausedOn: { kind: 'failure', step: 'charge' } });
    expect(pausedOn(await t.engine.result(paused.executionId))).toMatchObject({ kind: 'failure', step: 'charge' });
  });

  test("onFailure defaults to 'rollback'; a step's own onFailure overrides its reactor's", async () => {
    const l = ledger();
    const t = createTestEngine();
    const rolled = await t.run(order(l, 'steer-rollback', 'rollback'), { orderId: 'o2', amount: 1 });
    expect(rolled).toHaveFailedAt('charge');
    expect(l.rollback).toEqual(['compensate charge', 'undo price', 'undo reserve']);
    const plain = reactor('steer-default')
      .step('a', { run: () => 1 })
      .step('b', { waitFor: ['a'], run: () => Promise.reject(new Error('no')) })
      .build();
    expect(plain.onFailure).toBe('rollback');
    expect(await t.run(plain, {})).toHaveFailedAt('b');
    const stepPauses = reactor('steer-step-pause')
      .step('a', { run: () => 1 })
      .step('b', { waitFor: ['a'], onFailure: 'pause', run: () => Promise.reject(new Error('no')) })
      .build();
    expect(await t.run(stepPauses, {})).toBePausedOnFailure('b');
    const stepRollsBack = reactor('steer-step-rollback', { onFailure: 'pause' })
      .step('a', { run: () => 1 })
      .step('b', { waitFor: ['a'], onFailure: 'rollback', run: () => Promise.reject(new Error('no')) })
      .build();
    expect(await t.run(stepRollsBack, {})).toHaveFailedAt('b');
  });

  test('in a worker the paused run holds no lock, no semaphore slot and no job', async () => {
    const l = ledger();
    const r = order(l)
      .extend('steer-held')
      .withLock({ key: ({ orderId }) => `order:${orderId}`, ttl: '30s' })
      .withSemaphore({ key: () => 'charges', limit: 2, ttl: '30s' })
      .background('all')
      .returns('ship');
    const rig = memoryRig();
    const worker = rig.startWorker();
    try {
      const queued = await rig.engine.start(r, { orderId: 'h1', amount: 3 });
      const paused = await rig.engine.wait(queued.executionId, { timeoutMs: 60_000 });
      expect(paused).toBePausedOnFailure('charge');
      await rig.memory.drain();
      expect(await rig.coordinator.lockState('order:h1')).toBeUndefined();
      expect((await rig.coordinator.semaphoreState('charges', 2)).holders).toEqual([]);
      expect(rig.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
      // retryStep continues in a worker (it ran in the background); completed steps do not run again.
      l.failCharge = false;
      const retried = await rig.engine.retryStep(queued.executionId);
      expect(retried.status).toBe('queued');
      const done = await rig.engine.wait(queued.executionId, { timeoutMs: 60_000 });
      expect(done).toHaveCompleted();
      expect(done.status === 'completed' && done.value).toBe('shipped with ch-6');
      expect(l.bodies).toEqual({ reserve: 1, price: 1, charge: 2, ship: 1 });
      expect(done.trace.filter((e) => e.type === 'failure.retried')).toMatchObject([
        { step: 'charge', mode: 'background', argsReplaced: false },
      ]);
      // The worker's attempt log numbers the operator's retry after the failed attempt.
      expect(done.steps.charge).toMatchObject({ status: 'completed', attempts: 2 });
      expect(done.steps.charge?.runs?.map((r) => [r.attempt, r.outcome])).toEqual([
        [1, 'failed'],
        [2, 'succeeded'],
      ]);
    } finally {
      await worker.close();
    }
  });
});

describe('retryStep', () => {
  test('runs the failed step again and continues in process; completed steps are not re-run', async () => {
    const l = ledger();
    const t = createTestEngine();
    const paused = await t.run(order(l), { orderId: 'r1', amount: 5 });
    l.failCharge = false;
    const done = await t.engine.retryStep(paused.executionId);
    expect(done).toHaveCompleted();
    expect(done.status === 'completed' && done.value).toBe('shipped with ch-10');
    expect(l.bodies).toEqual({ reserve: 1, price: 1, charge: 2, ship: 1 });
    expect(done.steps.charge).toMatchObject({ status: 'completed', attempts: 2 }); // counted after the failed one
    expect(types(done.trace)).toContain('failure.retried');
  });

  test('with replaced arguments the step runs with them (also in later jobs); invalid ones are refused', async () => {
    const l = ledger();
    const t = createTestEngine();
    const paused = await t.run(order(l), { orderId: 'r2', amount: 5 });
    l.failCharge = false;
    const bad = await refusal(t.engine.retryStep(paused.executionId, { args: 'x' as never }));
    expect(bad.details).toMatchObject({ reason: 'invalid_args', action: 'retryStep' });
    const done = await t.engine.retryStep(paused.executionId, { args: { cents: 99, reservation: 'manual' } });
    expect(done.status === 'completed' && done.value).toBe('shipped with ch-99');
    expect(done.trace.filter((e) => e.type === 'failure.retried')).toMatchObject([{ argsReplaced: true }]);
  });

  test('a step that fails again pauses again, and can be retried again', async () => {
    const l = ledger();
    const t = createTestEngine();
    const paused = await t.run(order(l), { orderId: 'r3', amount: 1 });
    expect(await t.engine.retryStep(paused.executionId)).toBePausedOnFailure('charge');
    l.failCharge = false;
    const done = await t.engine.retryStep(paused.executionId);
    expect(done).toHaveCompleted();
    expect(l.bodies).toEqual({ reserve: 1, price: 1, charge: 3, ship: 1 });
    expect(done.steps.charge?.attempts).toBe(3);
  });

  test('a double click: of two concurrent retryStep calls one runs the step, the other is refused as already claimed', async () => {
    const l = ledger();
    const t = createTestEngine();
    const paused = await t.run(order(l), { orderId: 'r4', amount: 2 });
    l.failCharge = false;
    const outcomes = await Promise.allSettled([
      t.engine.retryStep(paused.executionId),
      t.engine.retryStep(paused.executionId),
    ]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBeInstanceOf(FailureActionError);
    expect((lost[0]!.reason as FailureActionError).details.reason).toBe('already_claimed');
    expect(l.bodies.charge).toBe(2); // the failed run, and one retry
    expect((await t.engine.result(paused.executionId))?.status).toBe('completed');
    expect(t.events.filter((e) => e.type === 'failure.action_refused')).toMatchObject([
      { action: 'retryStep', reason: 'already_claimed', step: 'charge' },
    ]);
  });
});

describe('rollback', () => {
  test('compensates the failed step, undoes the completed ones newest first, ends failed with the original error', async () => {
    const l = ledger();
    const t = createTestEngine();
    const paused = await t.run(order(l), { orderId: 'b1', amount: 2 });
    const failed = await t.engine.rollback(paused.executionId);
    expect(failed).toHaveFailedAt('charge');
    expect(failed.status === 'failed' && failed.error.message).toBe('card declined');
    expect(failed.status === 'failed' && failed.failedStep).toBe('charge');
    expect(l.rollback).toEqual(['compensate charge', 'undo price', 'undo reserve']);
    expect(types(failed.trace)).toEqual(
      expect.arrayContaining(['failure.rolled_back', 'run.rolling_back', 'run.failed']),
    );
    expect((await t.store.get(paused.executionId))?.pausedOn).toBeUndefined();
    await refusal(t.engine.rollback(paused.executionId)); // finished now
  });

  test('a cancel of a run paused on a failure compensates the failed step too', async () => {
    const l = ledger();
    const t = createTestEngine();
    const paused = await t.run(order(l), { orderId: 'b2', amount: 2 });
    expect((await t.engine.cancel(paused.executionId)).status).toBe('cancelled');
    expect(l.rollback).toEqual(['compensate charge', 'undo price', 'undo reserve']);
  });
});

describe('skipStep', () => {
  test('continues with the supplied value (validated against the step’s schema); the step is recorded skipped', async () => {
    const l = ledger();
    const t = createTestEngine();
    const paused = await t.run(order(l), { orderId: 's1', amount: 2 });
    const bad = await refusal(t.engine.skipStep(paused.executionId, { value: { id: 7 } }));
    expect(bad.details).toMatchObject({ reason: 'invalid_value', issues: [{ path: 'id' }] });
    const done = await t.engine.skipStep(paused.executionId, { value: { id: 'manual' } });
    expect(done.status === 'completed' && done.value).toBe('shipped with manual');
    expect(done.steps.charge).toMatchObject({ status: 'skipped', result: { id: 'manual' } });
    expect(l.bodies).toEqual({ reserve: 1, price: 1, charge: 1, ship: 1 });
    expect(types(done.trace)).toContain('failure.skipped');
  });

  test('is refused where the step is not skippable', async () => {
    const t = createTestEngine();
    const r = reactor('steer-unskippable', { onFailure: 'pause' })
      .step('a', { run: () => Promise.reject(new Error('no')) })
      .build();
    const paused = await t.run(r, {});
    const error = await refusal(t.engine.skipStep(paused.executionId, { value: 1 }));
    expect(error.details).toMatchObject({ reason: 'not_skippable', step: 'a', action: 'skipStep' });
    expect(await t.engine.result(paused.executionId)).toBePausedOnFailure('a');
  });
});

describe('wrong status', () => {
  test('actions on a run not paused on a failure, and resume on one that is, are refused with typed errors', async () => {
    const l = ledger();
    const t = createTestEngine();
    l.failCharge = false;
    const completed = await t.run(order(l), { orderId: 'w1', amount: 1 });
    for (const call of [
      t.engine.retryStep(completed.executionId),
      t.engine.skipStep(completed.executionId, { value: { id: 'x' } }),
      t.engine.rollback(completed.executionId),
    ]) {
      const error = await refusal(call);
      expect(error.code).toBe('failure_action_refused');
      expect(error.details).toMatchObject({ reason: 'not_paused_on_failure', status: 'completed' });
      expect(errorFromJSON(errorToJSON(error))).toMatchObject({
        code: 'failure_action_refused',
        details: { reason: 'not_paused_on_failure' },
      });
    }
    // Paused at an interrupt: not a failure pause.
    const waiting = await t.run(approval([]), { orderId: 'w2' });
    expect(waiting).toBePaused('approve');
    const interrupt = await refusal(t.engine.retryStep(waiting.executionId));
    expect(interrupt.message).toContain('interrupt');
    // Paused on a failure: resume refuses it.
    l.failCharge = true;
    const paused = await t.run(order(l), { orderId: 'w3', amount: 1 });
    const resumed = await t.engine.resume(paused.executionId, {}).catch((e: unknown) => e);
    expect(resumed).toBeInstanceOf(ResumeRefusedError);
    expect(resumed).toMatchObject({ details: { reason: 'paused_on_failure' } });
    // A fork of a running (here: interrupt-paused) execution is refused; an unknown step too.
    expect((await refusal(t.engine.fork(waiting.executionId, { fromStep: 'ship' }))).details.reason).toBe(
      'not_paused_on_failure',
    );
    expect((await refusal(t.engine.fork(paused.executionId, { fromStep: 'nope' }))).details.reason).toBe(
      'unknown_step',
    );
  });
});

describe('fork', () => {
  test('from a middle step of a completed run: reuses the results before it, runs the rest, links to the source', async () => {
    const l = ledger();
    l.failCharge = false;
    const t = createTestEngine();
    const source = await t.run(order(l), { orderId: 'f1', amount: 4 });
    expect(source).toHaveCompleted();
    const fork = await t.engine.fork(source.executionId, { fromStep: 'price' });
    expect(fork).toHaveCompleted();
    expect(fork.executionId).not.toBe(source.executionId);
    expect(l.bodies).toEqual({ reserve: 1, price: 2, charge: 2, ship: 2 });
    expect(fork.trace.find((e) => e.type === 'run.forked')).toMatchObject({
      sourceId: source.executionId,
      fromStep: 'price',
      reused: ['reserve'],
      inputReplaced: false,
    });
    expect((await t.store.get(fork.executionId))?.retryOf).toBe(source.executionId);
    expect((await t.store.get(source.executionId))?.trace?.at(-1)).toMatchObject({
      type: 'run.retried',
      retryExecutionId: fork.executionId,
    });
    // A double click within the claim window is refused; the source is untouched.
    expect((await refusal(t.engine.fork(source.executionId, { fromStep: 'price' }))).details.reason).toBe(
      'already_claimed',
    );
    expect((await t.engine.result(source.executionId))?.status).toBe('completed');
  });

  test('from the failed step of a run paused on a failure, with a replaced input: reuses reserve and price', async () => {
    const l = ledger();
    const t = createTestEngine();
    const paused = await t.run(order(l), { orderId: 'f2', amount: 1 });
    l.failCharge = false;
    const invalid = await refusal(t.engine.fork(paused.executionId, { fromStep: 'charge', input: { orderId: 3 } }));
    expect(invalid.details.reason).toBe('invalid_input');
    const fork = await t.engine.fork(paused.executionId, { fromStep: 'charge', input: { orderId: 'f2', amount: 50 } });
    expect(fork.status === 'completed' && fork.value).toBe('shipped with ch-2'); // price reused as recorded
    expect(l.bodies).toEqual({ reserve: 1, price: 1, charge: 2, ship: 1 });
    expect(fork.trace.find((e) => e.type === 'run.forked')).toMatchObject({
      reused: ['reserve', 'price'],
      inputReplaced: true,
    });
    expect(await t.engine.result(paused.executionId)).toBePausedOnFailure('charge');
  });
});

test('a step definition placed with onFailure and skippable: its arguments are validated when replaced', async () => {
  const { defineStep } = await import('../../src/index.js');
  let fail = true;
  const charge = defineStep({
    input: { cents: z.number().int() },
    run: ({ cents }) => {
      if (fail) throw new Error('declined');
      return cents;
    },
  });
  const r = reactor('steer-defined')
    .step('charge', charge, { args: ($) => ({ cents: $.value(5) }), onFailure: 'pause' })
    .build();
  const t = createTestEngine();
  const paused = await t.run(r, {});
  expect(paused).toBePausedOnFailure('charge');
  fail = false;
  const bad = await refusal(t.engine.retryStep(paused.executionId, { args: { cents: 'x' } }));
  expect(bad.details).toMatchObject({ reason: 'invalid_args', issues: [{ path: 'cents' }] });
  const done = await t.engine.retryStep(paused.executionId, { args: { cents: 42 } });
  expect(done.status === 'completed' && done.value).toEqual({ charge: 42 });
});

test('the source of a fork stays paused on its failure (decision 119): it holds nothing, its actions stay open, and its rollback undoes its own steps only', async () => {
  const l = ledger();
  const t = createTestEngine();
  const paused = await t.run(order(l), { orderId: 'f4', amount: 1 });
  l.failCharge = false;
  const fork = await t.engine.fork(paused.executionId, { fromStep: 'charge' });
  expect(fork).toHaveCompleted();
  // The source is left as it was: paused on the same failure, with the same pause.
  const before = await t.store.get(paused.executionId);
  expect(before).toMatchObject({ status: 'paused', pausedOn: { kind: 'failure', step: 'charge' } });
  expect(await t.engine.result(paused.executionId)).toBePausedOnFailure('charge');
  expect(l.rollback).toEqual([]);
  // Its actions are still an operator's: a rollback runs the source's own undos (the fork's records are untouched).
  expect(await t.engine.rollback(paused.executionId)).toHaveFailedAt('charge');
  expect(l.rollback).toEqual(['compensate charge', 'undo price', 'undo reserve']);
  expect((await t.engine.result(fork.executionId))?.status).toBe('completed');
  expect(types((await t.store.get(fork.executionId))!.trace ?? [])).not.toContain('step.undone');
});

test('a fork of a run that rolled back reuses nothing it undid', async () => {
  const l = ledger();
  const t = createTestEngine();
  const paused = await t.run(order(l), { orderId: 'f3', amount: 1 });
  expect(await t.engine.rollback(paused.executionId)).toHaveFailedAt('charge');
  l.failCharge = false;
  const fork = await t.engine.fork(paused.executionId, { fromStep: 'charge' });
  expect(fork).toHaveCompleted();
  expect(fork.trace.find((e) => e.type === 'run.forked')).toMatchObject({ reused: [] });
  expect(l.bodies).toEqual({ reserve: 2, price: 2, charge: 2, ship: 1 });
});

describe('what does not pause', () => {
  test('a failure inside a composed reactor rolls back; a cancel of an inline run whose step then fails rolls back', async () => {
    const t = createTestEngine();
    const inner = reactor('steer-inner', { onFailure: 'pause' })
      .step('x', { run: () => Promise.reject(new Error('inner')) })
      .build();
    const outer = reactor('steer-outer', { onFailure: 'pause' }).compose('child', inner).build();
    expect(await t.run(outer, {})).toHaveFailedAt('child.x');
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = reactor('steer-cancelled', { onFailure: 'pause' })
      .step('wait', {
        run: (_args, ctx) =>
          new Promise((_resolve, reject) => {
            started();
            ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          }),
      })
      .build();
    const run = t.engine.run(slow, {});
    await running;
    const id = t.events.find((e) => e.type === 'run.started' && e.reactor === 'steer-cancelled')!.executionId;
    await t.engine.cancel(id);
    expect((await run).status).toBe('cancelled');
  });
});
