/**
 * The fenced execution state machine on the memory backend (decision 064): a worker job that
 * lost its execution's liveness lease aborts its step with `lease_lost`, rolls nothing back and
 * writes nothing; the status table refuses an illegal transition.
 */
import { describe, expect, it } from 'vitest';
import { reactor } from '../../src/index.js';
import { checkTransition, TRANSITIONS } from '../../src/engine/model/status-machine.js';
import { gate, manualEngine, until } from './helpers.js';

describe('a worker that lost its liveness lease writes nothing', () => {
  it('taken over mid-step: the step signal aborts with lease_lost, no undo runs, the record keeps the holder’s status', async () => {
    const m = manualEngine({ background: { livenessTtlMs: 300 } });
    const entered = gate();
    const undone: string[] = [];
    let reason: unknown;
    const r = reactor('fenced')
      .step('a', { run: () => 'a', undo: () => void undone.push('a') })
      .step('b', {
        waitFor: ['a'],
        run: async (_args, ctx) => {
          entered.open();
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
          reason = ctx.signal.reason;
          throw ctx.signal.reason as Error;
        },
      })
      .background('all')
      .returns('b');
    m.startWorker(1);
    const { executionId } = await m.engine.start(r, {});
    await entered.promise;
    // Another worker takes the execution over: the lease changes hands under the running job.
    const key = `execution:${executionId}`;
    const held = await m.coordinator.lockState(key);
    await m.coordinator.lockRelease(key, held!.holder.owner);
    await m.coordinator.lockAcquire({ key, holder: { owner: 'other-worker', executionId }, ttlMs: 60_000 });
    const before = await m.store.get(executionId);

    await until(() => m.events.some((e) => e.type === 'run.stopped'), 5_000, 'run.stopped');
    await until(() => reason !== undefined, 5_000, 'the step to see its abort');
    expect((reason as { code?: string }).code).toBe('lease_lost');
    expect(m.events.filter((e) => e.type === 'run.stopped')).toEqual([
      expect.objectContaining({ reason: 'lease_lost' }),
    ]);
    expect(
      m.events.some((e) => e.type === 'run.failed' || e.type === 'run.rolling_back' || e.type === 'step.undone'),
    ).toBe(false);
    expect(undone).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 150)); // a trailing checkpoint would land now
    expect(await m.store.get(executionId)).toEqual(before);
    expect((await m.coordinator.lockState(key))?.holder.owner).toBe('other-worker');
  });
});

describe('the status table', () => {
  it('lets a running execution end any way, a finished one only into an undo', () => {
    expect(() => checkTransition('e', 'running', 'completed', 'run')).not.toThrow();
    expect(() => checkTransition('e', undefined, 'running', 'run')).not.toThrow();
    expect(() => checkTransition('e', 'completed', 'rolling_back', 'undo')).not.toThrow();
    expect(() => checkTransition('e', 'completed', 'completed', 'run')).not.toThrow();
    expect(() => checkTransition('e', 'failed', 'running', 'run')).toThrow(
      expect.objectContaining({
        code: 'status_transition_invalid',
        details: { executionId: 'e', from: 'failed', to: 'running' },
      }),
    );
    expect(() => checkTransition('e', 'completed', 'failed', 'run')).toThrow(
      expect.objectContaining({ code: 'status_transition_invalid' }),
    );
    expect(() => checkTransition('e', 'rolling_back', 'running', 'run')).toThrow(
      expect.objectContaining({ code: 'status_transition_invalid' }),
    );
    expect(() => checkTransition('e', 'cancelled', 'pending', 'undo')).toThrow(
      expect.objectContaining({ code: 'status_transition_invalid' }),
    );
    expect(Object.keys(TRANSITIONS.aborted)).toEqual(['aborted']);
  });

  it('reopens a finished execution only for its cause: an undo into a rollback, an undone fan-out element into cancelled', () => {
    for (const from of ['completed', 'halted'] as const) {
      expect(() => checkTransition('e', from, 'rolling_back', 'undo')).not.toThrow();
      expect(() => checkTransition('e', from, 'cancelled', 'element_undone')).not.toThrow();
      // The execution's own work never reopens it, nor does an undo end it cancelled without its rollback.
      expect(() => checkTransition('e', from, 'rolling_back', 'run')).toThrow(
        expect.objectContaining({
          code: 'status_transition_invalid',
          message: `execution e: status ${from} cannot become rolling_back (written by run)`,
        }),
      );
      expect(() => checkTransition('e', from, 'cancelled', 'run')).toThrow(
        expect.objectContaining({ code: 'status_transition_invalid' }),
      );
      expect(() => checkTransition('e', from, 'cancelled', 'undo')).toThrow(
        expect.objectContaining({ code: 'status_transition_invalid' }),
      );
      expect(() => checkTransition('e', from, 'rolling_back', 'element_undone')).toThrow(
        expect.objectContaining({ code: 'status_transition_invalid' }),
      );
    }
    // A live execution rolls back for its own work or an undo; an undone fan-out element is always a finished one.
    for (const cause of ['run', 'undo'] as const)
      expect(() => checkTransition('e', 'parked', 'rolling_back', cause)).not.toThrow();
    expect(() => checkTransition('e', 'parked', 'rolling_back', 'element_undone')).toThrow(
      expect.objectContaining({ code: 'status_transition_invalid' }),
    );
  });
});

describe('the lease on the test engine’s manual clock', () => {
  it('a jump of many lease lengths while a background step runs keeps the lease: the step runs once', async () => {
    const { createTestEngine } = await import('../../src/testing/index.js');
    let runs = 0;
    let started!: () => void;
    const began = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const gateOpen = new Promise<void>((resolve) => (release = resolve));
    const slow = reactor('slow-jump')
      .step('wait', { run: async () => (runs++, started(), await gateOpen, 1) })
      .background('all')
      .returns('wait');
    const t = createTestEngine();
    const stopped: unknown[] = [];
    t.engine.subscribe((e) => void (e.type === 'run.stopped' && stopped.push(e)));
    const queued = await t.engine.run(slow, {});
    const drained = t.drain();
    await began;
    t.clock.advance(10 * 60_000); // twenty lease lengths at once; every renewal fires inside the jump
    release();
    await drained;
    expect((await t.engine.result(queued.executionId))?.status).toBe('completed');
    expect(runs).toBe(1);
    expect(stopped).toEqual([]);
  });
});
