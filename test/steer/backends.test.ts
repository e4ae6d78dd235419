/**
 * Failures an operator steers in workers on every backend of the matrix: a run paused on a
 * failure in a worker holds no lock, semaphore slot or job; of two concurrent `retryStep` calls
 * from two runtimes one wins and the step runs once more, in a worker (the server backends);
 * `rollback` undoes newest first; `fork` from a middle step reuses the earlier results;
 * `skipStep` continues where allowed; wrong-status calls are refused with the typed error.
 */
import { describe, expect, test } from 'vitest';
import { FailureActionError, reactor } from '../../src/index.js';
import { describeOnBackends, testWhere, type MatrixRuntime } from '../support/backend-matrix.js';
import { ledger, order, type Ledger } from './helpers.js';

/** The order reactor in the background, under a per-order lock and a semaphore of 2 on charges. */
function held(l: Ledger) {
  return order(l, 'steer')
    .extend('steer-held')
    .withLock({ key: ({ orderId }) => `order:${orderId}`, ttl: '30s' })
    .withSemaphore({ key: () => 'charges', limit: 2, ttl: '30s' })
    .background('all')
    .returns('ship');
}

async function statusOf(runtime: MatrixRuntime, id: string): Promise<string | undefined> {
  return (await runtime.engine.result(id))?.status;
}

async function jobsLeft(runtime: MatrixRuntime): Promise<number> {
  const { counts } = await runtime.queueInspector.inspectQueue();
  return (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0) + (counts.active ?? 0);
}

async function refusal(p: Promise<unknown>): Promise<FailureActionError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FailureActionError);
  return error as FailureActionError;
}

