/**
 * Waiting on a live holder (docs/decisions/068, 097), on Redis + BullMQ with a worker in this
 * process and a real redis-server: with `contentionCap: Infinity`, a lock held for a few seconds
 * by a live, renewing holder (parkFallbackMs 200) lets the waiter complete after the release with
 * one park entry counting the polls (each one contention attempt); a holder change between polls
 * records a new park entry; `contentionTimeout` fails the wait in time.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { reactor, type AnyReactorDefinition, type RunResult } from '../../src/index.js';
import { createRedisBackend, RedisKeys, type RedisBackend } from '../../src/storage/redis/index.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { eventsOf, gate, sleep, until } from './helpers.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

let seq = 0;
function runtime(
  reactors: readonly AnyReactorDefinition[],
  contentionCap = 3,
): {
  readonly runtime: RedisRuntime;
  readonly backend: RedisBackend;
  readonly keys: RedisKeys;
} {
  const prefix = `lh${++seq}`;
  const r = createRedisRuntime({
    url: server.url,
    prefix,
    reactors,
    background: { parkFallbackMs: 200, contentionCap },
  });
  const backend = createRedisBackend({ url: server.url, prefix });
  closers.push(
    () => r.close(),
    () => backend.close(),
  );
  r.startWorker({ concurrency: 4 });
  return { runtime: r, backend, keys: new RedisKeys(prefix) };
}

async function settled(r: RedisRuntime, id: string, timeoutMs = 30_000): Promise<RunResult> {
  const done = await r.engine.wait(id, { timeoutMs, pollMs: 10 });
  if (!done) throw new Error(`no result for ${id}`);
  return done;
}

describe('on Redis, a parked waiter behind a live holder', () => {
  test('contentionCap Infinity: a lock held 3.5 s or more by a live, renewing holder (parkFallbackMs 200): the waiter completes after the release, one park entry counting the polls', async () => {
    const key = 'acct:redis-live';
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
    const { runtime: r, backend } = runtime([holder, waiter], Infinity);
    const h = await r.engine.start(holder, {});
    await entered.promise;
    const w = await r.engine.start(waiter, {});
    await until(async () => (await r.engine.result(w.executionId))?.status === 'parked', 115_000, 'the waiter to park');
    const parkedAt = Date.now();
    // At least 3.5 s and eight fallback jobs behind the live holder, however slow the machine.
    const waiting = await until(
      async () => {
        const record = await backend.store.get(w.executionId);
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
    const releasedAt = Date.now();
    release.open();
    const done = await settled(r, w.executionId);
    expect(done.status === 'completed' && done.value).toBe('done');
    expect(Date.now() - releasedAt).toBeLessThan(10_000);
    expect((await settled(r, h.executionId)).status).toBe('completed');
    expect(eventsOf(done.trace, 'run.parked').length).toBeLessThanOrEqual(3);
    expect(eventsOf(done.trace, 'run.parked')).toHaveLength(1);
  }, 90_000);

  test('a holder change between polls records one more park entry', async () => {
    const key = 'acct:redis-change';
    const waiter = reactor('lh-change')
      .withLock({ key: () => key })
      .step('work', { run: () => 'done' })
      .background('all')
      .returns('work');
    const { runtime: r, backend, keys } = runtime([waiter], Infinity);
    const [a, b] = [
      { owner: 'holder-a', reactor: 'elsewhere' },
      { owner: 'holder-b', reactor: 'elsewhere' },
    ];
    expect((await backend.coordinator.lockAcquire({ key, holder: a, ttlMs: 60_000 })).acquired).toBe(true);
    const w = await r.engine.start(waiter, {});
    await until(async () => (await r.engine.result(w.executionId))?.status === 'parked', 15_000, 'the waiter to park');
    await sleep(800);
    expect(eventsOf((await backend.store.get(w.executionId))?.trace ?? [], 'run.parked')).toHaveLength(1);
    // The key changes hands with no moment free (a release would wake the waiter at once): one HSET
    // gives the lock hash another owner and a greater fencing token, its lease left as it is.
    const token = (await backend.coordinator.lockState(key))?.token ?? '0';
    await backend.redis.hset(keys.lock(key), 'owner', b.owner, 'exec', '', 'token', String(BigInt(token) + 1n));
    expect(await backend.coordinator.lockState(key)).toMatchObject({ holder: { owner: b.owner } });
    await until(
      async () => eventsOf((await backend.store.get(w.executionId))?.trace ?? [], 'run.parked').length === 2,
      15_000,
      'the park after the change',
    );
    await sleep(800);
    const changed = await backend.store.get(w.executionId);
    expect(changed?.status).toBe('parked');
    expect(changed?.background?.waitingFor).toMatchObject({ holder: { owners: [b.owner] } });
    const [before, after] = eventsOf(changed?.trace ?? [], 'run.parked');
    expect(before?.attempt).toBe((before?.repeats ?? 0) + 1);
    expect(after?.attempt).toBe((before?.attempt ?? 0) + 1 + (after?.repeats ?? 0));
    expect(changed?.background?.contention).toBe(after?.attempt);
    await backend.coordinator.lockRelease(key, b.owner); // behind the engine's back: the next poll finds it free
    const done = await settled(r, w.executionId);
    expect(done.status).toBe('completed');
    expect(eventsOf(done.trace, 'run.parked')).toHaveLength(2);
  }, 60_000);

  test('contentionTimeout: the wait fails with a ContentionError once it has lasted the timeout', async () => {
    const key = 'acct:redis-timeout';
    const waiter = reactor('lh-timeout')
      .withLock({ key: () => key, contentionTimeout: '1s' })
      .step('work', { run: () => 'done' })
      .background('all')
      .returns('work');
    const { runtime: r, backend } = runtime([waiter], Infinity);
    expect(
      (await backend.coordinator.lockAcquire({ key, holder: { owner: 'holder-t' }, ttlMs: 60_000 })).acquired,
    ).toBe(true);
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
    await backend.coordinator.lockRelease(key, 'holder-t');
  }, 60_000);
});
