/**
 * Waiting on a live holder (docs/decisions/068, 097), on the embedded memory backend with a
 * manual clock (no sleeps): a parked execution's fallback job that finds the key held by the
 * holder it parked behind parks again without an admission — one contention attempt, folded into
 * the park's trace entry; with `contentionCap: Infinity` it waits for the release however long;
 * a holder change between polls costs one attempt and one park entry; `contentionTimeout` bounds
 * the wait in time, at the reactor and at a step; the definition rejects a bad value.
 */
import { describe, expect, test } from 'vitest';
import { DefinitionError, reactor } from '../../src/index.js';
import { eventsOf, gate } from './helpers.js';
import { DIRECT, OTHER, result, rig } from './manual-rig.js';

describe('a fallback poll that finds the same live holder parks again without an admission', () => {
  test('contentionCap Infinity: a lock held 60 s by a live holder (parkFallbackMs 200): the waiter completes after the release, with one park entry counting the polls', async () => {
    const key = 'acct:60s';
    const release = gate();
    const entered = gate();
    const holder = reactor('holder-60s')
      .withLock({ key: () => key, ttl: '3s' }) // renewed every second of the manual clock while the step waits
      .step('hold', { run: async () => (entered.open(), await release.promise, 'held') })
      .background('all')
      .returns('hold');
    const waiter = reactor('waiter-60s')
      .withLock({ key: () => key, ttl: '3s' })
      .step('work', { run: () => 'done' })
      .background('all')
      .returns('work');
    const r = rig([holder, waiter], { contentionCap: Infinity });
    try {
      const h = await r.engine.start(holder, {});
      await entered.promise;
      const w = await r.engine.start(waiter, {});
      await r.settle(1);
      expect(await result(r.engine, w.executionId)).toMatchObject({
        status: 'parked',
        waitingFor: { primitive: 'lock', key, attempt: 1 },
      });
      const parkedAt = r.clock.now();
      await r.advance(60_000, 200, 1);
      // 60 s later: about 300 fallback polls ran; each spent an attempt, none added a trace entry.
      const waiting = await r.store.get(w.executionId);
      expect(waiting?.status).toBe('parked');
      const polls = (waiting?.background?.jobs ?? 0) - 2; // the start's job and the first park's
      expect(polls).toBeGreaterThan(250);
      expect(waiting?.background?.contention).toBe(1 + polls);
      expect(waiting?.background?.waitingFor).toMatchObject({
        primitive: 'lock',
        key,
        attempt: 1 + polls,
        holder: { owners: [expect.stringContaining(h.executionId)] },
      });
      expect(waiting?.background?.contended).toMatchObject({ primitive: 'lock', key, since: parkedAt });
      expect(eventsOf(waiting?.trace ?? [], 'run.parked')).toEqual([
        expect.objectContaining({ attempt: 1 + polls, repeats: polls, at: parkedAt }),
      ]);
      expect(eventsOf(waiting?.trace ?? [], 'run.resumed')).toHaveLength(1);
      expect(await r.memory.waitList.list(`lock:${key}`)).toEqual([waiting?.background?.waitingFor?.jobId]); // one registration, not 300
      expect((await r.coordinator.lockState(key))?.holder.owner).toContain(h.executionId); // the holder renewed its lock all along

      release.open();
      await r.settle();
      const done = await result(r.engine, w.executionId);
      expect(done.status === 'completed' && done.value).toBe('done');
      expect((await result(r.engine, h.executionId)).status).toBe('completed');
      expect(eventsOf(done.trace, 'run.parked').length).toBeLessThanOrEqual(3);
      expect(eventsOf(done.trace, 'run.parked')).toHaveLength(1);
      expect(eventsOf(done.trace, 'run.woken')).toHaveLength(1); // the release woke it
      expect(eventsOf(done.trace, 'run.resumed')).toHaveLength(2); // the start and the wake
      expect(await r.memory.waitList.list(`lock:${key}`)).toEqual([]);
    } finally {
      await r.close();
    }
  });

  test('a holder change between polls records a new park entry; each poll spends one attempt', async () => {
    const key = 'acct:change';
    const waiter = reactor('waiter-change')
      .withLock({ key: () => key })
      .step('work', { run: () => 'done' })
      .background('all')
      .returns('work');
    const r = rig([waiter], { contentionCap: 100 });
    try {
      await r.coordinator.lockAcquire({ key, holder: DIRECT, ttlMs: 600_000 });
      const w = await r.engine.start(waiter, {});
      await r.settle();
      const first = await r.store.get(w.executionId);
      expect(first?.background?.waitingFor).toMatchObject({ attempt: 1, holder: { owners: [DIRECT.owner] } });
      await r.advance(1_000, 200);
      expect((await r.store.get(w.executionId))?.background?.contention).toBe(6); // the park and five polls

      // The key changes hands outside any engine (no wake): the next poll finds another holder, contends and parks anew.
      await r.coordinator.lockRelease(key, DIRECT.owner);
      await r.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 600_000 });
      await r.advance(200, 200);
      const changed = await r.store.get(w.executionId);
      expect(changed?.status).toBe('parked');
      expect(changed?.background?.contention).toBe(7);
      expect(changed?.background?.waitingFor).toMatchObject({ attempt: 7, holder: { owners: [OTHER.owner] } });
      expect(eventsOf(changed?.trace ?? [], 'run.parked').map((e) => [e.attempt, e.repeats])).toEqual([
        [6, 5],
        [7, undefined],
      ]);
      // The wait goes on: it began at the first park.
      expect(changed?.background?.contended?.since).toBe(first?.background?.contended?.since);

      // Released behind the engine's back: the next poll finds the key free and takes it.
      await r.coordinator.lockRelease(key, OTHER.owner);
      await r.advance(400, 200);
      const done = await result(r.engine, w.executionId);
      expect(done.status === 'completed' && done.value).toBe('done');
      expect(eventsOf(done.trace, 'run.parked').map((e) => e.attempt)).toEqual([6, 7]);
      expect(eventsOf(done.trace, 'run.resumed')).toHaveLength(3); // start, the poll after the change, the poll that found it free
    } finally {
      await r.close();
    }
  });

  test('a full semaphore: a poll that finds the same holders re-parks; a slot changing hands records a new park', async () => {
    const key = 'pool:sem';
    const waiter = reactor('waiter-sem')
      .withSemaphore({ key: () => key, limit: 1 })
      .step('work', { run: () => 'done' })
      .background('all')
      .returns('work');
    const r = rig([waiter], { contentionCap: 100 });
    try {
      await r.coordinator.semaphoreAcquire({ key, holder: DIRECT, limit: 1, ttlMs: 600_000 });
      const w = await r.engine.start(waiter, {});
      await r.settle();
      expect((await r.store.get(w.executionId))?.background?.waitingFor).toMatchObject({
        primitive: 'semaphore',
        attempt: 1,
        holder: { owners: [DIRECT.owner] },
      });
      await r.advance(2_000, 200);
      expect((await r.store.get(w.executionId))?.background?.contention).toBe(11);
      await r.coordinator.semaphoreRelease(key, DIRECT.owner);
      await r.coordinator.semaphoreAcquire({ key, holder: OTHER, limit: 1, ttlMs: 600_000 });
      await r.advance(200, 200);
      const changed = await r.store.get(w.executionId);
      expect(changed?.background?.waitingFor).toMatchObject({ attempt: 12, holder: { owners: [OTHER.owner] } });
      expect(eventsOf(changed?.trace ?? [], 'run.parked')).toHaveLength(2);
      await r.coordinator.semaphoreRelease(key, OTHER.owner);
      await r.advance(400, 200);
      expect((await result(r.engine, w.executionId)).status).toBe('completed');
    } finally {
      await r.close();
    }
  });

  test('reactor-level holds kept across a step park are renewed by the re-parks (not lost to their TTL)', async () => {
    const [parentKey, childKey] = ['parent:kept', 'child:busy'];
    const r0 = reactor('kept-holds')
      .withLock({ key: () => parentKey, ttl: '1s' })
      .step('child', { lock: { key: () => childKey }, run: () => 'done' })
      .background('all')
      .returns('child');
    const r = rig([r0], { contentionCap: Infinity });
    try {
      await r.coordinator.lockAcquire({ key: childKey, holder: DIRECT, ttlMs: 600_000 });
      const w = await r.engine.start(r0, {});
      await r.settle();
      const parked = await r.store.get(w.executionId);
      expect(parked?.background?.parkedHolds).toBeDefined();
      const owner = (await r.coordinator.lockState(parentKey))?.holder.owner;
      await r.advance(5_000, 200); // five times the parent lock's TTL
      expect((await r.coordinator.lockState(parentKey))?.holder.owner).toBe(owner);
      expect((await r.store.get(w.executionId))?.background?.contention).toBe(26); // the park and 25 polls
      await r.coordinator.lockRelease(childKey, DIRECT.owner);
      await r.advance(400, 200);
      const done = await result(r.engine, w.executionId);
      expect(done.status).toBe('completed');
      expect(done.trace.filter((e) => e.type === 'coordination.acquired' && e.key === parentKey)).toHaveLength(1); // re-adopted, never re-taken
    } finally {
      await r.close();
    }
  });
});

