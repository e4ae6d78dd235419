/**
 * Interrupts on real Redis and BullMQ workers (a throwaway redis-server): pause in a worker,
 * bad then good payload, completion; two concurrent resumes from two processes (exactly one is
 * accepted); scenario 22 (a resume while the reactor lock is held is deferred to a worker and
 * completes once the lock frees); an active timeout; a duplicate correlation id.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import {
  CorrelationTakenError,
  reactor,
  ResumePayloadError,
  type AnyReactorDefinition,
  type ReactorEvent,
} from '../../src/index.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { spawnJsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { approval } from './helpers.js';

const RESUME_CHILD = fileURLToPath(new URL('./resume-child.ts', import.meta.url));
let server: RedisServerHandle;
const closers: (() => Promise<void>)[] = [];
const children = new Set<ChildProcess>();

beforeAll(async () => {
  server = await startRedisServer();
});
afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  while (closers.length > 0) await closers.pop()?.();
});
afterAll(async () => server.dispose());

interface Rig {
  readonly runtime: RedisRuntime;
  readonly prefix: string;
  readonly events: ReactorEvent[];
}

function rig(reactors: readonly AnyReactorDefinition[], background = {}): Rig {
  const prefix = `it-${crypto.randomUUID().slice(0, 8)}`;
  const runtime = createRedisRuntime({ url: server.url, prefix, queueName: `${prefix}-q`, reactors, background });
  closers.push(() => runtime.close());
  const events: ReactorEvent[] = [];
  runtime.engine.subscribe((e) => events.push(e));
  return { runtime, prefix, events };
}

async function statusOf(r: Rig, id: string): Promise<string | undefined> {
  return (await r.runtime.engine.result(id))?.status;
}

describe('interrupts on Redis + BullMQ', () => {
  test('a run pauses in a worker; a bad payload is counted; a good one completes it in a worker', async () => {
    const log: string[] = [];
    const r = approval(log, { maxAttempts: 3 }).extend('approval-bg').background('all').returns('ship');
    const { runtime, prefix } = rig([r]);
    runtime.startWorker({ concurrency: 2 });
    const queued = await runtime.engine.start(r, { orderId: 'w1' });
    expect(await runtime.engine.wait(queued.executionId, { timeoutMs: 10_000 })).toBePaused('approve');
    const bad = await runtime.engine.resume({ correlationId: 'order:w1' }, { approved: 'no' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ResumePayloadError);
    expect(bad).toMatchObject({ details: { attempt: 1, maxAttempts: 3, exhausted: false } });
    const backend = createRedisBackend({ url: server.url, prefix });
    closers.push(() => backend.close());
    expect((await backend.store.get(queued.executionId))?.interrupts?.[0]?.invalidAttempts).toBe(1);
    expect((await runtime.engine.resume(queued.executionId, { approved: true })).status).toBe('queued');
    await expect
      .poll(() => statusOf({ runtime, prefix, events: [] }, queued.executionId), { timeout: 10_000 })
      .toBe('completed');
    const done = await runtime.engine.result(queued.executionId);
    expect(done?.status === 'completed' && done.value).toBe('shipped');
    expect(done).toHaveResumed('approve');
    expect(log).toEqual(['reserve w1', 'ship true by ops']);
  });

  test('two concurrent resumes from two processes: exactly one is accepted, the other is refused as already resumed', async () => {
    const log: string[] = [];
    const r = approval(log);
    const main = rig([r]);
    const paused = await main.runtime.engine.run(r, { orderId: 'c1' });
    expect(paused).toBePaused('approve');
    const args = { url: server.url, prefix: main.prefix, executionId: paused.executionId, payload: { approved: true } };
    const resumers = [spawnJsonChild(RESUME_CHILD, args, children), spawnJsonChild(RESUME_CHILD, args, children)];
    await Promise.all(resumers.map((c) => c.line((v) => v.ready === true)));
    for (const c of resumers) c.child.stdin?.write('go\n');
    const outcomes = await Promise.all(
      resumers.map((c) => c.line<Record<string, unknown>>((v) => 'accepted' in v || 'refused' in v)),
    );
    expect(outcomes.filter((o) => o.accepted === true)).toEqual([{ accepted: true, status: 'completed' }]);
    expect(outcomes.filter((o) => 'refused' in o)).toEqual([{ refused: 'resume_refused', reason: 'already_resumed' }]);
    expect(await statusOf(main, paused.executionId)).toBe('completed');
  });

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
    const backend = createRedisBackend({ url: server.url, prefix: main.prefix });
    closers.push(() => backend.close());
    expect(await backend.coordinator.lockState('order:s22')).toBeUndefined(); // a paused run holds nothing
    await backend.coordinator.lockAcquire({ key: 'order:s22', holder: { owner: 'someone-else' }, ttlMs: 10_000 });
    const deferred = await main.runtime.engine.resume(paused.executionId, { approved: true });
    expect(deferred.status).toBe('queued');
    expect(deferred.trace.filter((e) => e.type === 'run.queued').at(-1)).toMatchObject({ reason: 'busy' });
    expect(deferred.trace.filter((e) => e.type === 'interrupt.resumed')).toMatchObject([{ mode: 'background' }]);
    main.runtime.startWorker({ concurrency: 2 });
    await expect.poll(() => statusOf(main, paused.executionId), { timeout: 10_000 }).toBe('parked');
    await backend.coordinator.lockRelease('order:s22', 'someone-else');
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

  test('a correlation id is unique across executions (Lua claim): a second paused run on it fails at the interrupt', async () => {
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
