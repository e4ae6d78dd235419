/**
 * Waiting on a live holder (docs/decisions/068, 097) on every backend of the matrix, with a worker
 * in this process and real time: with `contentionCap: Infinity`, a lock held for a few seconds by
 * a live, renewing holder (parkFallbackMs 200) lets the waiter complete after the release with one
 * park entry counting the polls (each one contention attempt); a holder change between polls
 * records a new park entry (the server backends: the change is written behind the engine's back,
 * in the backend's own terms); `contentionTimeout` fails the wait in time. The memory twin with a
 * manual clock is `live-holder.test.ts`.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { expect, test } from 'vitest';
import { reactor, type AnyReactorDefinition, type RunResult } from '../../src/index.js';
import { PostgresNames } from '../../src/storage/postgres/names.js';
import { RedisKeys } from '../../src/storage/redis/index.js';
import { describeOnBackends, testWhere, type MatrixBackend, type MatrixRuntime } from '../support/backend-matrix.js';
import { eventsOf, gate, sleep, until } from './helpers.js';

/**
 * Gives the lock on `key` another owner and a greater fencing token with no moment free (a release
 * would wake the waiter at once), its lease left as it is: one write to the backend's lock state.
 */
async function changeHolder(backend: MatrixBackend, runtime: MatrixRuntime, key: string, owner: string): Promise<void> {
  const { url } = backend.address();
  if (backend.name === 'redis') {
    const redis = new Redis(url!);
    try {
      const token = (await runtime.backend.coordinator.lockState(key))?.token ?? '0';
      await redis.hset(
        new RedisKeys(runtime.namespace).lock(key),
        'owner',
        owner,
        'exec',
        '',
        'token',
        String(BigInt(token) + 1n),
      );
    } finally {
      redis.disconnect();
    }
    return;
  }
  if (backend.name === 'postgres') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const table = new PostgresNames(runtime.namespace).coordLocks;
      await client.query(`UPDATE ${table} SET owner = $2, execution_id = NULL, token = token + 1 WHERE key = $1`, [
        key,
        owner,
      ]);
    } finally {
      await client.end();
    }
    return;
  }
  throw new Error(`no holder change written behind the engine's back on ${backend.name}`);
}

