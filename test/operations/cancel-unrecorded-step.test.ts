/**
 * A cancel from another engine while a worker's first job runs its first step and no checkpoint
 * has said `running` yet (the default checkpoint interval): the record still says `pending`
 * (decision 159). Whether the job still holds its lease or lost it mid-body (its worker froze past
 * the lease), the step's body is compensated or undone, counted in its attempts, and the record
 * that ends it `cancelled` is a job's; a debounced start in that state is not superseded. Memory
 * backend, a manual clock; the step's body blocks on a gate the test opens.
 */
import { describe, expect, test } from 'vitest';
import { createEngine, MemoryCoordinator, reactor } from '../../src/index.js';
import { debounceKey, livenessKey } from '../../src/engine/model/keys.js';
import { ManualClock } from '../../src/testing/clock.js';
import { gate, manualEngine, settlesWithin, until, untilStatus } from '../background/helpers.js';

/** A step `a` whose body blocks until `release` opens, then a step `b` after it; every hook logs. */
function blocking(name: string, log: string[], inStep: { open: () => void }, release: Promise<void>) {
  return reactor(name)
    .step('a', {
      run: async () => {
        log.push('run a');
        inStep.open();
        await release;
        return 'a';
      },
      undo: () => void log.push('undo a'),
      compensate: () => void log.push('compensate a'),
    })
    .step('b', { waitFor: ['a'], run: () => (log.push('run b'), 'b'), undo: () => void log.push('undo b') })
    .build();
}

/** A worker engine and a second engine over the same backend (an operator's process), on `clock`. */
function twoEngines(definition: ReturnType<typeof blocking>, clock: ManualClock) {
  const m = manualEngine({ reactors: [definition], clock, coordinator: new MemoryCoordinator({ clock }) });
  const operator = createEngine({
    store: m.store,
    coordinator: m.coordinator,
    queue: m.memory.queue,
    waitList: m.memory.waitList,
    reactors: [definition],
    clock,
  });
  return { m, operator };
}

