/**
 * RedisStore beyond the shared store contract: the stored layout, TTLs, nothing written on a
 * refused save, raw records of another version, the idempotency race, and list pagination and
 * index clean-up.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ListFilterError, RecordTooLargeError, RecordVersionError } from '../../src/errors.js';
import { RECORD_VERSION, type ExecutionRecord } from '../../src/ports/store.js';
import { createRedisBackend, RedisKeys, RedisStore, type RedisBackend } from '../../src/storage/redis/index.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const T0 = Date.UTC(2026, 10, 30);

function record(id: string, overrides: Partial<ExecutionRecord> = {}): ExecutionRecord {
  return {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor: 'Checkout',
    status: 'running',
    input: { n: 1 },
    steps: {},
    rollbackFailures: [],
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

let server: RedisServerHandle;
let backend: RedisBackend;
let store: RedisStore;
let keys: RedisKeys;
let prefix: string;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server.dispose();
});
beforeEach(() => {
  prefix = `rxst${crypto.randomUUID().slice(0, 8)}`;
  keys = new RedisKeys(prefix);
  backend = createRedisBackend({ url: server.url, prefix, recordTtlMs: 60_000, maxRecordBytes: 2048 });
  store = backend.store as RedisStore;
});
afterEach(async () => {
  await backend.close();
});

describe('save / get', () => {
  it('stores the record as JSON under its key with the configured TTL, indexed by createdAt', async () => {
    const r = record('e1', {
      steps: { a: { status: 'completed', attempts: 1, result: { ok: true }, completedSeq: 1 } },
    });
    await store.save(r);
    expect(await store.get('e1')).toEqual(r);
    expect(JSON.parse((await backend.redis.get(keys.execution('e1'))) ?? 'null')).toEqual(r);
    const ttl = await backend.redis.pttl(keys.execution('e1'));
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    for (const index of [
      keys.executionIndex(),
      keys.executionIndexByReactor('Checkout'),
      keys.executionIndexByStatus('running'),
    ]) {
      expect(await backend.redis.zscore(index, 'e1')).toBe(String(T0));
      expect(await backend.redis.pttl(index)).toBeGreaterThan(55_000);
    }
  });

  it('uses a 7-day TTL and a 512 KiB limit by default', async () => {
    const defaults = new RedisStore({ redis: backend.redis, prefix });
    expect(defaults.recordTtlMs).toBe(7 * 24 * 3600 * 1000);
    expect(defaults.maxRecordBytes).toBe(512 * 1024);
    await defaults.save(record('d1'));
    expect(await backend.redis.pttl(keys.execution('d1'))).toBeGreaterThan(6 * 24 * 3600 * 1000);
    expect(() => new RedisStore({ redis: backend.redis, recordTtlMs: 0 })).toThrow(RangeError);
  });

  it('forgets a record when its TTL lapses', async () => {
    const short = createRedisBackend({ redis: backend.redis, prefix, recordTtlMs: 100 });
    await short.store.save(record('brief'));
    expect(await short.store.get('brief')).toBeDefined();
    await sleep(200);
    expect(await short.store.get('brief')).toBeUndefined();
    expect((await short.store.list()).records).toEqual([]);
    await short.close();
    expect(backend.redis.status).toBe('ready'); // a passed-in connection is not closed
  });

  it('refuses an oversized record and writes nothing (record or index)', async () => {
    await store.save(record('big', { input: 'x'.repeat(100) }));
    const big = record('big', { input: 'x'.repeat(4096) });
    const error = await store.save(big).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordTooLargeError);
    expect(error).toMatchObject({ code: 'record_too_large', details: { executionId: 'big', limit: 2048 } });
    expect((await store.get('big'))?.input).toBe('x'.repeat(100));
    await expect(store.save(record('big2', { input: 'x'.repeat(4096) }))).rejects.toBeInstanceOf(RecordTooLargeError);
    expect(await backend.redis.exists(keys.execution('big2'))).toBe(0);
    expect(await backend.redis.zscore(keys.executionIndex(), 'big2')).toBeNull();
  });

  it('throws RecordVersionError for a record of another schema version or an unreadable one', async () => {
    await backend.redis.set(keys.execution('old'), JSON.stringify({ ...record('old'), v: 2 }));
    await expect(store.get('old')).rejects.toBeInstanceOf(RecordVersionError);
    await expect(store.get('old')).rejects.toMatchObject({ details: { found: 2, expected: RECORD_VERSION } });
    await backend.redis.set(keys.execution('junk'), '{not json');
    await expect(store.get('junk')).rejects.toBeInstanceOf(RecordVersionError);
  });

  it('keeps ids with braces and colons apart', async () => {
    await store.save(record('a}:b'));
    await store.save(record('a', { reactor: 'Other' }));
    expect((await store.get('a}:b'))?.reactor).toBe('Checkout');
    expect((await store.get('a'))?.reactor).toBe('Other');
  });
});

describe('claimIdempotency', () => {
  it('lets exactly one of many concurrent claims win; the others learn the winner', async () => {
    const claims = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.claimIdempotency('Checkout', 'order-7', `e${i}`)),
    );
    const winners = claims.map((claim, i) => (claim.claimed ? `e${i}` : undefined)).filter((id) => id !== undefined);
    expect(winners).toHaveLength(1);
    for (const claim of claims) if (!claim.claimed) expect(claim.executionId).toBe(winners[0]);
    // Scoped per reactor, and expiring with the record TTL.
    expect(await store.claimIdempotency('Refund', 'order-7', 'r1')).toEqual({ claimed: true });
    const ttl = await backend.redis.pttl(keys.idempotency('Checkout', 'order-7'));
    expect(ttl).toBeGreaterThan(55_000);
  });

  it('answers claimed again to the winner itself (a retried claim)', async () => {
    expect(await store.claimIdempotency('R', 'k', 'e1')).toEqual({ claimed: true });
    expect(await store.claimIdempotency('R', 'k', 'e1')).toEqual({ claimed: true });
    expect(await store.claimIdempotency('R', 'k', 'e2')).toEqual({ claimed: false, executionId: 'e1' });
  });
});

describe('list', () => {
  it('pages newest first through records that share a createdAt, without duplicates or gaps', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      const id = `e${String(i).padStart(2, '0')}`;
      ids.push(id);
      await store.save(record(id, { createdAt: T0 + Math.floor(i / 5) })); // groups of 5 share a time
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.list({ limit: 4, ...(cursor === undefined ? {} : { cursor }) });
      expect(page.records.length).toBeLessThanOrEqual(4);
      seen.push(...page.records.map((r) => r.id));
      cursor = page.cursor;
      pages++;
    } while (cursor !== undefined && pages < 20);
    expect(pages).toBe(6);
    expect(seen).toHaveLength(23);
    expect(new Set(seen).size).toBe(23);
    const times = seen.map((id) => Math.floor(Number(id.slice(1)) / 5));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('filters by reactor and status, following status changes', async () => {
    await store.save(record('a1', { reactor: 'A', createdAt: T0 + 1 }));
    await store.save(record('a2', { reactor: 'A', createdAt: T0 + 2 }));
    await store.save(record('b1', { reactor: 'B', createdAt: T0 + 3 }));
    await store.save(record('a1', { reactor: 'A', createdAt: T0 + 1, status: 'completed' }));
    expect((await store.list({ reactor: 'A' })).records.map((r) => r.id)).toEqual(['a2', 'a1']);
    expect((await store.list({ status: 'running' })).records.map((r) => r.id)).toEqual(['b1', 'a2']);
    expect((await store.list({ status: 'completed' })).records.map((r) => r.id)).toEqual(['a1']);
    expect((await store.list({ reactor: 'A', status: 'running' })).records.map((r) => r.id)).toEqual(['a2']);
    expect((await store.list({ reactor: 'nobody' })).records).toEqual([]);
    // The stale `running` entry of a1 was dropped from that index when met.
    expect(await backend.redis.zscore(keys.executionIndexByStatus('running'), 'a1')).toBeNull();
  });

  it('drops index entries of expired records when it meets them, and still fills the page', async () => {
    for (let i = 0; i < 6; i++) await store.save(record(`k${i}`, { createdAt: T0 + i }));
    await backend.redis.del(keys.execution('k5'), keys.execution('k4')); // as if expired
    const page = await store.list({ limit: 3 });
    expect(page.records.map((r) => r.id)).toEqual(['k3', 'k2', 'k1']);
    expect(page.cursor).toBeDefined();
    expect(await backend.redis.zcard(keys.executionIndex())).toBe(4);
    const rest = await store.list({ limit: 3, ...(page.cursor === undefined ? {} : { cursor: page.cursor }) });
    expect(rest).toEqual({ records: [expect.objectContaining({ id: 'k0' })] });
  });

  it('rejects a malformed cursor or limit', async () => {
    await expect(store.list({ cursor: 'nonsense' })).rejects.toThrow(ListFilterError);
    await expect(store.list({ limit: 0 })).rejects.toThrow(RangeError);
  });
});