describeOnBackends('failures steered in workers', (backend) => {
  describe('pause on failure', () => {
    // Two runtimes over one namespace stand for two processes sharing a server's backend; the memory backend lives in one process.
    testWhere(backend.shared)(
      'a paused run holds nothing; two concurrent retryStep calls: one wins, the step runs once more in a worker, completed steps never again',
      async () => {
        const l = ledger();
        const r = held(l);
        const a = backend.runtime({ reactors: [r] });
        const b = backend.runtime({ reactors: [r], namespace: a.namespace });
        a.startWorker({ concurrency: 2 });
        const queued = await a.engine.start(r, { orderId: 'p1', amount: 3 });
        const paused = await a.engine.wait(queued.executionId, { timeoutMs: 20_000 });
        expect(paused).toBePausedOnFailure('charge');
        expect(await a.backend.coordinator.lockState('order:p1')).toBeUndefined();
        expect((await a.backend.coordinator.semaphoreState('charges', 2)).holders).toEqual([]);
        await expect.poll(() => jobsLeft(a), { timeout: 20_000 }).toBe(0);
        expect(await a.backend.store.get(queued.executionId)).toMatchObject({
          status: 'paused',
          pausedOn: { kind: 'failure', step: 'charge', error: { message: 'card declined' } },
        });
        // Wrong status for an interrupt's resume.
        await expect(a.engine.resume(queued.executionId, {})).rejects.toMatchObject({
          code: 'resume_refused',
          details: { reason: 'paused_on_failure' },
        });
        l.failCharge = false;
        // b's connections up first: a first call on b would connect, and a busy machine could let a
        // finish before b read the record (then b is refused as not paused, not as claimed).
        expect((await b.engine.result(queued.executionId))?.status).toBe('paused');
        const outcomes = await Promise.allSettled([
          a.engine.retryStep(queued.executionId),
          b.engine.retryStep(queued.executionId),
        ]);
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toMatchObject([{ value: { status: 'queued' } }]);
        const lost = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
        expect(lost?.reason).toBeInstanceOf(FailureActionError);
        expect((lost?.reason as FailureActionError).details.reason).toBe('already_claimed');
        await expect.poll(() => statusOf(a, queued.executionId), { timeout: 20_000 }).toBe('completed');
        expect(l.bodies).toEqual({ reserve: 1, price: 1, charge: 2, ship: 1 });
        const done = await a.engine.result(queued.executionId);
        expect(done?.status === 'completed' && done.value).toBe('shipped with ch-6');
        expect((await refusal(b.engine.retryStep(queued.executionId))).details).toMatchObject({
          reason: 'not_paused_on_failure',
          status: 'completed',
        });
      },
    );

    test('rollback undoes newest first and ends failed with the original error; skipStep continues with the value', async () => {
      const l = ledger();
      const r = held(l);
      const runtime = backend.runtime({ reactors: [r] });
      runtime.startWorker({ concurrency: 2 });
      const first = await runtime.engine.start(r, { orderId: 'b1', amount: 1 });
      expect(await runtime.engine.wait(first.executionId, { timeoutMs: 20_000 })).toBePausedOnFailure('charge');
      const failed = await runtime.engine.rollback(first.executionId);
      expect(failed).toHaveFailedAt('charge');
      expect(failed.status === 'failed' && failed.error.message).toBe('card declined');
      expect(l.rollback).toEqual(['compensate charge', 'undo price', 'undo reserve']);
      const second = await runtime.engine.start(r, { orderId: 'b2', amount: 1 });
      expect(await runtime.engine.wait(second.executionId, { timeoutMs: 20_000 })).toBePausedOnFailure('charge');
      expect(await runtime.engine.skipStep(second.executionId, { value: { id: 'manual' } })).toMatchObject({
        status: 'queued',
      });
      await expect.poll(() => statusOf(runtime, second.executionId), { timeout: 20_000 }).toBe('completed');
      const done = await runtime.engine.result(second.executionId);
      expect(done?.status === 'completed' && done.value).toBe('shipped with manual');
      expect(l.bodies).toEqual({ reserve: 2, price: 2, charge: 2, ship: 1 });
    });

    test('fork from a middle step of a completed run reuses the earlier results, runs in a worker, links to the source', async () => {
      const l = ledger();
      l.failCharge = false;
      const r = held(l);
      const runtime = backend.runtime({ reactors: [r] });
      runtime.startWorker({ concurrency: 2 });
      const source = await runtime.engine.start(r, { orderId: 'f1', amount: 2 });
      expect(await runtime.engine.wait(source.executionId, { timeoutMs: 20_000 })).toHaveCompleted();
      const fork = await runtime.engine.fork(source.executionId, { fromStep: 'price' });
      expect(fork.status).toBe('queued');
      await expect.poll(() => statusOf(runtime, fork.executionId), { timeout: 20_000 }).toBe('completed');
      expect(l.bodies).toEqual({ reserve: 1, price: 2, charge: 2, ship: 2 });
      const forked = await runtime.engine.result(fork.executionId);
      expect(forked?.trace.find((e) => e.type === 'run.forked')).toMatchObject({
        sourceId: source.executionId,
        fromStep: 'price',
        reused: ['reserve'],
      });
      expect((await runtime.backend.store.get(fork.executionId))?.retryOf).toBe(source.executionId);
      expect((await runtime.backend.store.get(source.executionId))?.trace?.some((e) => e.type === 'run.retried')).toBe(
        true,
      );
    });
  });

  // Two runtimes racing stand for two processes, and the memory backend takes no inline lease (one process).
  testWhere(backend.shared)(
    'an inline retryStep continues under the inline lease: a second runtime racing it is refused, and its sweep leaves the run alone',
    async () => {
      let fail = true;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const entered: number[] = [];
      let inFlight = 0;
      let maxInFlight = 0;
      const r = reactor('steer-inline-lease', { onFailure: 'pause' })
        .step('a', { run: () => 1 })
        .step('charge', {
          waitFor: ['a'],
          retry: { maxAttempts: 1 },
          run: async () => {
            if (fail) throw new Error('card declined');
            entered.push(Date.now());
            maxInFlight = Math.max(maxInFlight, ++inFlight);
            try {
              await gate;
              return 'charged';
            } finally {
              inFlight--;
            }
          },
        })
        .returns('charge');
      // A lease short enough to outlive in the test, long enough that a busy machine still renews it.
      const options = { background: { livenessTtlMs: 4_000, sweepIntervalMs: 0 } };
      const one = backend.runtime({ reactors: [r], ...options });
      const two = backend.runtime({ reactors: [r], ...options, namespace: one.namespace });
      two.startWorker(); // a requeued execution would run here, beside the inline continuation
      const paused = await one.engine.run(r, {});
      expect(paused.status).toBe('paused');
      fail = false;
      // Both runtimes race: either may win (a loaded machine decides), the other is refused at once.
      type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };
      const outcomes: (Outcome | undefined)[] = [undefined, undefined];
      const racers = [one, two];
      const attempts = racers.map((runtime, i) =>
        runtime.engine.retryStep(paused.executionId).then(
          (value): Outcome => (outcomes[i] = { ok: true, value }),
          (error: unknown): Outcome => (outcomes[i] = { ok: false, error }),
        ),
      );
      const deadline = Date.now() + 60_000;
      while (entered.length === 0 || !outcomes.some((o) => o?.ok === false)) {
        if (Date.now() > deadline)
          throw new Error(`the retried step never ran, or no racer was refused: ${JSON.stringify(outcomes)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const loser = racers[outcomes.findIndex((o) => o?.ok === false)]!;
      // The inline continuation holds the execution's liveness lease, renewed: long past its TTL the
      // record is not rewritten, and still the other runtime's sweep finds it held and leaves it.
      const { coordinator } = one.backend;
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        expect(await loser.engine.sweep()).toMatchObject({ requeued: 0, aborted: 0 });
      }
      expect((await coordinator.lockState(`execution:${paused.executionId}`))?.holder.owner).toMatch(/^inline:/);
      release();
      const settled = await Promise.all(attempts);
      const won = settled.filter((o) => o.ok);
      const refused = settled.filter((o) => !o.ok);
      expect(won).toHaveLength(1);
      expect(won[0]).toMatchObject({ value: { status: 'completed', value: 'charged' } });
      expect(refused).toHaveLength(1);
      expect(refused[0]?.ok === false && refused[0].error).toBeInstanceOf(FailureActionError);
      expect(entered).toHaveLength(1);
      expect(maxInFlight).toBe(1);
      expect(await coordinator.lockState(`execution:${paused.executionId}`)).toBeUndefined();
    },
    90_000,
  );
});
