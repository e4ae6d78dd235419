/**
 * The recovery sweep on the memory backend, on a manual clock (no sleeps): which records it
 * takes for stranded (no liveness lease, no job that carries them, not written for a lease
 * length), what it does with them (re-enqueue; resume an inline run whose process stopped, or
 * end it `aborted`), one sweeper at a time, and the liveness lease an inline run holds on a
 * coordinator other processes share. The multi-process version is test/faults/sweep.test.ts.
 */
import { describe, expect, test } from 'vitest';
import {
  createEngine,
  InlineRunAbandonedError,
  MemoryCoordinator,
  MemoryStore,
  reactor,
  RECORD_VERSION,
  type ExecutionRecord,
} from '../../src/index.js';
import { livenessKey } from '../../src/engine/model/keys.js';
import { SWEEP_LOCK_KEY } from '../../src/engine/jobs/sweep.js';
import { ManualClock } from '../../src/testing/clock.js';
import { eventsOf, gate, manualEngine, type Manual } from './helpers.js';

const TTL = 3_000;

/** A memory coordinator and store that say they are shared (as Redis ones are): inline runs take their liveness lease on them. */
class SharedMemoryCoordinator extends MemoryCoordinator {
  override readonly processLocal: boolean = false;
}
class SharedMemoryStore extends MemoryStore {
  override readonly processLocal: boolean = false;
}

function setup(
  options: { readonly shared?: boolean; readonly sweepIntervalMs?: number; readonly reactors?: boolean } = {},
) {
  const clock = new ManualClock();
  const store = options.shared === true ? new SharedMemoryStore({ clock }) : new MemoryStore({ clock });
  const coordinator =
    options.shared === true ? new SharedMemoryCoordinator({ clock }) : new MemoryCoordinator({ clock });
  const ran = { a: 0, b: 0 };
  const two = reactor('sweep-two')
    .step('a', { run: () => (ran.a++, 'A') })
    .step('b', { waitFor: ['a'], run: () => (ran.b++, 'B') })
    .build();
  const manual = manualEngine({
    clock,
    store,
    coordinator,
    queueOptions: { clock },
    checkpointIntervalMs: 0,
    background: {
      livenessTtlMs: TTL,
      ...(options.sweepIntervalMs === undefined ? {} : { sweepIntervalMs: options.sweepIntervalMs }),
    },
    ...(options.reactors === false ? {} : { reactors: [two] }),
  });
  /** A record as a process that stopped left it. */
  const leftBehind = (over: Partial<ExecutionRecord> & Pick<ExecutionRecord, 'id' | 'status'>): ExecutionRecord => ({
    v: RECORD_VERSION,
    rootId: over.id,
    reactor: 'sweep-two',
    input: {},
    steps: {},
    rollbackFailures: [],
    createdAt: clock.now(),
    updatedAt: clock.now(),
    ...over,
  });
  return { clock, store, coordinator, ran, two, manual, leftBehind };
}

async function settle(manual: Manual): Promise<void> {
  await manual.engine.idle();
  await manual.memory.drain();
}

