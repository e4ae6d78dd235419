/**
 * Async units in workers on every backend of the matrix: scenario 19 (a refused hand-off queues
 * nothing, inline and in a worker), scenario 18 (the unit parks on its lock keeping its ordered
 * position; the release wakes it), an in-process reader waiting on a unit a worker runs, and, on
 * the server backends, the full path in two real worker processes
 * (`fixtures/async-worker-process.ts`): a parent in a worker dispatching a unit (failing once,
 * then retried in a worker) and a child execution, its reader parked until both finish and woken
 * across processes. The park fallback is out of reach of every wait here, so a parked run ends
 * only by a real wake-up.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { z } from 'zod';
import { reactor, type AnyReactorDefinition, type ReactorEvent } from '../../src/index.js';
import { describeOnBackends, testWhere, type MatrixRuntime } from '../support/backend-matrix.js';
import { CHILD_LINE_TIMEOUT_MS, spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { eventsOf, gate, until, untilStatus } from '../background/helpers.js';
import { asyncReactors } from './fixtures/async-reactors.js';

const WORKER = fileURLToPath(new URL('./fixtures/async-worker-process.ts', import.meta.url));
/** The park fallback: out of reach of every wait here, so a parked run ends only by a real wake-up. */
const FALLBACK_MS = 600_000;
/** How long an outcome is waited for: a deadline for a loaded machine, not a bound. */
const WAIT_MS = 90_000;

/** The jobs of the runtime's queue that are waiting, delayed or active, by execution id. */
async function pendingJobs(runtime: MatrixRuntime): Promise<string[]> {
  const snapshot = await runtime.backend.queueInspector.inspectQueue({ limit: 100 });
  return [...snapshot.waiting, ...snapshot.delayed, ...snapshot.active].map((j) => j.executionId);
}

