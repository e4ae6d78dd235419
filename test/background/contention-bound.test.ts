/**
 * The contention bound (docs/decisions/097), on the embedded memory backend with a manual clock
 * (no sleeps): every refused admission in a worker — the first, a woken job that lost, a fallback
 * poll that finds the same live holder — is a contention attempt; over `contentionCap` the
 * execution fails with a `ContentionError` (at the reactor: nothing ran; at a step: the step
 * fails, the run rolls back, the contended step is not compensated). A re-park behind the same
 * holder adds no trace entry: the park's entry counts the repeats.
 */
import { describe, expect, test } from 'vitest';
import { reactor, type RunResult } from '../../src/index.js';
import { timelineOf } from '../../src/web/html/timeline-model.js';
import { createReadModel } from '../../src/ops/read-model.js';
import { busyJobId, requeuedJobOf } from '../../src/engine/jobs/park.js';
import { eventsOf } from './helpers.js';
import { DIRECT, result, rig, type Rig } from './manual-rig.js';

const FALLBACK_MS = 200;
const CAP = 3;

/** Moves the clock in fallback-delay steps until `id` has finished; returns its result and the time it took from now. */
async function untilFinished(r: Rig, id: string, maxMs = 60_000): Promise<{ done: RunResult; tookMs: number }> {
  const from = r.clock.now();
  for (let t = 0; t <= maxMs; t += FALLBACK_MS / 4) {
    const done = await result(r.engine, id);
    if (done.status !== 'parked' && done.status !== 'queued' && done.status !== 'running')
      return { done, tookMs: r.clock.now() - from };
    await r.advance(FALLBACK_MS / 4, FALLBACK_MS / 4);
  }
  throw new Error(`${id} still unfinished after ${maxMs} ms of the manual clock`);
}