describe('what the sweep takes for stranded', () => {
  test('a pending execution whose job is gone is re-enqueued once it has not been written for a lease length, and completes', async () => {
    const { clock, store, ran, manual, leftBehind } = setup();
    manual.startWorker();
    await store.save(leftBehind({ id: 'lost-1', status: 'pending', background: { jobs: 1, contention: 0 } }));
    clock.advance(TTL - 10);
    expect(await manual.engine.sweep()).toMatchObject({ ran: true, requeued: 0 }); // written less than a lease length ago
    clock.advance(20);
    expect(await manual.engine.sweep()).toMatchObject({ ran: false }); // the last sweep's lock has not lapsed
    clock.advance(TTL);
    const report = await manual.engine.sweep();
    expect(report).toMatchObject({ ran: true, checked: 1, requeued: 1, aborted: 0 });
    await settle(manual);
    expect(await manual.engine.result('lost-1')).toMatchObject({ status: 'completed' });
    expect(ran).toEqual({ a: 1, b: 1 });
    const recovered = eventsOf(manual.events, 'run.recovered');
    expect(recovered).toMatchObject([
      {
        executionId: 'lost-1',
        reason: 'no_job',
        action: 'requeued',
        status: 'queued',
        count: 1,
        jobId: 'lost-1:sweep:1',
      },
    ]);
    const record = await store.get('lost-1');
    expect(record?.background?.recovered).toMatchObject({ jobId: 'lost-1:sweep:1', count: 1 });
    expect(eventsOf(record?.trace ?? [], 'run.recovered')).toHaveLength(1);
  });

  test('an execution a queued job carries, or whose liveness lease is held, is left alone', async () => {
    const { clock, coordinator, store, two, manual, leftBehind } = setup();
    const queued = await manual.engine.start(two, {}); // the worker is not started: its job stays queued
    await store.save(leftBehind({ id: 'held-1', status: 'running', background: { jobs: 1, contention: 0 } }));
    await coordinator.lockAcquire({ key: livenessKey('held-1'), holder: { owner: 'a-live-worker' }, ttlMs: 60_000 });
    clock.advance(TTL * 2);
    expect(await manual.engine.sweep()).toMatchObject({ ran: true, checked: 2, requeued: 0 });
    manual.startWorker();
    await settle(manual);
    expect(await manual.engine.result(queued.executionId)).toMatchObject({ status: 'completed' });
    expect(eventsOf(manual.events, 'run.recovered')).toEqual([]);
  });

  test('a job that finished without moving the execution on does not carry it: the sweep re-enqueues it under a new job id', async () => {
    const { clock, store, manual, leftBehind } = setup();
    manual.startWorker();
    // Its recorded job ran already (say it found the lease busy and its follow-up was lost).
    await manual.memory.queue.enqueue({ v: 1, executionId: 'nobody', reactor: 'sweep-two' }, { jobId: 'done-1:1' });
    await settle(manual);
    expect(await manual.memory.queue.jobStates?.(['done-1:1', 'never:1'])).toEqual(['finished', 'missing']);
    await store.save(leftBehind({ id: 'done-1', status: 'pending', background: { jobs: 1, contention: 0 } }));
    clock.advance(TTL + 1);
    expect(await manual.engine.sweep()).toMatchObject({ requeued: 1 });
    await settle(manual);
    expect(await manual.engine.result('done-1')).toMatchObject({ status: 'completed' });
  });

  test('a retry or a park whose delayed job is not due yet is left alone until its due time has passed by a lease length', async () => {
    const { clock, store, manual, leftBehind } = setup();
    manual.startWorker();
    const dueAt = clock.now() + 10_000;
    const waitingFor = { primitive: 'lock' as const, key: 'k', attempt: 1, jobId: 'parked-1:2', dueAt };
    await store.save(
      leftBehind({ id: 'parked-1', status: 'parked', background: { jobs: 2, contention: 1, waitingFor } }),
    );
    await store.save(
      leftBehind({ id: 'retry-1', status: 'pending', background: { jobs: 2, contention: 0, retryAt: dueAt } }),
    );
    clock.advance(10_000 + TTL - 10);
    expect(await manual.engine.sweep()).toMatchObject({ checked: 2, requeued: 0 });
    clock.advance(TTL);
    expect(await manual.engine.sweep()).toMatchObject({ checked: 2, requeued: 2 });
    await settle(manual);
    expect(await manual.engine.result('parked-1')).toMatchObject({ status: 'completed' });
    expect(await manual.engine.result('retry-1')).toMatchObject({ status: 'completed' });
  });

  test('fan-out elements, paused executions and inline runs without a lease are never swept', async () => {
    const { clock, store, manual, leftBehind } = setup();
    manual.startWorker();
    await store.save(
      leftBehind({
        id: 'p/m[0]',
        status: 'pending',
        element: { parentId: 'p', step: 'm', index: 0 },
        input: { item: 1, index: 0 },
      }),
    );
    await store.save(leftBehind({ id: 'unleased-1', status: 'running', inline: {} }));
    await store.save(leftBehind({ id: 'paused-1', status: 'paused' }));
    clock.advance(TTL * 3);
    expect(await manual.engine.sweep()).toMatchObject({ ran: true, requeued: 0, aborted: 0 });
    expect((await store.get('unleased-1'))?.status).toBe('running');
  });
});

