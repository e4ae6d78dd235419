/**
 * The contract of what operators read: the CoordinationInspector (which keys have live state)
 * and the Store's time-range filter. Run against memory and Redis; each test gets a fresh
 * backend (its own prefix on Redis).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Coordinator } from '../../src/ports/coordinator.js';
import type { CoordinationInspector } from '../../src/ports/inspector.js';
import { RECORD_VERSION, type ExecutionRecord, type Store } from '../../src/ports/store.js';
import { createReadModel } from '../../src/ops/read-model.js';

/** A fresh backend under test, and the means to move its time forward. */
export interface OpsHarness {
  readonly coordinator: Coordinator & CoordinationInspector;
  readonly store: Store;
  advance(ms: number): Promise<void>;
  close(): Promise<void>;
}

const holder = (owner: string) => ({ owner, executionId: owner, reactor: 'r' });

function record(id: string, createdAt: number): ExecutionRecord {
  return {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor: 'R',
    status: 'completed',
    input: {},
    steps: {},
    rollbackFailures: [],
    createdAt,
    updatedAt: createdAt,
  };
}

export function describeOpsContract(name: string, makeHarness: () => Promise<OpsHarness>): void {
  describe(`Inspector and time-range contract: ${name}`, () => {
    let h: OpsHarness;
    beforeEach(async () => {
      h = await makeHarness();
    });
    afterEach(async () => {
      await h.close();
    });

    it('lists held locks by glob, sorted, without free or expired ones', async () => {
      const c = h.coordinator;
      await c.lockAcquire({ key: 'acct:2', holder: holder('a'), ttlMs: 5_000 });
      await c.lockAcquire({ key: 'acct:1', holder: holder('b'), ttlMs: 5_000 });
      await c.lockAcquire({ key: 'other', holder: holder('c'), ttlMs: 5_000 });
      await c.lockAcquire({ key: 'acct:short', holder: holder('d'), ttlMs: 150 });
      await c.lockAcquire({ key: 'acct:freed', holder: holder('e'), ttlMs: 5_000 });
      await c.lockRelease('acct:freed', 'e');
      await h.advance(200);
      expect((await c.inspectKeys('lock')).map((k) => k.key)).toEqual(['acct:1', 'acct:2', 'other']);
      expect(await c.inspectKeys('lock', { pattern: 'acct:*' })).toEqual([
        { kind: 'lock', key: 'acct:1' },
        { kind: 'lock', key: 'acct:2' },
      ]);
      expect((await c.inspectKeys('lock', { pattern: 'acct:?' })).map((k) => k.key)).toEqual(['acct:1', 'acct:2']);
      expect((await c.inspectKeys('lock', { limit: 1 })).map((k) => k.key)).toEqual(['acct:1']);
    });

    it('treats every character but * and ? literally, braces, percent signs and brackets included', async () => {
      const c = h.coordinator;
      const odd = ['a{b}', 'a%7Bb', 'a[1]', 'a\\x', 'a.b'];
      for (const key of odd) await c.lockAcquire({ key, holder: holder(key), ttlMs: 5_000 });
      for (const key of odd) expect((await c.inspectKeys('lock', { pattern: key })).map((k) => k.key)).toEqual([key]);
      expect((await c.inspectKeys('lock', { pattern: 'a?b' })).map((k) => k.key)).toEqual(['a.b']);
      expect((await c.inspectKeys('lock', { pattern: 'a{*' })).map((k) => k.key)).toEqual(['a{b}']);
    });

    it('lists semaphores with a live lease, rate logs with their window, period buckets and ordered locks', async () => {
      const c = h.coordinator;
      await c.semaphoreAcquire({ key: 'pool', holder: holder('a'), limit: 2, ttlMs: 5_000 });
      await c.semaphoreAcquire({ key: 'pool-short', holder: holder('a'), limit: 2, ttlMs: 150 });
      await c.rateTake({ id: 'r1', windows: [{ key: 'api', limit: 5, periodMs: 60_000 }] });
      await c.rateTake({ id: 'r2', windows: [{ key: 'api-short', limit: 5, periodMs: 150 }] });
      await c.periodMark({ key: 'daily', bucket: '2026-11-30', ttlMs: 60_000 });
      await c.periodMark({ key: 'daily', bucket: '2026-11-29', ttlMs: 150 });
      await c.orderedTicket('feed');
      await h.advance(200);
      expect(await c.inspectKeys('semaphore')).toEqual([{ kind: 'semaphore', key: 'pool' }]);
      expect(await c.inspectKeys('rate')).toEqual([{ kind: 'rate', key: 'api', periodMs: 60_000 }]);
      expect(await c.inspectKeys('period')).toEqual([{ kind: 'period', key: 'daily', bucket: '2026-11-30' }]);
      expect(await c.inspectKeys('ordered')).toEqual([{ kind: 'ordered', key: 'feed' }]);
      expect(await c.inspectKeys('ordered', { pattern: 'nothing*' })).toEqual([]);
    });

    it('reports progress while listing', async () => {
      await h.coordinator.lockAcquire({ key: 'p', holder: holder('a'), ttlMs: 5_000 });
      const seen: number[] = [];
      await h.coordinator.inspectKeys('lock', { onProgress: (n) => seen.push(n) });
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.at(-1)).toBeGreaterThanOrEqual(1);
    });

    it('filters the store list by a [from, to) creation time range, with paging', async () => {
      const T = Date.UTC(2026, 5, 1);
      for (let i = 0; i < 6; i++) await h.store.save(record(`e${i}`, T + i * 1_000));
      const ids = async (f: Parameters<Store['list']>[0]) => (await h.store.list(f)).records.map((r) => r.id);
      expect(await ids({ createdFrom: T + 2_000 })).toEqual(['e5', 'e4', 'e3', 'e2']);
      expect(await ids({ createdTo: T + 2_000 })).toEqual(['e1', 'e0']);
      expect(await ids({ createdFrom: T + 1_000, createdTo: T + 4_000, reactor: 'R', status: 'completed' })).toEqual([
        'e3',
        'e2',
        'e1',
      ]);
      const first = await h.store.list({ createdFrom: T + 1_000, createdTo: T + 5_000, limit: 2 });
      expect(first.records.map((r) => r.id)).toEqual(['e4', 'e3']);
      const second = await h.store.list({
        createdFrom: T + 1_000,
        createdTo: T + 5_000,
        limit: 2,
        cursor: first.cursor!,
      });
      expect(second.records.map((r) => r.id)).toEqual(['e2', 'e1']);
      expect(second.cursor).toBeUndefined();
    });

    it('searches by execution id, idempotency key (through the claim) and input text', async () => {
      const keyed = { ...record('k1', 1_000), idempotencyKey: 'order-9', input: { user: 'ada' } };
      await h.store.claimIdempotency('R', 'order-9', 'k1', keyed);
      // No definition is registered: the input is read from the trace's redacted copy (run.started).
      const input = { user: 'Grace Hopper', password: '[redacted]' };
      await h.store.save({
        ...record('k2', 2_000),
        input: { ...input, password: 'hopper-secret' },
        trace: [{ type: 'run.started', executionId: 'k2', rootExecutionId: 'k2', reactor: 'R', at: 2_000, input }],
      });
      expect(await h.store.idempotencyHolder?.('R', 'order-9')).toBe('k1');
      expect(await h.store.idempotencyHolder?.('R', 'other')).toBeUndefined();
      expect(await h.store.idempotencyHolder?.('S', 'order-9')).toBeUndefined();
      const model = createReadModel({ store: h.store, searchWindow: 10 });
      const hits = async (q: string, reactor?: string) =>
        (await model.search({ q, ...(reactor === undefined ? {} : { reactor }) })).items.map((i) => [i.id, i.match]);
      expect(await hits('order-9', 'R')).toEqual([['k1', 'idempotency_key']]);
      expect(await hits('k2')).toEqual([['k2', 'id']]);
      expect(await hits('hopper')).toEqual([['k2', 'input']]);
      expect(await hits('nothing')).toEqual([]);
      expect(await hits('hopper-secret')).toEqual([]);
      await expect(model.search({ q: ' ' })).rejects.toMatchObject({ code: 'query_invalid' });
    });
  });
}
