/**
 * An operator meets a job's tail (decision 144): the record already reads `pending`, `queued` or
 * `completed`, but the job that wrote it still holds the execution's liveness lock. Cancel and
 * undo wait for the lock instead of taking the execution for one a worker runs. The tail is
 * played by the test holding the lock itself, on the memory backend; nothing sleeps on the
 * engine's clock.
 */
import { describe, expect, test } from 'vitest';
import { reactor } from '../../src/index.js';
import { livenessKey } from '../../src/engine/model/keys.js';
import { gate, manualEngine, settlesWithin } from '../background/helpers.js';

const undone: string[] = [];
const twoSteps = reactor('tail-two-steps')
  .step('a', { run: () => 'a', undo: () => void undone.push('a') })
  .step('b', { waitFor: ['a'], run: () => 'b', undo: () => void undone.push('b') })
  .build();

/** Holds `executionId`'s liveness lock as a job would; `release` lets it go. */
async function jobTail(m: ReturnType<typeof manualEngine>, executionId: string) {
  const owner = `job:${executionId}:tail`;
  const lock = await m.coordinator.lockAcquire({
    key: livenessKey(executionId),
    holder: { owner, executionId },
    ttlMs: 60_000,
  });
  expect(lock.acquired).toBe(true);
  return { release: () => m.coordinator.lockRelease(livenessKey(executionId), owner) };
}

describe('operators wait for the tail of the job that holds the lock', () => {
  test('cancel of a pending execution whose lock a job holds: cancelled once the job lets go, not a request', async () => {
    const m = manualEngine({ reactors: [twoSteps] });
    const { executionId } = await m.engine.start(twoSteps, {});
    expect((await m.engine.result(executionId))?.status).toBe('queued');
    const tail = await jobTail(m, executionId);
    const cancelling = m.engine.cancel(executionId, { reason: 'operator' });
    expect(await settlesWithin(cancelling)).toBe(false); // waits for the lock
    await tail.release();
    expect(await cancelling).toMatchObject({ status: 'cancelled', reason: 'operator' });
  });

  test('undo of a completed execution whose lock a job still holds: done once the job lets go, not refused as busy', async () => {
    undone.length = 0;
    const m = manualEngine({ reactors: [twoSteps] });
    const worker = m.startWorker(1);
    const { executionId } = await m.engine.start(twoSteps, {});
    expect((await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 1 })).status).toBe('completed');
    await worker.close();
    const tail = await jobTail(m, executionId);
    const undoing = m.engine.undo(executionId, { reason: 'operator' });
    expect(await settlesWithin(undoing)).toBe(false);
    await tail.release();
    expect(await undoing).toMatchObject({ status: 'cancelled', reason: 'operator' });
    expect(undone).toEqual(['b', 'a']);
  });

  test('a running execution is not waited for: cancel answers with a request at once', async () => {
    const inStep = gate();
    const release = gate();
    const held = reactor('tail-held')
      .step('a', { run: async () => (inStep.open(), await release.promise, 'a') })
      .build();
    const m = manualEngine({ reactors: [held] });
    const worker = m.startWorker(1);
    const { executionId } = await m.engine.start(held, {});
    await inStep.promise; // a worker runs it, holding its lock
    expect((await m.engine.cancel(executionId, { reason: 'operator' })).status).toBe('running');
    expect(await m.coordinator.periodIsMarked(`cancel:${executionId}`, 'requested')).toBe(true);
    release.open();
    expect((await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 1 })).status).toBe('cancelled');
    await worker.close();
  });

  test('a job running a first step it has not recorded yet is asked to stop, and cancel answers once it has rolled back', async () => {
    const inStep = gate();
    const log: string[] = [];
    const stoppable = reactor('tail-stoppable')
      .step('a', { run: () => 'a', undo: () => void log.push('undo a') })
      .step('b', {
        waitFor: ['a'],
        run: async (_args, ctx) => {
          inStep.open();
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
          throw ctx.signal.reason as Error;
        },
      })
      .build();
    const m = manualEngine({ reactors: [stoppable] });
    const worker = m.startWorker(1);
    const { executionId } = await m.engine.start(stoppable, {});
    await inStep.promise;
    // The engine's clock stands still: no checkpoint has said `running` yet.
    expect((await m.store.get(executionId))!.status).toBe('pending');
    expect(await m.engine.cancel(executionId, { reason: 'operator' })).toMatchObject({
      status: 'cancelled',
      reason: 'operator',
    });
    expect(await m.engine.wait(executionId, { timeoutMs: 5_000, pollMs: 1 })).toMatchObject({
      status: 'cancelled',
      reason: 'operator',
    });
    expect(log).toEqual(['undo a']);
    await worker.close();
  });
});