describeOnBackends('async units in workers', (backend) => {
  const children = new Set<ChildProcess>();
  afterEach(() => {
    for (const child of children) child.kill('SIGKILL');
    children.clear();
  });

  const rig = (reactors: readonly AnyReactorDefinition[], background = {}): MatrixRuntime =>
    backend.runtime({ reactors, background: { workerWaitMs: 0, parkFallbackMs: FALLBACK_MS, ...background } });

  test('scenario 19 inline: the reactor lock K is held, the asyncStep declares K — failed before enqueue, the queue stays empty, no unit record', async () => {
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
    const runtime = rig([guarded, inline]);
    const result = await runtime.engine.run(inline, { account: 'a1' });
    expect(result).toMatchObject({
      status: 'failed',
      failedStep: 'ship',
      error: { code: 'handoff_refused', details: { key: 'acct:a1', primitive: 'lock' } },
    });
    expect(eventsOf(result.trace, 'step.undone').map((e) => e.step)).toEqual(['debit']);
    expect(eventsOf(result.trace, 'step.compensated')).toEqual([]);
    expect(eventsOf(result.trace, 'async.dispatched')).toEqual([]);
    const { counts } = await runtime.backend.queueInspector.inspectQueue();
    expect(Object.values(counts).every((n) => n === 0)).toBe(true);
    expect(await runtime.engine.result(`${result.executionId}~ship`)).toBeUndefined();
    expect(await runtime.backend.coordinator.lockState('acct:a1')).toBeUndefined();
  });

  test('scenario 19 in a worker: the background run fails with the refusal; no job and no record for the unit', async () => {
    const { guarded } = asyncReactors();
    const runtime = rig([guarded]);
    const worker = runtime.startWorker({ concurrency: 2 });
    const started = await runtime.engine.start(guarded, { account: 'a2' });
    const done = await runtime.engine.wait(started.executionId, { timeoutMs: WAIT_MS, pollMs: 20 });
    await worker.stop();
    expect(done).toMatchObject({
      status: 'failed',
      failedStep: 'ship',
      error: { code: 'handoff_refused', details: { key: 'acct:a2', holder: expect.stringContaining('reactor-level') } },
    });
    expect(eventsOf(done?.trace ?? [], 'step.undone').map((e) => e.step)).toEqual(['debit']);
    expect(eventsOf(done?.trace ?? [], 'async.dispatched')).toEqual([]);
    expect(await runtime.engine.result(`${started.executionId}~ship`)).toBeUndefined();
    expect(await pendingJobs(runtime)).toEqual([]);
  });

  test('scenario 18: the unit parks on its lock keeping ordered position 1 on its own record; the release wakes it; the key drains', async () => {
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
    const runtime = rig([holder, order]);
    const { coordinator } = runtime.backend;
    const worker = runtime.startWorker({ concurrency: 4 });
    try {
      const held = runtime.engine.run(holder, {});
      await holderIn.promise;
      const parent = await runtime.engine.run(order, { account: 'acct-18' });
      expect(parent.status).toBe('completed');
      const parentRecord = await runtime.engine.store.get(parent.executionId);
      const unitId = `${parent.executionId}~ordered`;
      await untilStatus(runtime.engine, unitId, 'parked', WAIT_MS);
      expect(await runtime.engine.store.get(unitId)).toMatchObject({
        parentId: parent.executionId,
        unit: { step: 'ordered' },
        background: { ordered: { key: 'ord:acct-18', nonce: 1 }, waitingFor: { primitive: 'lock', key: 'acct-18' } },
      });
      expect(await coordinator.orderedState('ord:acct-18')).toMatchObject({ issued: 1, lastCompleted: 0 });
      holding.open();
      expect((await held).status).toBe('completed');
      // The park fallback is out of reach (FALLBACK_MS): only the release can have woken it.
      expect(await untilStatus(runtime.engine, unitId, 'completed', WAIT_MS)).toMatchObject({ value: 'shipped' });
      const after = (await runtime.engine.store.get(unitId))!;
      expect(after.background?.ordered).toBeUndefined();
      expect(after.background?.waitingFor).toBeUndefined();
      expect(await coordinator.orderedState('ord:acct-18')).toMatchObject({ drained: true });
      await until(async () => (await coordinator.lockState('acct-18')) === undefined, WAIT_MS, 'the lock to drain');
      expect(await runtime.engine.store.get(parent.executionId)).toEqual(parentRecord);
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
    const runtime = rig([r]);
    const worker = runtime.startWorker({ concurrency: 2 });
    try {
      expect(await runtime.engine.run(r, {})).toMatchObject({ status: 'completed', value: 'worker' });
    } finally {
      await worker.stop();
    }
  });

  // Worker processes share a server's backend; the memory backend lives in one process.
  testWhere(backend.shared)(
    'two real worker processes: a parent dispatches a unit (retried once, F-12) and a child execution; its reader parks and is woken across processes',
    async () => {
      const { order, guarded } = asyncReactors();
      // Strict: every park must end by a real wake-up. The flake this once tolerated was the child
      // job reaching the worker that had not dispatched it and did not know its reactor (docs/decisions/046).
      const runtime = rig([order, guarded]);
      const config = {
        backend: backend.name,
        address: backend.address(),
        namespace: runtime.namespace,
        parkFallbackMs: FALLBACK_MS,
      };
      const workers: JsonChild[] = [0, 1].map(() => spawnJsonChild(WORKER, config, children));
      await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
      const pids = new Set(workers.map((w) => w.pid));
      try {
        const started = await runtime.engine.start(order, { orderId: 'o-1' });
        const done = await runtime.engine.wait(started.executionId, { timeoutMs: WAIT_MS, pollMs: 20 });
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
        const unit = (await runtime.engine.store.get(`${started.executionId}~ship`))!;
        expect(unit.status).toBe('completed');
        expect(eventsOf(unit.trace ?? [], 'async.retrying')).toMatchObject([
          { attempt: 2, error: { message: 'carrier flaky' } },
        ]);
        expect(await runtime.engine.store.get(`${started.executionId}~label`)).toMatchObject({
          reactor: 'mp-label',
          status: 'completed',
          parentId: started.executionId,
        });
      } finally {
        for (const w of workers) w.child.kill('SIGTERM');
        await Promise.all(workers.map((w) => w.exited));
      }
    },
    CHILD_LINE_TIMEOUT_MS + 2 * WAIT_MS,
  );
});
