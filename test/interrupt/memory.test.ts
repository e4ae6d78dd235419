/**
 * Interrupts on the memory backend (manual clock, no sleeps): pause, resume by id and by
 * correlation id, invalid payloads counted toward maxAttempts, the single-claim resume, refusals,
 * lazy and active timeouts, background resume, cancel and undo of runs that paused.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  CorrelationTakenError,
  errorFromJSON,
  errorToJSON,
  InterruptTimeoutError,
  reactor,
  ResumePayloadError,
  ResumeRefusedError,
  type ReactorEvent,
} from '../../src/index.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';
import { MemoryStore } from '../../src/storage/memory/store.js';
import { RESUME_CLAIM_TTL_MS } from '../../src/engine/api/interrupt/resume.js';
import { approval, memoryRig, settleAll } from './helpers.js';

const types = (trace: readonly ReactorEvent[]): string[] => trace.map((e) => e.type);

describe('pause', () => {
  test('the run pauses at the interrupt: status paused, persisted, with what it waits for; later steps do not run', async () => {
    const log: string[] = [];
    const t = createTestEngine();
    const paused = await t.run(approval(log, { timeout: 60_000 }), { orderId: 'o1' });
    expect(paused).toBePaused('approve');
    expect(paused.status === 'paused' && paused.interrupts).toEqual([
      { step: 'approve', correlationId: 'order:o1', timeoutAt: t.clock.now() + 60_000 },
    ]);
    expect(log).toEqual(['reserve o1']);
    const record = await t.store.get(paused.executionId);
    expect(record?.status).toBe('paused');
    expect(record?.interrupts).toMatchObject([{ step: 'approve', correlationId: 'order:o1', invalidAttempts: 0 }]);
    expect(await t.engine.result(paused.executionId)).toMatchObject({
      status: 'paused',
      interrupts: [{ step: 'approve' }],
    });
    expect(types(paused.trace)).toEqual([
      'run.started',
      'step.started',
      'step.succeeded',
      'step.started',
      'interrupt.paused',
      'run.paused',
    ]);
  });
});

describe('resume', () => {
  test('a bad payload is refused with a typed error and counted; a good one completes the run with the payload as the step result', async () => {
    const log: string[] = [];
    const t = createTestEngine();
    const paused = await t.run(approval(log, { maxAttempts: 3 }), { orderId: 'o2' });
    const bad = await t.resume(paused, { approved: 'yes' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ResumePayloadError);
    expect(bad).toMatchObject({
      code: 'resume_payload_invalid',
      issues: [{ path: 'approved' }],
      details: { attempt: 1, maxAttempts: 3, exhausted: false },
    });
    expect(errorFromJSON(errorToJSON(bad))).toMatchObject({
      code: 'resume_payload_invalid',
      details: { attempt: 1, exhausted: false },
    });
    expect((await t.store.get(paused.executionId))?.interrupts?.[0]?.invalidAttempts).toBe(1);
    expect(t.events.filter((e) => e.type === 'interrupt.payload_invalid')).toMatchObject([
      { step: 'approve', attempt: 1, maxAttempts: 3 },
    ]);
    const done = await t.resume(paused, { approved: true });
    expect(done).toHaveCompleted();
    expect(done).toHaveResumed('approve');
    expect(done).toHaveStepResult('approve', { approved: true, by: 'ops' });
    expect(done.status === 'completed' && done.value).toBe('shipped');
    expect(log).toEqual(['reserve o2', 'ship true by ops']);
    expect(types(done.trace)).toContain('interrupt.payload_invalid');
  });

  test('by correlation id', async () => {
    const t = createTestEngine();
    await t.run(approval([]), { orderId: 'o3' });
    const done = await t.engine.resume({ correlationId: 'order:o3' }, { approved: false, by: 'ann' });
    expect(done.status === 'completed' && done.value).toBe('kept');
  });

  test('the last allowed invalid payload rolls the run back and ends it failed', async () => {
    const log: string[] = [];
    const t = createTestEngine();
    const paused = await t.run(approval(log, { maxAttempts: 2 }), { orderId: 'o4' });
    await expect(t.resume(paused, {})).rejects.toMatchObject({ details: { attempt: 1, exhausted: false } });
    await expect(t.resume(paused, { approved: 1 })).rejects.toMatchObject({
      code: 'resume_payload_invalid',
      details: { attempt: 2, exhausted: true },
    });
    expect(log).toEqual(['reserve o4', 'undo reserve R-o4']);
    const failed = await t.engine.result(paused.executionId);
    expect(failed).toHaveFailedAt('approve');
    expect(failed?.status === 'failed' && failed.error).toMatchObject({ code: 'resume_payload_invalid' });
    await expect(t.resume(paused, { approved: true })).rejects.toMatchObject({
      code: 'resume_refused',
      details: { reason: 'not_paused', status: 'failed' },
    });
  });

  test('two concurrent resumes: exactly one is accepted, the other is refused as already resumed; the rest runs once', async () => {
    const log: string[] = [];
    const t = createTestEngine();
    const paused = await t.run(approval(log), { orderId: 'o5' });
    const { ok, errors } = await settleAll([
      t.resume(paused, { approved: true, by: 'a' }),
      t.resume(paused, { approved: true, by: 'b' }),
    ]);
    expect(ok).toHaveLength(1);
    expect(ok[0]).toHaveCompleted();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ResumeRefusedError);
    expect(errors[0]).toMatchObject({ code: 'resume_refused', details: { reason: 'already_resumed' } });
    expect(log.filter((l) => l.startsWith('ship'))).toHaveLength(1);
    expect(t.events.filter((e) => e.type === 'interrupt.rejected')).toMatchObject([
      { reason: 'already_resumed', step: 'approve' },
    ]);
  });

  test('refusals: a finished run (already resumed), a cancelled run, an unknown correlation id, an unknown execution, an ambiguous target', async () => {
    const t = createTestEngine();
    const r = approval([]);
    const first = await t.run(r, { orderId: 'o6' });
    await t.resume(first, { approved: true });
    await expect(t.resume(first, { approved: true })).rejects.toMatchObject({ details: { reason: 'already_resumed' } });
    const second = await t.run(r, { orderId: 'o7' });
    expect((await t.engine.cancel(second.executionId)).status).toBe('cancelled');
    await expect(t.resume(second, { approved: true })).rejects.toMatchObject({
      details: { reason: 'not_paused', status: 'cancelled' },
    });
    await expect(t.engine.resume({ correlationId: 'order:nobody' }, { approved: true })).rejects.toMatchObject({
      details: { reason: 'unknown_correlation' },
    });
    await expect(t.engine.resume('no-such-execution', { approved: true })).rejects.toMatchObject({
      details: { reason: 'not_found' },
    });
    const third = await t.run(r, { orderId: 'o8' });
    await expect(t.resume(third, { approved: true }, { step: 'ship' })).rejects.toMatchObject({
      details: { reason: 'no_such_interrupt' },
    });
    // Refusals of a known execution are events too (not persisted: nothing changed).
    expect(t.events.flatMap((e) => (e.type === 'interrupt.rejected' ? [e.reason] : []))).toEqual([
      'already_resumed',
      'not_paused',
      'no_such_interrupt',
    ]);
  });

  test('a correlation id held by a paused run is refused to a second run (it fails at the interrupt, its work undone); a finished holder frees it', async () => {
    const log: string[] = [];
    const t = createTestEngine();
    const r = approval(log);
    const first = await t.run(r, { orderId: 'dup' });
    const second = await t.run(r, { orderId: 'dup' });
    expect(second).toHaveFailedAt('approve');
    expect(second.status === 'failed' && second.error).toBeInstanceOf(CorrelationTakenError);
    expect(second.status === 'failed' && second.error).toMatchObject({
      code: 'correlation_id_taken',
      details: { holder: first.executionId },
    });
    expect(log).toEqual(['reserve dup', 'reserve dup', 'undo reserve R-dup']);
    await t.resume(first, { approved: true });
    expect(await t.run(r, { orderId: 'dup' })).toBePaused('approve');
  });
});

describe('timeouts', () => {
  test('lazy: checked when a resume arrives after it passed; the run rolls back and ends failed', async () => {
    const log: string[] = [];
    const t = createTestEngine();
    const paused = await t.run(approval(log, { timeout: 1_000 }), { orderId: 't1' });
    t.clock.advance(1_000);
    const error = await t.resume(paused, { approved: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptTimeoutError);
    expect(error).toMatchObject({ code: 'interrupt_timed_out', details: { step: 'approve', strategy: 'lazy' } });
    expect(log).toEqual(['reserve t1', 'undo reserve R-t1']);
    const failed = await t.engine.result(paused.executionId);
    expect(failed).toHaveFailedAt('approve');
    expect(failed?.trace.map((e) => e.type)).toContain('interrupt.timed_out');
  });

  test('active: a delayed job fails and rolls back the run when the timeout passes, with nobody resuming', async () => {
    const log: string[] = [];
    const rig = memoryRig({ autoAdvance: false });
    const worker = rig.startWorker();
    const paused = await rig.engine.run(approval(log, { timeout: 5_000, timeoutStrategy: 'active' }), {
      orderId: 't2',
    });
    expect(paused).toBePaused('approve');
    expect(rig.memory.queue.counts()).toEqual({ ready: 0, delayed: 1, running: 0 });
    rig.clock.advance(4_999);
    expect(rig.memory.queue.counts().delayed).toBe(1);
    rig.clock.advance(1);
    await rig.memory.drain();
    const failed = await rig.engine.result(paused.executionId);
    expect(failed).toHaveFailedAt('approve');
    expect(failed?.status === 'failed' && failed.error).toMatchObject({
      code: 'interrupt_timed_out',
      details: { strategy: 'active' },
    });
    expect(log).toEqual(['reserve t2', 'undo reserve R-t2']);
    await expect(rig.engine.resume(paused.executionId, { approved: true })).rejects.toMatchObject({
      details: { reason: 'not_paused' },
    });
    await worker.stop();
  });

  test('active: a resume before the timeout wins; the timeout job then changes nothing', async () => {
    const log: string[] = [];
    const rig = memoryRig({ autoAdvance: false });
    const worker = rig.startWorker();
    const paused = await rig.engine.run(approval(log, { timeout: 5_000, timeoutStrategy: 'active' }), {
      orderId: 't3',
    });
    expect((await rig.engine.resume(paused.executionId, { approved: true })).status).toBe('completed');
    rig.clock.advance(5_000);
    await rig.memory.drain();
    expect((await rig.engine.result(paused.executionId))?.status).toBe('completed');
    expect(log).toEqual(['reserve t3', 'ship true by ops']);
    await worker.stop();
  });
});

describe('where the resumed run continues', () => {
  test("resume: 'background' hands it to a worker: the caller gets queued, the worker completes it", async () => {
    const log: string[] = [];
    const rig = memoryRig();
    const paused = await rig.engine.run(approval(log, { resume: 'background' }), { orderId: 'b1' });
    const queued = await rig.engine.resume(paused.executionId, { approved: true });
    expect(queued.status).toBe('queued');
    expect((await rig.store.get(paused.executionId))?.status).toBe('pending');
    expect(log).toEqual(['reserve b1']);
    const worker = rig.startWorker();
    await rig.memory.drain();
    const done = await rig.engine.result(paused.executionId);
    expect(done?.status === 'completed' && done.value).toBe('shipped');
    expect(done).toHaveResumed('approve');
    expect(log).toEqual(['reserve b1', 'ship true by ops']);
    await worker.stop();
  });
});

describe('operations on runs that paused', () => {
  test('cancel of a paused run rolls back what completed; it ends cancelled', async () => {
    const log: string[] = [];
    const t = createTestEngine();
    const paused = await t.run(approval(log), { orderId: 'c1' });
    expect(await t.engine.cancel(paused.executionId, { reason: 'customer left' })).toMatchObject({
      status: 'cancelled',
      reason: 'customer left',
    });
    expect(log).toEqual(['reserve c1', 'undo reserve R-c1']);
  });

  test('undo of a completed run that had an interrupt undoes every step, newest first', async () => {
    const log: string[] = [];
    const t = createTestEngine();
    const paused = await t.run(approval(log), { orderId: 'u1' });
    await t.resume(paused, { approved: true });
    expect((await t.engine.undo(paused.executionId)).status).toBe('cancelled');
    expect(log).toEqual(['reserve u1', 'ship true by ops', 'undo ship', 'undo reserve R-u1']);
  });
});

describe('several interrupts and bad correlation keys', () => {
  test('two independent interrupts pause together; each is resumed by its step; the run completes after the second', async () => {
    const r = reactor('two-approvals')
      .interrupt('legal', { payload: { ok: z.boolean() } })
      .interrupt('finance', { payload: { ok: z.boolean() } })
      .step('done', {
        args: ($) => ({ a: $.result('legal', 'ok'), b: $.result('finance', 'ok') }),
        run: ({ a, b }) => a && b,
      })
      .returns('done');
    const t = createTestEngine();
    const paused = await t.run(r, {});
    expect(paused.status === 'paused' && paused.interrupts.map((i) => i.step)).toEqual(['legal', 'finance']);
    await expect(t.resume(paused, { ok: true })).rejects.toMatchObject({ details: { reason: 'no_such_interrupt' } });
    const half = await t.resume(paused, { ok: true }, { step: 'finance' });
    expect(half).toBePaused('legal');
    expect(half.status === 'paused' && half.interrupts.map((i) => i.step)).toEqual(['legal']);
    const done = await t.resume(paused, { ok: true });
    expect(done.status === 'completed' && done.value).toBe(true);
  });

  test('a correlation key that throws or is not a non-empty string fails the interrupt before it pauses', async () => {
    const t = createTestEngine();
    for (const correlationId of [
      () => {
        throw new Error('no id');
      },
      () => '',
      () => 42 as unknown as string,
    ]) {
      const result = await t.run(
        reactor('bad-key')
          .interrupt('approve', { payload: { ok: z.boolean() }, correlationId })
          .build(),
        {},
      );
      expect(result).toHaveFailedAt('approve');
      expect(result.status === 'failed' && result.error).toMatchObject({ code: 'correlation_id_invalid' });
    }
  });
});

describe('resume claims (decision 050)', () => {
  test('a resume turned away because another process works on the run ("try again") gives its claim back: the retry is accepted', async () => {
    const t = createTestEngine();
    const paused = await t.run(approval([]), { orderId: 'o20' });
    // Another process holds the execution's liveness lock (a worker, a cancel) for longer than a resume waits.
    const busy = await t.coordinator.lockAcquire({
      key: `execution:${paused.executionId}`,
      holder: { owner: 'elsewhere', executionId: paused.executionId },
      ttlMs: 600_000,
    });
    expect(busy.acquired).toBe(true);
    await expect(t.resume(paused, { approved: true })).rejects.toMatchObject({
      code: 'resume_refused',
      details: { reason: 'not_paused' },
      message: expect.stringContaining('try again'),
    });
    await t.coordinator.lockRelease(`execution:${paused.executionId}`, 'elsewhere');
    expect(await t.resume(paused, { approved: true })).toHaveCompleted();
  });

  test('a claim whose winner died before writing the payload lapses: later resumes are refused only until then', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock });
    const t = createTestEngine({ clock, store });
    const paused = await t.run(approval([]), { orderId: 'o21' });
    // The winner of a race claimed the resume, then its process died before the payload reached the record.
    expect(await store.claimResume(paused.executionId, 'approve', 'dead-process', RESUME_CLAIM_TTL_MS)).toEqual({
      claimed: true,
    });
    await expect(t.resume(paused, { approved: true })).rejects.toMatchObject({
      details: { reason: 'already_resumed' },
    });
    expect((await t.store.get(paused.executionId))?.status).toBe('paused');
    clock.advance(RESUME_CLAIM_TTL_MS);
    expect(await t.resume(paused, { approved: true })).toHaveCompleted();
  });

  test('the record, not the claim, answers an interrupt already resumed, after every claim has lapsed', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock });
    const t = createTestEngine({ clock, store });
    const paused = await t.run(approval([]), { orderId: 'o22' });
    expect(await t.resume(paused, { approved: true })).toHaveCompleted();
    clock.advance(RESUME_CLAIM_TTL_MS * 2);
    await expect(t.resume(paused, { approved: false })).rejects.toMatchObject({
      details: { reason: 'already_resumed' },
    });
    expect(await store.claimResume(paused.executionId, 'approve', 'late', RESUME_CLAIM_TTL_MS)).toEqual({
      claimed: true,
    }); // the lease itself is gone
  });
});