describe('inline runs whose process stopped', () => {
  const dead = (leftBehind: ReturnType<typeof setup>['leftBehind'], id: string): ExecutionRecord =>
    leftBehind({
      id,
      status: 'running',
      inline: { lease: `inline:gone:${id}` },
      steps: {
        a: { status: 'completed', attempts: 1, result: 'A', completedSeq: 1 },
        b: { status: 'running', attempts: 1 },
      },
    });

  test('resumed on a worker when the sweeping engine knows the reactor: completed steps do not run again', async () => {
    const { clock, store, ran, manual, leftBehind } = setup();
    manual.startWorker();
    await store.save(dead(leftBehind, 'inline-1'));
    clock.advance(TTL + 1);
    expect(await manual.engine.sweep()).toMatchObject({ requeued: 1, aborted: 0 });
    await settle(manual);
    const done = await manual.engine.result('inline-1');
    expect(done).toMatchObject({ status: 'completed', value: { a: 'A', b: 'B' } });
    expect(ran).toEqual({ a: 0, b: 1 });
    expect(eventsOf(manual.events, 'run.recovered')).toMatchObject([
      { reason: 'inline_lost', action: 'requeued', status: 'running' },
    ]);
    expect((await store.get('inline-1'))?.inline).toBeUndefined();
  });

  test('ended `aborted` with the cause when the reactor is not registered here; result and wait report it as failed at once', async () => {
    const { clock, store, manual, leftBehind } = setup({ reactors: false });
    manual.startWorker();
    await store.save(dead(leftBehind, 'inline-2'));
    clock.advance(TTL + 1);
    expect(await manual.engine.sweep()).toMatchObject({ requeued: 0, aborted: 1 });
    const record = await store.get('inline-2');
    expect(record).toMatchObject({
      status: 'aborted',
      failedStep: 'b',
      error: { code: 'inline_run_abandoned', details: { step: 'b', reactor: 'sweep-two' } },
    });
    expect(record?.inline).toBeUndefined();
    expect(await manual.coordinator.lockState(livenessKey('inline-2'))).toBeUndefined(); // the write released the sweep's lease
    const result = await manual.engine.wait('inline-2', { timeoutMs: 60_000 });
    expect(result).toMatchObject({ status: 'failed', failedStep: 'b' });
    expect(result.status === 'failed' && result.error).toBeInstanceOf(InlineRunAbandonedError);
    expect(eventsOf(manual.events, 'run.recovered')).toMatchObject([
      { executionId: 'inline-2', reason: 'inline_lost', action: 'aborted', status: 'running', count: 1 },
    ]);
    // Aborted is terminal: a later sweep leaves it alone.
    clock.advance(TTL * 2);
    expect(await manual.engine.sweep()).toMatchObject({ checked: 0 });
  });

  test('an inline run that was rolling back is aborted (its rollback is not resumed elsewhere)', async () => {
    const { clock, store, manual, leftBehind } = setup();
    manual.startWorker();
    await store.save({ ...dead(leftBehind, 'inline-3'), status: 'rolling_back' });
    clock.advance(TTL + 1);
    expect(await manual.engine.sweep()).toMatchObject({ aborted: 1 });
    expect(await store.get('inline-3')).toMatchObject({
      status: 'aborted',
      error: { code: 'inline_run_abandoned', details: { rollingBack: true } },
    });
  });
});