describe('over contentionCap behind a live holder, the execution fails with a ContentionError', () => {
  test('reactor lock: failed after cap attempts, within cap × fallback delay; nothing ran; one park entry counting the repeats', async () => {
    const key = 'acct:cap';
    let ran = 0;
    const waiter = reactor('cap-reactor-lock')
      .withLock({ key: () => key })
      .step('work', { run: () => ++ran, undo: () => void ran-- })
      .background('all')
      .returns('work');
    const r = rig([waiter], { contentionCap: CAP, parkFallbackMs: FALLBACK_MS });
    try {
      await r.coordinator.lockAcquire({ key, holder: DIRECT, ttlMs: 600_000 }); // live for the whole test
      const w = await r.engine.start(waiter, {});
      await r.settle();
      expect(await result(r.engine, w.executionId)).toMatchObject({ status: 'parked', waitingFor: { attempt: 1 } });
      const { done, tookMs } = await untilFinished(r, w.executionId);
      expect(done.status).toBe('failed');
      if (done.status !== 'failed') return;
      expect(done.error).toMatchObject({
        name: 'ContentionError',
        code: 'contention',
        details: { primitive: 'lock', key },
      });
      expect(done.error.message).toContain(`after ${CAP} contention attempts (cap ${CAP})`);
      expect(done.failedStep).toBeUndefined();
      expect(tookMs).toBeLessThanOrEqual(CAP * FALLBACK_MS + FALLBACK_MS); // the manual clock: polls, not machine speed
      expect(ran).toBe(0);
      expect((await r.store.get(w.executionId))?.background?.contention).toBe(CAP);
      const parks = eventsOf(done.trace, 'run.parked');
      expect(parks).toHaveLength(1);
      expect(parks[0]).toMatchObject({ attempt: CAP, repeats: CAP - 1 });
      expect(eventsOf(done.trace, 'run.rolling_back')).toEqual([]);
      expect(await r.memory.waitList.list(`lock:${key}`)).toEqual([]); // nothing left registered on the key
    } finally {
      await r.close();
    }
  });

  test('inside a compose: the composed child’s reactor lock contended over the cap fails the execution with a ContentionError; the earlier step is undone', async () => {
    const key = 'acct:compose-cap';
    const log: string[] = [];
    const child = reactor('cap-child')
      .withLock({ key: () => key })
      .step('pay', { run: () => (log.push('pay'), 'paid'), compensate: () => void log.push('compensate pay') })
      .returns('pay');
    const parent = reactor('cap-parent')
      .step('reserve', { run: () => (log.push('reserve'), 1), undo: () => void log.push('undo reserve') })
      .compose('payment', child, { waitFor: ['reserve'] })
      .background('all')
      .returns('payment');
    const r = rig([parent], { contentionCap: CAP, parkFallbackMs: FALLBACK_MS });
    try {
      await r.coordinator.lockAcquire({ key, holder: DIRECT, ttlMs: 600_000 });
      const w = await r.engine.start(parent, {});
      await r.settle();
      expect(await result(r.engine, w.executionId)).toMatchObject({
        status: 'parked',
        waitingFor: { key, attempt: 1, step: 'payment' }, // where it waits: the compose step
      });
      const stored = await r.store.get(w.executionId);
      expect(stored?.background?.waitingFor).toMatchObject({ primitive: 'lock', key, step: 'payment' });
      const model = createReadModel({ store: r.store, reactors: [parent] });
      expect((await model.execution(w.executionId))?.waiting).toMatchObject({ step: 'payment' });
      const { done } = await untilFinished(r, w.executionId);
      expect(done.status).toBe('failed');
      if (done.status !== 'failed') return;
      expect(done.error).toMatchObject({ name: 'ContentionError', code: 'contention', details: { key } });
      expect(done.failedStep).toBe('payment');
      expect(done.error.message).toContain(`after ${CAP} contention attempts (cap ${CAP})`);
      expect(log).toEqual(['reserve', 'undo reserve']); // the child never ran; nothing of it is compensated
      expect(eventsOf(done.trace, 'step.compensated')).toEqual([]);
      expect((await r.store.get(w.executionId))?.background?.contention).toBe(CAP);
      const parks = eventsOf(done.trace, 'run.parked');
      expect(parks).toHaveLength(1); // the child's busy key parked the whole execution, folded into one entry
      expect(parks[0]).toMatchObject({ key, step: 'payment', attempt: CAP, repeats: CAP - 1 });
    } finally {
      await r.close();
    }
  });

  test('inside a compose, the child’s contentionTimeout bounds the wait in time: the compose step fails and the run rolls back', async () => {
    const key = 'acct:compose-timeout';
    const log: string[] = [];
    const child = reactor('timeout-child')
      .withLock({ key: () => key, contentionTimeout: '1s' })
      .step('pay', { run: () => (log.push('pay'), 'paid') })
      .returns('pay');
    const parent = reactor('timeout-parent')
      .step('reserve', { run: () => (log.push('reserve'), 1), undo: () => void log.push('undo reserve') })
      .compose('payment', child, { waitFor: ['reserve'] })
      .background('all')
      .returns('payment');
    const r = rig([parent], { contentionCap: Infinity, parkFallbackMs: FALLBACK_MS });
    try {
      await r.coordinator.lockAcquire({ key, holder: DIRECT, ttlMs: 600_000 });
      const w = await r.engine.start(parent, {});
      await r.settle();
      const parkedAt = r.clock.now();
      const { done } = await untilFinished(r, w.executionId);
      expect(done.status).toBe('failed');
      if (done.status !== 'failed') return;
      expect(r.clock.now() - parkedAt).toBeGreaterThanOrEqual(1_000);
      expect(done.failedStep).toBe('payment');
      expect(done.error).toMatchObject({ name: 'ContentionError', code: 'contention', details: { key } });
      expect(done.error.message).toContain('contentionTimeout 1000 ms passed');
      expect(log).toEqual(['reserve', 'undo reserve']);
    } finally {
      await r.close();
    }
  });

  test('a contended step over the cap: the step fails, completed steps are undone newest first, the contended step is not compensated', async () => {
    const key = 'acct:step-cap';
    const log: string[] = [];
    const counts = { undo: 0, compensate: 0 };
    const saga = reactor('cap-step')
      .step('reserve', {
        run: () => (log.push('reserve'), 1),
        undo: () => (counts.undo++, void log.push('undo reserve')),
      })
      .step('audit', {
        waitFor: ['reserve'],
        run: () => (log.push('audit'), 2),
        undo: () => (counts.undo++, void log.push('undo audit')),
      })
      .step('charge', {
        waitFor: ['audit'],
        lock: { key: () => key },
        run: () => (log.push('charge'), 3),
        compensate: () => (counts.compensate++, void log.push('compensate charge')),
        undo: () => (counts.undo++, void log.push('undo charge')),
      })
      .background('all')
      .build();
    const r = rig([saga], { contentionCap: CAP, parkFallbackMs: FALLBACK_MS });
    try {
      await r.coordinator.lockAcquire({ key, holder: DIRECT, ttlMs: 600_000 });
      const w = await r.engine.start(saga, {});
      await r.settle();
      expect(await result(r.engine, w.executionId)).toMatchObject({
        status: 'parked',
        waitingFor: { key, step: 'charge', attempt: 1 },
      });
      const { done } = await untilFinished(r, w.executionId);
      expect(done.status).toBe('failed');
      if (done.status !== 'failed') return;
      expect(done.failedStep).toBe('charge');
      expect(done.error).toMatchObject({
        name: 'ContentionError',
        code: 'contention',
        details: { primitive: 'lock', key, step: 'charge' },
      });
      expect(done.error.message).toContain(`after ${CAP} contention attempts (cap ${CAP})`);
      expect(log).toEqual(['reserve', 'audit', 'undo audit', 'undo reserve']);
      expect(counts).toEqual({ undo: 2, compensate: 0 });
      expect(eventsOf(done.trace, 'step.compensated')).toEqual([]);
      expect(eventsOf(done.trace, 'step.undone').map((e) => e.step)).toEqual(['audit', 'reserve']);
      const parks = eventsOf(done.trace, 'run.parked');
      expect(parks).toHaveLength(1);
      expect(parks[0]).toMatchObject({ step: 'charge', attempt: CAP, repeats: CAP - 1 });
    } finally {
      await r.close();
    }
  });
});

