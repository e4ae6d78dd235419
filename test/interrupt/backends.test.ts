/**
 * Interrupts in workers on every backend of the matrix: pause in a worker, bad then good payload,
 * completion; two concurrent resumes from two processes (exactly one is accepted; the server
 * backends); scenario 22 (a resume while the reactor lock is held is deferred to a worker and
 * completes once the lock frees); an active timeout; a duplicate correlation id.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { z } from 'zod';
import {
  CorrelationTakenError,
  reactor,
  ResumePayloadError,
  type AnyReactorDefinition,
  type ReactorEvent,
} from '../../src/index.js';
import { describeOnBackends, testWhere, type MatrixRuntime } from '../support/backend-matrix.js';
import { spawnJsonChild } from '../support/json-child.js';
import { approval } from './helpers.js';

const RESUME_CHILD = fileURLToPath(new URL('./resume-child.ts', import.meta.url));

interface Rig {
  readonly runtime: MatrixRuntime;
  readonly events: ReactorEvent[];
}

async function statusOf(r: Rig, id: string): Promise<string | undefined> {
  return (await r.runtime.engine.result(id))?.status;
}

describeOnBackends('interrupts in workers', (backend) => {
  const children = new Set<ChildProcess>();
  afterEach(() => {
    for (const child of children) child.kill('SIGKILL');
    children.clear();
  });

  function rig(reactors: readonly AnyReactorDefinition[], background = {}): Rig {
    const runtime = backend.runtime({ reactors, background });
    const events: ReactorEvent[] = [];
    runtime.engine.subscribe((e) => events.push(e));
    return { runtime, events };
  }

  test('a run pauses in a worker; a bad payload is counted; a good one completes it in a worker', async () => {
    const log: string[] = [];
    const r = approval(log, { maxAttempts: 3 }).extend('approval-bg').background('all').returns('ship');
    const { runtime } = rig([r]);
    runtime.startWorker({ concurrency: 2 });
    const queued = await runtime.engine.start(r, { orderId: 'w1' });
    expect(await runtime.engine.wait(queued.executionId, { timeoutMs: 10_000 })).toBePaused('approve');
    const bad = await runtime.engine.resume({ correlationId: 'order:w1' }, { approved: 'no' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ResumePayloadError);
    expect(bad).toMatchObject({ details: { attempt: 1, maxAttempts: 3, exhausted: false } });
    expect((await runtime.backend.store.get(queued.executionId))?.interrupts?.[0]?.invalidAttempts).toBe(1);
    expect((await runtime.engine.resume(queued.executionId, { approved: true })).status).toBe('queued');
    await expect
      .poll(() => statusOf({ runtime, events: [] }, queued.executionId), { timeout: 10_000 })
      .toBe('completed');
    const done = await runtime.engine.result(queued.executionId);
    expect(done?.status === 'completed' && done.value).toBe('shipped');
    expect(done).toHaveResumed('approve');
    expect(log).toEqual(['reserve w1', 'ship true by ops']);
  });

  // Two processes share a server's backend; the memory backend lives in one process.
  testWhere(backend.shared)(
    'two concurrent resumes from two processes: exactly one is accepted, the other is refused as already resumed',
    async () => {
      const log: string[] = [];
      const r = approval(log);
      const main = rig([r]);
      const paused = await main.runtime.engine.run(r, { orderId: 'c1' });
      expect(paused).toBePaused('approve');
      const args = {
        backend: backend.name,
        address: backend.address(),
        namespace: main.runtime.namespace,
        executionId: paused.executionId,
        payload: { approved: true },
      };
      const resumers = [spawnJsonChild(RESUME_CHILD, args, children), spawnJsonChild(RESUME_CHILD, args, children)];
      await Promise.all(resumers.map((c) => c.line((v) => v.ready === true)));
      for (const c of resumers) c.child.stdin?.write('go\n');
      const outcomes = await Promise.all(
        resumers.map((c) => c.line<Record<string, unknown>>((v) => 'accepted' in v || 'refused' in v)),
      );
      expect(outcomes.filter((o) => o.accepted === true)).toEqual([{ accepted: true, status: 'completed' }]);
      expect(outcomes.filter((o) => 'refused' in o)).toEqual([
        { refused: 'resume_refused', reason: 'already_resumed' },
      ]);
      expect(await statusOf(main, paused.executionId)).toBe('completed');
    },
  );

  test('scenario 22: a resume while the reactor lock is held is handed to a worker (queued); the run completes once the lock frees', async () => {
    const locked = reactor('locked-approval')
      .input({ orderId: z.string() })
      .withLock({ key: ({ orderId }) => `order:${orderId}`, ttl: '10s' })
      .interrupt('approve', { payload: { approved: z.boolean() } })
      .step('ship', {
        args: ($) => ({ ok: $.result('approve', 'approved') }),
        run: ({ ok }) => (ok ? 'shipped' : 'kept'),
      })
      .returns('ship');
    const main = rig([locked], { parkFallbackMs: 300 });
    const paused = await main.runtime.engine.run(locked, { orderId: 's22' });
    expect(paused).toBePaused('approve');
    const { coordinator } = main.runtime.backend;
    expect(await coordinator.lockState('order:s22')).toBeUndefined(); // a paused run holds nothing
    await coordinator.lockAcquire({ key: 'order:s22', holder: { owner: 'someone-else' }, ttlMs: 10_000 });
    const deferred = await main.runtime.engine.resume(paused.executionId, { approved: true });
    expect(deferred.status).toBe('queued');
    expect(deferred.trace.filter((e) => e.type === 'run.queued').at(-1)).toMatchObject({ reason: 'busy' });
    expect(deferred.trace.filter((e) => e.type === 'interrupt.resumed')).toMatchObject([{ mode: 'background' }]);
    main.runtime.startWorker({ concurrency: 2 });
    await expect.poll(() => statusOf(main, paused.executionId), { timeout: 10_000 }).toBe('parked');
    await coordinator.lockRelease('order:s22', 'someone-else');
    await expect.poll(() => statusOf(main, paused.executionId), { timeout: 10_000 }).toBe('completed');
    const done = await main.runtime.engine.result(paused.executionId);
    expect(done?.status === 'completed' && done.value).toBe('shipped');
  });

  test('an active timeout fails and rolls back the run in a worker when nobody resumes it', async () => {
    const log: string[] = [];
    const r = approval(log, { timeout: 300, timeoutStrategy: 'active' });
    const main = rig([r]);
    main.runtime.startWorker({ concurrency: 2 });
    const paused = await main.runtime.engine.run(r, { orderId: 't1' });
    expect(paused).toBePaused('approve');
    await expect.poll(() => statusOf(main, paused.executionId), { timeout: 10_000 }).toBe('failed');
    const failed = await main.runtime.engine.result(paused.executionId);
    expect(failed).toHaveFailedAt('approve');
    expect(failed?.status === 'failed' && failed.error).toMatchObject({ code: 'interrupt_timed_out' });
    expect(log).toEqual(['reserve t1', 'undo reserve R-t1']);
    await expect(main.runtime.engine.resume(paused.executionId, { approved: true })).rejects.toMatchObject({
      code: 'resume_refused',
    });
  });

  test('a correlation id is unique across executions (an atomic claim): a second paused run on it fails at the interrupt', async () => {
    const r = approval([]);
    const main = rig([r]);
    const first = await main.runtime.engine.run(r, { orderId: 'dup' });
    const second = await main.runtime.engine.run(r, { orderId: 'dup' });
    expect(second.status === 'failed' && second.error).toBeInstanceOf(CorrelationTakenError);
    expect(second.status === 'failed' && second.error).toMatchObject({ details: { holder: first.executionId } });
    expect((await main.runtime.engine.resume({ correlationId: 'order:dup' }, { approved: true })).executionId).toBe(
      first.executionId,
    );
  });
});
