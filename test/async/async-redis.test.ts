/**
 * Async units on Redis + BullMQ, against one throwaway redis-server: scenarios 18 and 19 with a
 * BullMQ worker created in this process, an in-process reader waiting on a unit a worker runs,
 * and the full path in two real worker processes (`fixtures/async-worker-process.ts`): a parent
 * in a worker dispatching a unit (failing once, then retried in a worker) and a child execution,
 * its reader parked until both finish and woken across processes. Each scenario has its own
 * key prefix.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { reactor, type ReactorEvent } from '../../src/index.js';
import { toBullmqJobId } from '../../src/queue/job-id.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { CHILD_LINE_TIMEOUT_MS, spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { eventsOf, gate, until, untilStatus } from '../background/helpers.js';
import { asyncReactors } from './fixtures/async-reactors.js';

const WORKER = fileURLToPath(new URL('./fixtures/async-worker-process.ts', import.meta.url));
const QUEUE_NAME = 'ts-reactor';
/** The park fallback: out of reach of every wait here, so a parked run ends only by a real wake-up. */
const FALLBACK_MS = 600_000;
/** How long an outcome is waited for: a deadline for a loaded machine, not a bound. */
const WAIT_MS = 90_000;

let server: RedisServerHandle;
const closers: (() => Promise<unknown>)[] = [];
const children = new Set<ChildProcess>();
let seq = 0;

interface Scenario {
  readonly prefix: string;
  readonly runtime: RedisRuntime;
  readonly backend: RedisBackend;
  readonly queue: Queue;
}

function scenario(
  name: string,
  reactors: Parameters<typeof createRedisRuntime>[0]['reactors'] = [],
  background: Parameters<typeof createRedisRuntime>[0]['background'] = {},
): Scenario {
  const prefix = `${name}${++seq}`;
  const runtime = createRedisRuntime({
    url: server.url,
    prefix,
    reactors,
    background: { workerWaitMs: 0, parkFallbackMs: FALLBACK_MS, ...background },
  });
  const backend = createRedisBackend({ url: server.url, prefix });
  const queue = new Queue(QUEUE_NAME, { connection: { url: server.url }, prefix });
  closers.push(
    () => runtime.close(),
    () => backend.close(),
    () => queue.close(),
  );
  return { prefix, runtime, backend, queue };
}

async function jobCounts(queue: Queue): Promise<Record<string, number>> {
  return queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized', 'completed', 'failed');
}

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await server?.dispose();
});

describe('scenario 19 on Redis: a refused hand-off queues nothing', () => {
  test('inline: the reactor lock K is held, the asyncStep declares K — failed before enqueue, the BullMQ queue stays empty, no unit record', async () => {
    const { guarded } = asyncReactors();
    const inline = reactor('r19-inline')
      .input({ account: z.string() })
      .withLock({ key: ({ account }) => `acct:${account}` })
      .step('debit', { run: () => 'd', undo: () => undefined })
      .asyncStep('ship', {
        waitFor: ['debit'],
        args: ($) => ({ account: $.input('account') }),
        lock: { key: ({ account }) => `acct:${account}` },
        run: () => 'never',
      })
      .build();
    const s = scenario('r19a', [guarded, inline]);
    const result = await s.runtime.engine.run(inline, { account: 'a1' });
    expect(result).toMatchObject({
      status: 'failed',
      failedStep: 'ship',
      error: { code: 'handoff_refused', details: { key: 'acct:a1', primitive: 'lock' } },
    });
    expect(eventsOf(result.trace, 'step.undone').map((e) => e.step)).toEqual(['debit']);
    expect(eventsOf(result.trace, 'step.compensated')).toEqual([]);
    expect(Object.values(await jobCounts(s.queue)).every((n) => n === 0)).toBe(true);
    expect(await s.runtime.engine.result(`${result.executionId}~ship`)).toBeUndefined();
    expect(await s.backend.coordinator.lockState('acct:a1')).toBeUndefined();
  });

  test('in a worker: the background run fails with the refusal; its only jobs are its own, none for the unit', async () => {
    const { guarded } = asyncReactors();
    const s = scenario('r19w', [guarded]);
    const worker = s.runtime.startWorker({ concurrency: 2 });
    const started = await s.runtime.engine.start(guarded, { account: 'a2' });
    const done = await s.runtime.engine.wait(started.executionId, { timeoutMs: WAIT_MS, pollMs: 20 });
    await worker.stop();
    expect(done).toMatchObject({
      status: 'failed',
      failedStep: 'ship',
      error: { code: 'handoff_refused', details: { key: 'acct:a2', holder: expect.stringContaining('reactor-level') } },
    });
    expect(eventsOf(done?.trace ?? [], 'step.undone').map((e) => e.step)).toEqual(['debit']);
    expect(await s.queue.getJob(toBullmqJobId(`${started.executionId}~ship:1`))).toBeUndefined();
    const jobs = await s.queue.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed']);
    expect(jobs.map((j) => (j.data as { executionId: string }).executionId)).toEqual([started.executionId]);
  });
});