describe('the inline run’s liveness lease', () => {
  test('on a shared coordinator: held and renewed while the run works, named in its records, released at its end', async () => {
    const { clock, store, coordinator, manual } = setup({ shared: true });
    const other = createEngine({
      store,
      coordinator,
      queue: manual.memory.queue,
      clock,
      background: { livenessTtlMs: TTL },
    }); // another process's sweep
    const open = gate();
    const entered = gate();
    const slow = reactor('sweep-slow')
      .step('a', { run: () => 'A' })
      .step('b', { waitFor: ['a'], run: async () => (entered.open(), await open.promise, 'B') })
      .build();
    const running = manual.engine.run(slow, {});
    await entered.promise;
    const [id] = (await store.list({ status: 'running' })).records.map((r) => r.id);
    const lease = await coordinator.lockState(livenessKey(id!));
    expect(lease?.holder.owner).toMatch(/^inline:.+:/);
    expect((await store.get(id!))?.inline).toEqual({ lease: lease?.holder.owner });
    // Renewed: several lease lengths later it is still held, and no sweep takes the run.
    for (let i = 0; i < 6; i++) clock.advance(TTL / 2);
    expect((await coordinator.lockState(livenessKey(id!)))?.holder.owner).toBe(lease?.holder.owner);
    expect(await other.sweep()).toMatchObject({ ran: true, requeued: 0, aborted: 0 });
    open.open();
    expect(await running).toMatchObject({ status: 'completed' });
    expect(await coordinator.lockState(livenessKey(id!))).toBeUndefined();
    expect((await store.get(id!))?.inline).toBeUndefined();
  });

  test('on the memory backend (a coordinator of this process only): no lease, no mark; its own sweep leaves it alone', async () => {
    const { clock, store, coordinator, manual } = setup();
    const open = gate();
    const entered = gate();
    const slow = reactor('sweep-slow-local')
      .step('a', { run: async () => (entered.open(), await open.promise, 'A') })
      .build();
    const running = manual.engine.run(slow, {});
    await entered.promise;
    const [record] = (await store.list({ status: 'running' })).records;
    expect(await coordinator.lockState(livenessKey(record!.id))).toBeUndefined();
    expect(record?.inline).toBeUndefined();
    clock.advance(TTL * 2);
    expect(await manual.engine.sweep()).toMatchObject({ ran: true, checked: 1, requeued: 0 }); // it runs inline in this engine
    open.open();
    expect(await running).toMatchObject({ status: 'completed' });
  });

  test('an engine without a coordinator, on a store other processes share, marks its inline records unleased', async () => {
    const clock = new ManualClock();
    const store = new SharedMemoryStore({ clock });
    const open = gate();
    const entered = gate();
    const slow = reactor('sweep-slow-plain')
      .step('a', { run: async () => (entered.open(), await open.promise, 'A') })
      .build();
    const running = createEngine({ store, clock, checkpointIntervalMs: 0 }).run(slow, {});
    await entered.promise;
    const [record] = (await store.list({ status: 'running' })).records;
    expect(record?.inline).toEqual({});
    open.open();
    expect(await running).toMatchObject({ status: 'completed' });
  });
});

describe('one sweeper at a time, on a timer', () => {
  test('two engines: the sweep lock lets one sweep; the other sweeps once the lock lapsed', async () => {
    const { clock, store, coordinator, manual } = setup();
    const other = createEngine({
      store,
      coordinator,
      queue: manual.memory.queue,
      clock,
      background: { livenessTtlMs: TTL },
    });
    expect(await manual.engine.sweep()).toMatchObject({ ran: true });
    expect(await other.sweep()).toMatchObject({ ran: false });
    expect((await coordinator.lockState(SWEEP_LOCK_KEY))?.holder.owner).toMatch(/^sweep:/);
    clock.advance(TTL); // the lock lives 0.8 × the interval (here: the lease length, with no timer)
    expect(await other.sweep()).toMatchObject({ ran: true });
  });

  test('a worker sweeps every `sweepIntervalMs`; stopping the worker stops its timer', async () => {
    const { clock, store, manual, leftBehind } = setup({ sweepIntervalMs: 1_000 });
    const worker = manual.startWorker();
    await store.save(leftBehind({ id: 'timer-1', status: 'pending', background: { jobs: 1, contention: 0 } }));
    clock.advance(TTL + 1_000);
    await settle(manual);
    expect(await manual.engine.result('timer-1')).toMatchObject({ status: 'completed' });
    await worker.stop();
    await store.save(leftBehind({ id: 'timer-2', status: 'pending', background: { jobs: 1, contention: 0 } }));
    clock.advance(TTL * 3);
    await settle(manual);
    expect(await manual.engine.result('timer-2')).toMatchObject({ status: 'queued' });
    expect(eventsOf(manual.events, 'run.recovered').map((e) => e.executionId)).toEqual(['timer-1']);
  });

  test('sweepIntervalMs is checked', () => {
    const { store, coordinator, manual } = setup();
    expect(() =>
      createEngine({ store, coordinator, queue: manual.memory.queue, background: { sweepIntervalMs: -1 } }),
    ).toThrow(RangeError);
  });
});