describeOnBackends('a parked waiter behind a live holder', (backend) => {
  /** A runtime with its worker started, its backend ready (a schema migrated) for the test's own coordinator calls. */
  async function rig(reactors: readonly AnyReactorDefinition[]): Promise<MatrixRuntime> {
    const runtime = backend.runtime({ reactors, background: { parkFallbackMs: 200, contentionCap: Infinity } });
    await runtime.backend.ready;
    runtime.startWorker({ concurrency: 4 });
    return runtime;
  }

  async function settled(r: MatrixRuntime, id: string, timeoutMs = 30_000): Promise<RunResult> {
    const done = await r.engine.wait(id, { timeoutMs, pollMs: 10 });
    if (!done) throw new Error(`no result for ${id}`);
    return done;
  }

  test('contentionCap Infinity: a lock held 3.5 s or more by a live, renewing holder (parkFallbackMs 200): the waiter completes after the release, one park entry counting the polls', async () => {
    const key = 'acct:live';
    const release = gate();
    const entered = gate();
    const holder = reactor('lh-holder')
      .withLock({ key: () => key, ttl: '3s' }) // renewed every second while the step waits
      .step('hold', { run: async () => (entered.open(), await release.promise, 'held') })
      .background('all')
      .returns('hold');
    const waiter = reactor('lh-waiter')
      .withLock({ key: () => key, ttl: '1s' })
      .step('work', { run: () => 'done' })
      .background('all')
      .returns('work');
    const r = await rig([holder, waiter]);
    const h = await r.engine.start(holder, {});
    await entered.promise;
    const w = await r.engine.start(waiter, {});
    await until(async () => (await r.engine.result(w.executionId))?.status === 'parked', 115_000, 'the waiter to park');
    const parkedAt = Date.now();
    // At least 3.5 s and eight fallback jobs behind the live holder, however slow the machine.
    const waiting = await until(
      async () => {
        const record = await r.backend.store.get(w.executionId);
        return Date.now() - parkedAt >= 3_500 && (record?.background?.jobs ?? 0) >= 8 ? record : undefined;
      },
      40_000,
      'eight fallback jobs',
    );
    expect(waiting?.status).toBe('parked');
    const parks = eventsOf(waiting?.trace ?? [], 'run.parked');
    expect(parks).toHaveLength(1); // its fallback jobs ran every 200 ms, each folded into this entry
    expect(parks[0]?.repeats).toBeGreaterThanOrEqual(6);
    expect(waiting?.background?.contention).toBe((parks[0]?.repeats ?? 0) + 1);
    expect((await r.backend.coordinator.lockState(key))?.holder.owner).toContain(h.executionId); // renewed all along
    release.open();
    const done = await settled(r, w.executionId, 90_000);
    expect(done.status === 'completed' && done.value).toBe('done');
    expect((await settled(r, h.executionId)).status).toBe('completed');
    expect(eventsOf(done.trace, 'run.parked')).toHaveLength(1);
  }, 180_000);

  // The change is written behind the engine's back in a server's own terms; the memory twin makes it on its manual clock.
  testWhere(backend.shared)(
    'a holder change between polls records one more park entry',
    async () => {
      const key = 'acct:change';
      const waiter = reactor('lh-change')
        .withLock({ key: () => key })
        .step('work', { run: () => 'done' })
        .background('all')
        .returns('work');
      const r = await rig([waiter]);
      const [a, b] = [
        { owner: 'holder-a', reactor: 'elsewhere' },
        { owner: 'holder-b', reactor: 'elsewhere' },
      ];
      const { coordinator, store } = r.backend;
      expect((await coordinator.lockAcquire({ key, holder: a, ttlMs: 60_000 })).acquired).toBe(true);
      const w = await r.engine.start(waiter, {});
      await until(
        async () => (await r.engine.result(w.executionId))?.status === 'parked',
        15_000,
        'the waiter to park',
      );
      await sleep(800);
      expect(eventsOf((await store.get(w.executionId))?.trace ?? [], 'run.parked')).toHaveLength(1);
      const before = (await coordinator.lockState(key))?.token ?? '0';
      await changeHolder(backend, r, key, b.owner);
      const changedHands = await coordinator.lockState(key);
      expect(changedHands).toMatchObject({ holder: { owner: b.owner } });
      expect(BigInt(changedHands?.token ?? '0')).toBeGreaterThan(BigInt(before));
      await until(
        async () => eventsOf((await store.get(w.executionId))?.trace ?? [], 'run.parked').length === 2,
        15_000,
        'the park after the change',
      );
      await sleep(800);
      const changed = await store.get(w.executionId);
      expect(changed?.status).toBe('parked');
      expect(changed?.background?.waitingFor).toMatchObject({ holder: { owners: [b.owner] } });
      const [first, second] = eventsOf(changed?.trace ?? [], 'run.parked');
      expect(first?.attempt).toBe((first?.repeats ?? 0) + 1);
      expect(second?.attempt).toBe((first?.attempt ?? 0) + 1 + (second?.repeats ?? 0));
      expect(changed?.background?.contention).toBe(second?.attempt);
      await coordinator.lockRelease(key, b.owner);
      const done = await settled(r, w.executionId);
      expect(done.status).toBe('completed');
      expect(eventsOf(done.trace, 'run.parked')).toHaveLength(2);
    },
    60_000,
  );

  test('contentionTimeout: the wait fails with a ContentionError once it has lasted the timeout', async () => {
    const key = 'acct:timeout';
    const waiter = reactor('lh-timeout')
      .withLock({ key: () => key, contentionTimeout: '1s' })
      .step('work', { run: () => 'done' })
      .background('all')
      .returns('work');
    const r = await rig([waiter]);
    const { coordinator } = r.backend;
    expect((await coordinator.lockAcquire({ key, holder: { owner: 'holder-t' }, ttlMs: 60_000 })).acquired).toBe(true);
    const startedAt = Date.now();
    const w = await r.engine.start(waiter, {});
    const done = await settled(r, w.executionId);
    expect(done.status).toBe('failed');
    if (done.status !== 'failed') return;
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1_000);
    expect(done.error).toMatchObject({
      code: 'contention',
      name: 'ContentionError',
      details: { primitive: 'lock', key },
    });
    expect(done.error.message).toContain('contentionTimeout 1000 ms passed');
    expect(eventsOf(done.trace, 'run.parked')).toHaveLength(1);
    await coordinator.lockRelease(key, 'holder-t');
  }, 60_000);
});