describe('contentionTimeout bounds a wait in time', () => {
  test('reactor level: the execution fails with a ContentionError once it has waited the timeout, however few attempts it spent; nothing ran', async () => {
    const key = 'acct:timeout';
    let ran = 0;
    const waiter = reactor('waiter-timeout')
      .withLock({ key: () => key, contentionTimeout: '2s' })
      .step('work', { run: () => ++ran, undo: () => void ran-- })
      .background('all')
      .returns('work');
    const r = rig([waiter], { contentionCap: 100, parkFallbackMs: 300 });
    try {
      await r.coordinator.lockAcquire({ key, holder: DIRECT, ttlMs: 600_000 });
      const w = await r.engine.start(waiter, {});
      await r.settle();
      const parkedAt = r.clock.now();
      expect((await r.store.get(w.executionId))?.background?.contended).toMatchObject({
        since: parkedAt,
        timeoutAt: parkedAt + 2_000,
      });
      await r.advance(1_900, 100);
      expect((await result(r.engine, w.executionId)).status).toBe('parked');
      await r.advance(100, 100);
      const done = await result(r.engine, w.executionId);
      expect(done.status).toBe('failed');
      if (done.status !== 'failed') return;
      expect(done.error).toMatchObject({
        code: 'contention',
        name: 'ContentionError',
        details: { primitive: 'lock', key },
      });
      expect(done.error.message).toContain('contentionTimeout 2000 ms passed');
      expect(done.error.message).toContain(DIRECT.owner);
      expect(done.failedStep).toBeUndefined();
      expect(ran).toBe(0);
      expect(eventsOf(done.trace, 'run.parked')).toHaveLength(1);
      expect(eventsOf(done.trace, 'run.rolling_back')).toEqual([]);
    } finally {
      await r.close();
    }
  });

  test('step level: the step fails with the ContentionError and the run rolls back its completed steps', async () => {
    const key = 'acct:step-timeout';
    const log: string[] = [];
    const waiter = reactor('step-timeout')
      .step('audit', { run: () => (log.push('audit'), 1), undo: () => void log.push('undo audit') })
      .step('charge', {
        waitFor: ['audit'],
        lock: { key: () => key, contentionTimeout: 1_000 },
        run: () => void log.push('charge'),
      })
      .background('all')
      .build();
    const r = rig([waiter], { contentionCap: 100 });
    try {
      await r.coordinator.lockAcquire({ key, holder: DIRECT, ttlMs: 600_000 });
      const w = await r.engine.start(waiter, {});
      await r.settle();
      expect((await result(r.engine, w.executionId)).status).toBe('parked');
      await r.advance(1_000, 200);
      const done = await result(r.engine, w.executionId);
      expect(done.status).toBe('failed');
      if (done.status !== 'failed') return;
      expect(done.failedStep).toBe('charge');
      expect(done.error).toMatchObject({ code: 'contention', details: { primitive: 'lock', key, step: 'charge' } });
      expect(done.error.message).toContain('contentionTimeout 1000 ms passed');
      expect(log).toEqual(['audit', 'undo audit']);
      expect(eventsOf(done.trace, 'run.parked')).toHaveLength(1);
    } finally {
      await r.close();
    }
  });

  test('a rate limit: the park resumes when the bound passes instead of at the window end, and fails', async () => {
    const key = 'api:timeout';
    const limited = reactor('rate-timeout')
      .withRateLimit({ key: () => key, limit: 1, per: '1h', contentionTimeout: '1s' })
      .step('call', { run: () => 'called' })
      .background('all')
      .returns('call');
    const r = rig([limited]);
    try {
      const first = await r.engine.start(limited, {});
      await r.settle();
      expect((await result(r.engine, first.executionId)).status).toBe('completed');
      const second = await r.engine.start(limited, {});
      await r.settle();
      expect(
        (await result(r.engine, second.executionId)).status === 'parked' &&
          (await r.store.get(second.executionId))?.background?.waitingFor?.dueAt,
      ).toBe(r.clock.now() + 1_000);
      await r.advance(1_000, 500);
      const done = await result(r.engine, second.executionId);
      expect(done.status === 'failed' && done.error).toMatchObject({
        code: 'contention',
        details: { primitive: 'rate_limit', key },
      });
      expect(done.status === 'failed' && done.error.message).toContain('contentionTimeout 1000 ms passed');
    } finally {
      await r.close();
    }
  });

  test('a bad value fails the definition with a DefinitionError naming the option', () => {
    const bad = (build: () => unknown): DefinitionError => {
      try {
        build();
      } catch (error) {
        if (error instanceof DefinitionError) return error;
        throw error;
      }
      throw new Error('the definition was accepted');
    };
    expect(bad(() => reactor('r1').withLock({ key: () => 'k', contentionTimeout: 'soon' as never })).message).toContain(
      'withLock contentionTimeout is not a duration',
    );
    expect(
      bad(() => reactor('r2').withSemaphore({ key: () => 'k', limit: 2, contentionTimeout: 0 })).message,
    ).toContain('withSemaphore contentionTimeout must be longer than 0');
    expect(
      bad(() => reactor('r3').withRateLimit({ key: () => 'k', limit: 1, per: '1s', contentionTimeout: -5 })).message,
    ).toContain('withRateLimit contentionTimeout is not a duration');
    expect(
      bad(() => reactor('r4').step('s', { lock: { key: () => 'k', contentionTimeout: Number.NaN }, run: () => 1 }))
        .message,
    ).toMatch(/step "s": lock contentionTimeout is not a duration|withLock contentionTimeout is not a duration/);
    expect(
      bad(() => reactor('r5').withOrderedLock({ key: () => 'k', contentionTimeout: '1m' } as never)).message,
    ).toContain('withOrderedLock takes no contentionTimeout');
    const ok = reactor('r6')
      .withLock({ key: () => 'k', contentionTimeout: '10m' })
      .step('s', { run: () => 1 })
      .build();
    expect(ok.coordination[0]).toMatchObject({ kind: 'lock', contentionTimeoutMs: 600_000 });
  });
});
