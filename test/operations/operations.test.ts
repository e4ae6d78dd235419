import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEmbeddedEngine,
  createEngine,
  ExecutionStateError,
  MemoryCoordinator,
  MemoryStore,
  reactor,
  type AnyReactorDefinition,
  type RunResult,
} from '../../src/index.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { gate } from '../background/helpers.js';

type Gate = ReturnType<typeof gate>;

/** Runs `r` embedded; once its step opened `inStep`, cancels it (reason `stop`) and opens `unblock` to let the step go on. */
async function cancelInStep(
  r: AnyReactorDefinition,
  inStep: Gate,
  unblock: Gate,
): Promise<{ result: RunResult; cancelled: unknown }> {
  const engine = createEmbeddedEngine();
  try {
    const running = engine.run(r, {});
    await inStep.promise;
    const executionId = (await engine.store.list()).records[0]!.id;
    const cancelling = engine.cancel(executionId, { reason: 'stop' });
    unblock.open();
    return { result: await running, cancelled: await cancelling };
  } finally {
    await engine.close();
  }
}

const tracked = (log: string[]) =>
  reactor('order')
    .input({ id: z.string() })
    .step('reserve', { run: () => 'R', undo: (v) => void log.push(`undo reserve(${v})`) })
    .step('charge', { waitFor: ['reserve'], run: () => 'C', undo: (v) => void log.push(`undo charge(${v})`) })
    .returns('charge');

describe('undo on demand', () => {
  test('a completed execution is undone newest first and ends cancelled; undoing it again is refused clearly', async () => {
    const log: string[] = [];
    const engine = createEmbeddedEngine();
    const done = await engine.run(tracked(log), { id: '1' });
    expect(done.status).toBe('completed');
    const undone = await engine.undo(done.executionId, { reason: 'customer asked' });
    expect(undone).toMatchObject({ status: 'cancelled', reason: 'customer asked' });
    expect(log).toEqual(['undo charge(C)', 'undo reserve(R)']);
    expect((await engine.result(done.executionId))?.status).toBe('cancelled');
    await expect(engine.undo(done.executionId)).rejects.toBeInstanceOf(ExecutionStateError);
    await engine.close();
  });
});

describe('cancel', () => {
  test('a queued execution is cancelled before any step runs; its job later finds it finished', async () => {
    const log: string[] = [];
    const memory = createMemoryQueue();
    const engine = createEngine({
      store: new MemoryStore(),
      coordinator: new MemoryCoordinator(),
      queue: memory.queue,
      waitList: memory.waitList,
    });
    const queued = await engine.start(tracked(log), { id: '2' });
    const cancelled = await engine.cancel(queued.executionId);
    expect(cancelled.status).toBe('cancelled');
    memory.consumer.start(async () => undefined, { concurrency: 1 });
    await memory.drain();
    expect(log).toEqual([]);
    await expect(engine.cancel(queued.executionId)).rejects.toThrow(/cannot cancel execution .*: it is cancelled/);
  });

  test('an execution running inline stops at the next step boundary and rolls back what it completed', async () => {
    const log: string[] = [];
    const inStep = gate();
    const release = gate();
    let after = false;
    const r = reactor('long')
      .step('first', {
        run: async () => (inStep.open(), await release.promise, 1),
        undo: () => void log.push('undo first'),
      })
      .step('second', { waitFor: ['first'], run: () => void (after = true) })
      .build();
    const { result, cancelled } = await cancelInStep(r, inStep, release);
    expect(result).toMatchObject({ status: 'cancelled', reason: 'stop' });
    expect(cancelled).toMatchObject({ status: 'cancelled' });
    expect(after).toBe(false);
    expect(log).toEqual(['undo first']);
  });

  test('a cancel wins over a step that fails while the cancel is on its way: the run ends cancelled, not failed', async () => {
    const log: string[] = [];
    const inStep = gate();
    const fail = gate();
    const r = reactor('cancel-then-fail')
      .step('first', { run: () => 1, undo: () => void log.push('undo first') })
      .step('second', {
        waitFor: ['first'],
        retry: { maxAttempts: 3, baseDelay: 10 },
        run: async () => (inStep.open(), await fail.promise, Promise.reject(new Error('boom'))),
      })
      .build();
    const { result, cancelled } = await cancelInStep(r, inStep, fail);
    expect(result).toMatchObject({ status: 'cancelled', reason: 'stop' });
    expect(cancelled).toMatchObject({ status: 'cancelled' });
    expect(log).toEqual(['undo first']);
  });

  test('a parked execution is cancelled and leaves its wait list', async () => {
    const coordinator = new MemoryCoordinator();
    const engine = createEmbeddedEngine({ coordinator, background: { parkFallbackMs: 60_000 } });
    await coordinator.lockAcquire({ key: 'acct', holder: { owner: 'other' }, ttlMs: 60_000 });
    const r = reactor('locked')
      .withLock({ key: () => 'acct' })
      .step('s', { run: () => 1 })
      .build();
    const queued = await engine.start(r, {});
    await expect.poll(async () => (await engine.result(queued.executionId))?.status).toBe('parked');
    expect((await engine.cancel(queued.executionId)).status).toBe('cancelled');
    await coordinator.lockRelease('acct', 'other');
    await engine.drain();
    expect((await engine.result(queued.executionId))?.status).toBe('cancelled');
    await engine.close();
  });
});

describe('retry', () => {
  test('a failed execution is run again as a new execution linked to it', async () => {
    let fail = true;
    const r = reactor('flaky')
      .input({ n: z.number() })
      .step('s', {
        args: ($) => ({ n: $.input('n') }),
        run: ({ n }) => (fail ? Promise.reject(new Error('down')) : n * 2),
      })
      .returns('s');
    const engine = createEmbeddedEngine();
    const failed = await engine.run(r, { n: 21 });
    expect(failed.status).toBe('failed');
    fail = false;
    const queued = await engine.retry(failed.executionId);
    expect(queued.executionId).not.toBe(failed.executionId);
    const done = await engine.wait(queued.executionId);
    expect(done?.status === 'completed' && done.value).toBe(42);
    expect((await engine.store.get(queued.executionId))?.retryOf).toBe(failed.executionId);
    await expect(engine.retry(queued.executionId)).rejects.toThrow(
      /only a failed, halted, cancelled or aborted execution is retried/,
    );
    await engine.close();
  });
});