describe('scenario 18 on Redis with a BullMQ worker', () => {
  test('the unit parks on its lock keeping ordered position 1 on its own record; the release wakes it; the key drains', async () => {
    const holding = gate();
    const holderIn = gate();
    const holder = reactor('r18-holder')
      .withLock({ key: () => 'acct-18' })
      .step('hold', { run: async () => (holderIn.open(), await holding.promise) })
      .build();
    const order = reactor('r18-order')
      .input({ account: z.string() })
      .asyncStep('ordered', {
        args: ($) => ({ account: $.input('account') }),
        orderedLock: { key: ({ account }) => `ord:${account}` },
        lock: { key: ({ account }) => account },
        run: () => 'shipped',
      })
      .step('confirm', { run: () => 'confirmed' })
      .returns('confirm');
    const s = scenario('r18', [holder, order]);
    const worker = s.runtime.startWorker({ concurrency: 4 });
    try {
      const held = s.runtime.engine.run(holder, {});
      await holderIn.promise;
      const parent = await s.runtime.engine.run(order, { account: 'acct-18' });
      expect(parent.status).toBe('completed');
      const parentRecord = await s.runtime.engine.store.get(parent.executionId);
      const unitId = `${parent.executionId}~ordered`;
      await untilStatus(s.runtime.engine, unitId, 'parked', WAIT_MS);
      const record = (await s.runtime.engine.store.get(unitId))!;
      expect(record).toMatchObject({
        parentId: parent.executionId,
        unit: { step: 'ordered' },
        background: { ordered: { key: 'ord:acct-18', nonce: 1 }, waitingFor: { primitive: 'lock', key: 'acct-18' } },
      });
      expect(await s.backend.coordinator.orderedState('ord:acct-18')).toMatchObject({ issued: 1, lastCompleted: 0 });
      holding.open();
      expect((await held).status).toBe('completed');
      // The park fallback is out of reach (FALLBACK_MS): only the release can have woken it.
      const done = await untilStatus(s.runtime.engine, unitId, 'completed', WAIT_MS);
      expect(done).toMatchObject({ value: 'shipped' });
      const after = (await s.runtime.engine.store.get(unitId))!;
      expect(after.background?.ordered).toBeUndefined();
      expect(after.background?.waitingFor).toBeUndefined();
      expect(await s.backend.coordinator.orderedState('ord:acct-18')).toMatchObject({ drained: true });
      await until(
        async () => (await s.backend.coordinator.lockState('acct-18')) === undefined,
        WAIT_MS,
        'the lock to drain',
      );
      expect(await s.runtime.engine.store.get(parent.executionId)).toEqual(parentRecord);
    } finally {
      holding.open();
      await worker.stop();
    }
  });

  test('an in-process reader waits on a unit run by the worker and gets its value', async () => {
    const r = reactor('r-wait')
      .asyncStep('u', { run: () => ({ from: 'worker' }) })
      .step('read', { args: ($) => ({ v: $.result('u') }), run: ({ v }) => v.from })
      .returns('read');
    const s = scenario('rwait', [r]);
    const worker = s.runtime.startWorker({ concurrency: 2 });
    try {
      expect(await s.runtime.engine.run(r, {})).toMatchObject({ status: 'completed', value: 'worker' });
    } finally {
      await worker.stop();
    }
  });
});

describe('real worker processes', () => {
  test(
    'a parent in a worker dispatches a unit (retried once, F-12) and a child execution; its reader parks and is woken across processes',
    async () => {
      const { order, guarded } = asyncReactors();
      // Strict: a park fallback out of reach of the wait, so every park must end by a real wake-up. The flake this once tolerated
      // was the child job reaching the worker that had not dispatched it and did not know its reactor (docs/decisions/046).
      const s = scenario('mp', [order, guarded], { parkFallbackMs: FALLBACK_MS });
      const workers: JsonChild[] = [0, 1].map(() =>
        spawnJsonChild(WORKER, { url: server.url, prefix: s.prefix, parkFallbackMs: FALLBACK_MS }, children),
      );
      await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
      const pids = new Set(workers.map((w) => w.pid));
      try {
        const started = await s.runtime.engine.start(order, { orderId: 'o-1' });
        const done = await s.runtime.engine.wait(started.executionId, { timeoutMs: WAIT_MS, pollMs: 20 });
        expect(done?.status).toBe('completed');
        if (done?.status !== 'completed') return;
        const value = done.value as {
          reserve: number;
          ship: number;
          shipAttempt: number;
          label: string;
          labelPid: number;
          done: number;
        };
        expect(value).toMatchObject({ shipAttempt: 2, label: 'L-o-1' });
        for (const pid of [value.reserve, value.ship, value.labelPid, value.done]) expect(pids.has(pid)).toBe(true);
        const trace: readonly ReactorEvent[] = done.trace;
        expect(
          eventsOf(trace, 'async.dispatched')
            .map((e) => e.kind)
            .sort(),
        ).toEqual(['reactor', 'step']);
        expect(eventsOf(trace, 'async.waiting').filter((e) => e.mode === 'park').length).toBeGreaterThanOrEqual(1);
        expect(eventsOf(trace, 'run.woken').filter((e) => e.primitive === 'async').length).toBeGreaterThanOrEqual(1);
        const unit = (await s.runtime.engine.store.get(`${started.executionId}~ship`))!;
        expect(unit.status).toBe('completed');
        expect(eventsOf(unit.trace ?? [], 'async.retrying')).toMatchObject([
          { attempt: 2, error: { message: 'carrier flaky' } },
        ]);
        const child = (await s.runtime.engine.store.get(`${started.executionId}~label`))!;
        expect(child).toMatchObject({ reactor: 'mp-label', status: 'completed', parentId: started.executionId });
      } finally {
        for (const w of workers) w.child.kill('SIGTERM');
        await Promise.all(workers.map((w) => w.exited));
      }
    },
    CHILD_LINE_TIMEOUT_MS + 2 * WAIT_MS,
  );
});