describe('a re-park behind the same holder folds into the park’s trace entry', () => {
  test('one run.parked entry whose repeats grows with each poll; its attempt is the newest; no run.resumed per poll', async () => {
    const key = 'acct:fold';
    const waiter = reactor('fold-waiter')
      .withLock({ key: () => key })
      .step('work', { run: () => 'done' })
      .background('all')
      .returns('work');
    const r = rig([waiter], { contentionCap: 50, parkFallbackMs: FALLBACK_MS });
    const seen: number[] = [];
    r.engine.subscribe((e) => void (e.type === 'run.parked' && seen.push(e.repeats ?? 0)));
    try {
      await r.coordinator.lockAcquire({ key, holder: DIRECT, ttlMs: 600_000 });
      const w = await r.engine.start(waiter, {});
      await r.settle();
      const parkedAt = r.clock.now();
      await r.advance(5 * FALLBACK_MS, FALLBACK_MS);
      const early = await r.store.get(w.executionId);
      const earlyParks = eventsOf(early?.trace ?? [], 'run.parked');
      expect(earlyParks).toHaveLength(1);
      expect(earlyParks[0]!.repeats).toBe(5);
      expect(earlyParks[0]!.attempt).toBe(6);
      expect(earlyParks[0]!.at).toBe(parkedAt); // the first park's time
      expect(earlyParks[0]!.jobId).toBe(early?.background?.waitingFor?.jobId); // the newest job
      await r.advance(5 * FALLBACK_MS, FALLBACK_MS);
      const later = await r.store.get(w.executionId);
      const laterParks = eventsOf(later?.trace ?? [], 'run.parked');
      expect(laterParks).toHaveLength(1);
      expect(laterParks[0]).toMatchObject({ repeats: 10, attempt: 11 });
      expect(later?.background?.contention).toBe(11);
      expect(later?.trace?.length).toBe(early?.trace?.length); // nothing else was added either
      expect(eventsOf(later?.trace ?? [], 'run.resumed')).toHaveLength(1);
      expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]); // listeners see every park
      // The dashboard's timeline draws one park bar, from the first park, and says how often it was repeated.
      const parkBars = timelineOf(later?.trace ?? [], r.clock.now())
        ?.lanes.flatMap((lane) => lane.bars)
        .filter((bar) => bar.kind === 'park');
      expect(parkBars).toEqual([
        expect.objectContaining({
          start: parkedAt,
          label: expect.stringContaining('parked again 10× behind the same holder'),
        }),
      ]);
      await r.coordinator.lockRelease(key, DIRECT.owner);
      await r.advance(2 * FALLBACK_MS, FALLBACK_MS);
      const done = await result(r.engine, w.executionId);
      expect(done.status === 'completed' && done.value).toBe('done');
      expect(eventsOf(done.trace, 'run.parked')).toHaveLength(1);
    } finally {
      await r.close();
    }
  });
});

describe('a park’s job that found the lease still held comes back as the same job', () => {
  test('requeuedJobOf undoes busyJobId, however often the job was enqueued again', () => {
    const id = 'mxaq5tno-abfc6ffc-4dbd-4e66';
    const parkJob = { jobId: `${id}:4`, delivery: 1 };
    const once = { jobId: busyJobId(id, parkJob), delivery: 1 };
    const twice = { jobId: busyJobId(id, once), delivery: 2 };
    expect(twice.jobId).toBe(`${id}:busy:${id}:busy:${id}:4:1:1`);
    expect(requeuedJobOf(id, once)).toEqual({ jobId: `${id}:4`, delivery: 1 });
    expect(requeuedJobOf(id, twice)).toEqual({ jobId: `${id}:4`, delivery: 2 });
    expect(requeuedJobOf(id, parkJob)).toBe(parkJob);
    expect(requeuedJobOf(id, { jobId: `${id}:handback:${id}:4:1`, delivery: 1 }).jobId).toBe(
      `${id}:handback:${id}:4:1`,
    );
  });
});