describe('a cancel while a first step runs that no checkpoint has recorded', () => {
  test('the job holds its lease: it stops, undoes the step it ran, and the cancel answers cancelled', async () => {
    const log: string[] = [];
    const inStep = gate();
    const release = gate();
    const definition = blocking('unrecorded-held', log, inStep, release.promise);
    const { m, operator } = twoEngines(definition, new ManualClock());
    const worker = m.startWorker(1);
    const { executionId } = await m.engine.start(definition, {});
    await inStep.promise;
    expect((await m.store.get(executionId))!.status).toBe('pending'); // the clock stands still: no checkpoint yet
    const cancelling = operator.cancel(executionId, { reason: 'operator' });
    expect(await settlesWithin(cancelling)).toBe(false); // asked the job to stop, waits for it
    release.open();
    expect(await cancelling).toMatchObject({ status: 'cancelled', reason: 'operator' });
    const record = (await m.store.get(executionId))!;
    expect(record.status).toBe('cancelled');
    expect(record.steps.a).toMatchObject({ attempts: 1 });
    expect(record.steps.a!.runs).toEqual([expect.objectContaining({ attempt: 1, outcome: 'succeeded' })]);
    expect(log).toEqual(['run a', 'undo a']);
    await worker.close();
  });

  test('the job lost its lease mid-body: the cancel is a request, and the job that continues compensates and counts the step', async () => {
    const log: string[] = [];
    const inStep = gate();
    const release = gate();
    const definition = blocking('unrecorded-lapsed', log, inStep, release.promise);
    const clock = new ManualClock();
    const { m, operator } = twoEngines(definition, clock);
    const worker = m.startWorker(1);
    const { executionId } = await m.engine.start(definition, {});
    await inStep.promise;
    // The worker freezes: its renewals never reach the coordinator, and its lease lapses.
    const extend = m.coordinator.lockExtend.bind(m.coordinator);
    m.coordinator.lockExtend = () => Promise.reject(new Error('coordinator unreachable'));
    clock.advance(31_000);
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(1); // its local deadline's timer: the job stops, its body still running
    await new Promise((resolve) => setImmediate(resolve));
    expect(m.events.filter((e) => e.type === 'run.stopped')).toEqual([
      expect.objectContaining({ reason: 'lease_lost' }),
    ]);
    m.coordinator.lockExtend = extend;
    expect(await m.coordinator.lockState(livenessKey(executionId))).toBeUndefined();
    expect((await m.store.get(executionId))!).toMatchObject({ status: 'pending', steps: {} });

    // Before: rolled back from the record as not begun — `a` ran, never compensated nor counted.
    expect(await operator.cancel(executionId, { reason: 'operator' })).toMatchObject({ status: 'running' });
    expect(await m.coordinator.periodIsMarked(`cancel:${executionId}`, 'requested')).toBe(true);
    expect((await m.store.get(executionId))!.status).toBe('pending');

    release.open(); // the frozen job's body returns; it writes nothing
    await until(async () => (await m.memory.queue.jobStates!([`${executionId}:1`]))[0] === 'finished');
    expect((await m.store.get(executionId))!.status).toBe('pending');
    // The recovery sweep finds the execution no job carries: its job takes over, finds the request.
    expect(await m.engine.sweep()).toMatchObject({ requeued: 1 });
    const result = await untilStatus(m.engine, executionId, 'cancelled');
    expect(result).toMatchObject({ status: 'cancelled', reason: 'operator' });
    const record = (await m.store.get(executionId))!;
    expect(record.steps.a).toMatchObject({ attempts: 1 });
    expect(record.steps.a!.runs).toEqual([expect.objectContaining({ attempt: 1, outcome: 'may_have_run' })]);
    // Written by the sweep's job: the lost attempts (`b` too: an upper bound, decision 098), the compensation, the end.
    const written = record.trace!.filter((e) => e.type !== 'run.queued' && e.type !== 'run.resumed');
    expect(written.map((e) => [e.type, 'step' in e ? e.step : undefined])).toEqual([
      ['run.recovered', undefined],
      ['step.attempt_lost', 'a'],
      ['step.attempt_lost', 'b'],
      ['run.rolling_back', undefined],
      ['step.compensated', 'a'],
      ['run.cancelled', undefined],
    ]);
    expect(log.filter((l) => l.endsWith(' a'))).toEqual(['run a', 'compensate a']);
    expect(log).not.toContain('run b');
    await worker.close();
  });

  test('a debounced start whose job a worker took is not superseded, even with its lease lapsed', async () => {
    const log: string[] = [];
    const inStep = gate();
    const release = gate();
    const definition = blocking('unrecorded-debounced', log, inStep, release.promise);
    const clock = new ManualClock({ autoAdvance: false });
    const m = manualEngine({
      reactors: [definition],
      clock,
      queueOptions: { clock },
      coordinator: new MemoryCoordinator({ clock }),
    });
    const worker = m.startWorker(1);
    const first = await m.engine.start(definition, {}, { debounce: { key: 'k', window: 1_000 } });
    clock.advance(1_000); // the window passes: a worker takes the start
    await inStep.promise;
    // Its worker freezes past its lease (as above) while the debounce slot still names it (clocks apart).
    m.coordinator.lockExtend = () => Promise.reject(new Error('coordinator unreachable'));
    clock.advance(31_000);
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(1);
    await new Promise((resolve) => setImmediate(resolve));
    const slot = await m.coordinator.lockAcquire({
      key: debounceKey(definition.name, 'k'),
      holder: { owner: `debounce:${first.executionId}`, executionId: first.executionId },
      ttlMs: 10_000,
      unfenced: true,
    });
    expect(slot.acquired).toBe(true);
    expect((await m.store.get(first.executionId))!).toMatchObject({ status: 'pending', steps: {} });
    expect(await m.coordinator.lockState(livenessKey(first.executionId))).toBeUndefined();

    // Before: ended `cancelled` as a start that never began, its step's body run and never compensated.
    await m.engine.start(definition, {}, { debounce: { key: 'k', window: 1_000 } });
    expect((await m.store.get(first.executionId))!.status).toBe('pending');
    release.open();
    await worker.close();
  });
});
