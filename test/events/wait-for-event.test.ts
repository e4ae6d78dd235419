/**
 * `.waitForEvent` on every backend: a sent event resumes exactly the executions waiting for its
 * key (1,000 waits, each resumed by its own event from another process), one event resumes every
 * matching wait, `match` is the final check, an event sent between a wait's registration and its
 * park is not lost (the interleaving forced with a gate on the index), and timeouts fail the run
 * or give the step a value.
 */
import { expect, test } from 'vitest';
import { EventWaitTimeoutError, type EventNotice, type ReactorEvent } from '../../src/index.js';
import type { EventWaitEntry, EventWaits } from '../../src/ports/event-waits.js';
import type { InterruptClaims } from '../../src/ports/interrupt-claims.js';
import type { JobLeases } from '../../src/ports/job-lease.js';
import { composeJobLeases } from '../../src/engine/jobs/job-lease.js';
import { createRuntime } from '../../src/runtime/create-runtime.js';
import { describeOnBackends } from '../support/backend-matrix.js';
import {
  allReach,
  bigPayment,
  both,
  checkout,
  failing,
  parcelReady,
  paymentSettled,
  withDefault,
} from './wait-fixtures.js';

describeOnBackends('waitForEvent', (backend) => {
  test('each event resumes its own execution: the payload is the step result, the resume an effect of the event', async () => {
    const runtime = backend.runtime({ reactors: [checkout] });
    runtime.startWorker({ concurrency: 4 });
    const { engine } = runtime;
    const notices: EventNotice[] = [];
    engine.subscribeEvents((n) => notices.push(n));
    const a = await engine.start(checkout, { orderId: 'o-a' });
    const b = await engine.start(checkout, { orderId: 'o-b' });
    await allReach(engine, [a.executionId, b.executionId], 'paused');
    const sent = await engine.send(paymentSettled, { orderId: 'o-b', amount: 7 }, { id: 'pay-b' });
    expect(sent.status).toBe('accepted');
    await allReach(engine, [b.executionId], 'completed');
    expect(await engine.result(b.executionId)).toMatchObject({ status: 'completed', value: 'o-b:7' });
    expect((await engine.result(a.executionId))?.status).toBe('paused');
    const stored = (await engine.listEvents({ name: 'payment.settled' })).events[0];
    expect(stored?.effects.resumed).toEqual([b.executionId]);
    expect(notices.filter((n) => n.type === 'event.resumed')).toEqual([
      expect.objectContaining({
        eventId: 'pay-b',
        name: 'payment.settled',
        executionId: b.executionId,
        step: 'payment',
      }),
    ]);
    // A re-sent id resumes nothing twice.
    expect((await engine.send(paymentSettled, { orderId: 'o-b', amount: 7 }, { id: 'pay-b' })).status).toBe(
      'duplicate',
    );
    await engine.send(paymentSettled, { orderId: 'o-a', amount: 1 });
    await allReach(engine, [a.executionId], 'completed');
    expect(await engine.result(a.executionId)).toMatchObject({ value: 'o-a:1' });
  });

  test('one event resumes all 50 executions waiting for its key, and no other', async () => {
    const runtime = backend.runtime({ reactors: [checkout] });
    runtime.startWorker({ concurrency: 8 });
    const { engine } = runtime;
    const same = await engine.startMany(
      Array.from({ length: 50 }, () => ({ reactor: checkout, input: { orderId: 'o-shared' } })),
    );
    const other = await engine.start(checkout, { orderId: 'o-other' });
    const ids = same.map((s) => s.executionId);
    await allReach(engine, [...ids, other.executionId], 'paused');
    await engine.send(paymentSettled, { orderId: 'o-shared', amount: 50 }, { id: 'pay-shared' });
    await allReach(engine, ids, 'completed');
    for (const id of ids) expect(await engine.result(id)).toMatchObject({ value: 'o-shared:50' });
    expect((await engine.result(other.executionId))?.status).toBe('paused');
    const stored = (await engine.listEvents({ name: 'payment.settled' })).events[0];
    expect([...(stored?.effects.resumed ?? [])].sort()).toEqual([...ids].sort());
  });

  test('two waits of one execution resumed by two events sent at once: both land, the run completes', async () => {
    const runtime = backend.runtime({ reactors: [both] });
    runtime.startWorker({ concurrency: 4 });
    const { engine } = runtime;
    const runs = await engine.startMany(
      Array.from({ length: 5 }, (_, i) => ({ reactor: both, input: { orderId: `o-${i}` } })),
    );
    const ids = runs.map((r) => r.executionId);
    await allReach(engine, ids, 'paused');
    await Promise.all(
      ids.flatMap((_, i) => [
        engine.send(paymentSettled, { orderId: `o-${i}`, amount: i }),
        engine.send(parcelReady, { orderId: `o-${i}`, parcel: `p-${i}` }),
      ]),
    );
    await allReach(engine, ids, 'completed');
    for (const [i, id] of ids.entries()) expect(await engine.result(id)).toMatchObject({ value: `p-${i}:${i}` });
  });

  test('match is the final check: an event of the key it refuses leaves the wait parked', async () => {
    const runtime = backend.runtime({ reactors: [bigPayment] });
    runtime.startWorker({ concurrency: 2 });
    const { engine } = runtime;
    const run = await engine.start(bigPayment, { orderId: 'o-1', min: 100 });
    await allReach(engine, [run.executionId], 'paused');
    await engine.send(paymentSettled, { orderId: 'o-1', amount: 5 });
    await engine.send(paymentSettled, { orderId: 'o-2', amount: 500 });
    expect((await engine.result(run.executionId))?.status).toBe('paused');
    await engine.send(paymentSettled, { orderId: 'o-1', amount: 150 });
    await allReach(engine, [run.executionId], 'completed');
    expect(await engine.result(run.executionId)).toMatchObject({ value: { orderId: 'o-1', amount: 150 } });
  });

  test('an event sent between the registration and the park is not lost (the interleaving forced)', async () => {
    // A gate on the index: the wait's registration is written, then held before the step goes on to park.
    let registered!: () => void;
    const reached = new Promise<void>((resolve) => (registered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const base = backend.runtime();
    const index = base.backend.eventWaits!;
    const gated: EventWaits = {
      add: async (entry: EventWaitEntry) => {
        const wait = await index.add(entry);
        registered();
        await gate;
        return wait;
      },
      remove: (entry) => index.remove(entry),
      lookup: (key, kind, page) => index.lookup(key, kind, page),
    };
    // The same backend with the gated index (closed with `base`, which owns the connections).
    const runtime = createRuntime(
      { ...base.backend, eventWaits: gated, close: async () => undefined },
      { reactors: [checkout] },
    );
    const events: ReactorEvent[] = [];
    runtime.engine.subscribe((e) => events.push(e));
    runtime.startWorker({ concurrency: 2 });
    const run = await runtime.engine.start(checkout, { orderId: 'o-race' });
    await reached; // registered, not parked
    expect((await runtime.engine.result(run.executionId))?.status).not.toBe('paused');
    await runtime.engine.send(paymentSettled, { orderId: 'o-race', amount: 3 }, { id: 'pay-race' });
    release();
    await allReach(runtime.engine, [run.executionId], 'completed');
    expect(events.filter((e) => e.type === 'wait.resumed').map((e) => e.executionId)).toEqual([run.executionId]);
    expect(await runtime.engine.result(run.executionId)).toMatchObject({ value: 'o-race:3' });
    const stored = (await runtime.engine.listEvents({ name: 'payment.settled' })).events[0];
    expect(stored?.effects.resumed).toEqual([run.executionId]);
    await runtime.close();
  });

  test('an event whose delivery found the run going on reaches the re-check of its next park (the interleaving forced)', async () => {
    // The parcel's delivery sees the park and wins its claim; the payment's then resumes the run, so
    // under the liveness lock the parcel's finds the run going on and gives its claim back. That
    // give-back is held until a worker's job has tried the lease (refused: the lock is still taken)
    // or the re-check after the run's next park has asked for the parcel's claim: a claim given
    // back after the lock would be in the re-check's way, and the parcel would be lost.
    const base = backend.runtime();
    const claims = base.backend.interruptClaims!;
    // The memory backend has no job leases of its own: the engine composes them from its store and coordinator.
    const leases = base.backend.jobLeases ?? composeJobLeases(base.backend.store, base.backend.coordinator);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let parcelClaims = 0;
    let held = false;
    const gatedClaims: InterruptClaims = {
      claimCorrelation: (correlationId, executionId, options) =>
        claims.claimCorrelation(correlationId, executionId, options),
      correlation: (correlationId) => claims.correlation(correlationId),
      claimResume: async (executionId, step, claimant, ttlMs) => {
        const claim = await claims.claimResume(executionId, step, claimant, ttlMs);
        if (step !== 'parcel') return claim;
        if (++parcelClaims === 1) await runtime.engine.send(paymentSettled, { orderId: 'o-gap', amount: 4 });
        else open(); // the re-check after the next park asked for it
        return claim;
      },
      releaseResume: async (executionId, step, claimant) => {
        if (step === 'parcel' && !held) {
          held = true;
          runtime.startWorker({ concurrency: 2 });
          await gate;
        }
        await claims.releaseResume(executionId, step, claimant);
      },
    };
    const gatedLeases: JobLeases = {
      saveAndRelease: (record, key, owner) => leases.saveAndRelease(record, key, owner),
      saveFenced: (record, key, owner) => leases.saveFenced(record, key, owner),
      enterJob: async (request) => {
        const entered = await leases.enterJob(request);
        if (!entered.acquired) open(); // the lock is still taken: the claim is given back under it
        return entered;
      },
    };
    const runtime = createRuntime(
      { ...base.backend, interruptClaims: gatedClaims, jobLeases: gatedLeases, close: async () => undefined },
      { reactors: [both] },
    );
    const first = runtime.startWorker({ concurrency: 2 });
    const run = await runtime.engine.start(both, { orderId: 'o-gap' });
    await allReach(runtime.engine, [run.executionId], 'paused');
    await first.stop(); // no worker until the parcel's delivery gives its claim back
    await runtime.engine.send(parcelReady, { orderId: 'o-gap', parcel: 'p-gap' }, { id: 'parcel-gap' });
    expect(held).toBe(true);
    await allReach(runtime.engine, [run.executionId], 'completed', 60_000);
    expect(await runtime.engine.result(run.executionId)).toMatchObject({ value: 'p-gap:4' });
    const stored = (await runtime.engine.listEvents({ name: 'parcel.ready' })).events[0];
    expect(stored?.effects.resumed).toEqual([run.executionId]);
    await runtime.close();
  });

  test('a timeout with onTimeout: fail rolls the run back and ends it failed; with a value, the step completes with it', async () => {
    const log: string[] = [];
    const fails = failing(200, log);
    const defaults = withDefault(200);
    const runtime = backend.runtime({ reactors: [fails, defaults] });
    runtime.startWorker({ concurrency: 2 });
    const { engine } = runtime;
    const failed = await engine.start(fails, { orderId: 'o-fail' });
    await allReach(engine, [failed.executionId], 'failed');
    const result = await engine.result(failed.executionId);
    expect(result?.status === 'failed' && result.error).toBeInstanceOf(EventWaitTimeoutError);
    expect(log).toEqual(['undo R-o-fail']);
    const defaulted = await engine.start(defaults, { orderId: 'o-late' });
    await allReach(engine, [defaulted.executionId], 'completed');
    expect(await engine.result(defaulted.executionId)).toMatchObject({ value: { orderId: 'o-late', amount: 0 } });
    // An event after the timeout resumes nothing.
    await engine.send(paymentSettled, { orderId: 'o-late', amount: 9 });
    expect(await engine.result(defaulted.executionId)).toMatchObject({ value: { orderId: 'o-late', amount: 0 } });
  });
});
