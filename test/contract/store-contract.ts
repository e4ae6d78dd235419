/**
 * The Store contract: one suite of scenarios every execution-record store must pass (memory and
 * Redis). Each test gets a fresh, empty store from the factory.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RecordTooLargeError, RecordVersionError } from '../../src/errors.js';
import { hasInterruptClaims, type InterruptClaims } from '../../src/ports/interrupt-claims.js';
import { RECORD_VERSION, type ExecutionRecord, type ExecutionStatus, type Store } from '../../src/ports/store.js';

/** A fresh, empty store under test and its record size limit. */
export interface StoreHarness {
  readonly store: Store;
  /** The largest serialized record the store accepts, in bytes. */
  readonly maxRecordBytes: number;
  /** Lets `ms` pass for the store's expiry: a manual clock's advance, or a real wait on a real server. */
  readonly pass: (ms: number) => Promise<void>;
  close(): Promise<void>;
}

const T0 = Date.UTC(2026, 0, 1);

function record(id: string, overrides: Partial<ExecutionRecord> = {}): ExecutionRecord {
  return {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor: 'Checkout',
    status: 'running',
    input: { orderId: 7 },
    steps: {},
    rollbackFailures: [],
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

export function describeStoreContract(name: string, makeStore: () => Promise<StoreHarness>): void {
  describe(`Store contract: ${name}`, () => {
    let harness: StoreHarness;
    let store: Store;

    beforeEach(async () => {
      harness = await makeStore();
      store = harness.store;
    });
    afterEach(async () => {
      await harness.close();
    });

    describe('save and get', () => {
      it('round-trips a full record', async () => {
        const full = record('e1', {
          parentId: 'p1',
          rootId: 'r1',
          status: 'failed',
          input: { orderId: 7, items: [{ sku: 'a', qty: 2 }], note: 'ünïcødé ✓', nothing: null },
          steps: {
            reserve: { status: 'completed', attempts: 1, result: { id: 'res-1' }, completedSeq: 1 },
            charge: {
              status: 'failed',
              attempts: 3,
              error: { name: 'Error', message: 'card declined', code: 'step_failed', details: { retryable: false } },
            },
          },
          error: { name: 'Error', message: 'card declined' },
          failedStep: 'charge',
          rollbackFailures: [
            { step: 'reserve', kind: 'undo', reason: 'coordination_unavailable', message: 'lock busy', key: 'acct:1' },
          ],
          idempotencyKey: 'order-7',
          updatedAt: T0 + 5,
        });
        await store.save(full);
        expect(await store.get('e1')).toEqual(full);
      });

      it('replaces a record saved again under the same id', async () => {
        await store.save(record('e1'));
        const done = record('e1', { status: 'completed', value: { ok: true }, updatedAt: T0 + 10 });
        await store.save(done);
        expect(await store.get('e1')).toEqual(done);
        expect((await store.list()).records).toHaveLength(1);
      });

      it('returns undefined for an id never saved', async () => {
        await store.save(record('e1'));
        expect(await store.get('missing')).toBeUndefined();
      });

      it('refuses to read a record of another schema version', async () => {
        const foreign = { ...record('e1'), v: RECORD_VERSION + 1 } as unknown as ExecutionRecord;
        await store.save(foreign);
        const error: unknown = await store.get('e1').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RecordVersionError);
        expect((error as RecordVersionError).details).toMatchObject({
          found: RECORD_VERSION + 1,
          expected: RECORD_VERSION,
        });
      });

      it('refuses a record over the size limit and writes nothing', async () => {
        const big = record('big', { input: { blob: 'x'.repeat(harness.maxRecordBytes) } });
        const error: unknown = await store.save(big).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(RecordTooLargeError);
        expect((error as RecordTooLargeError).details).toMatchObject({
          executionId: 'big',
          limit: harness.maxRecordBytes,
        });
        expect(await store.get('big')).toBeUndefined();
        expect((await store.list()).records).toEqual([]);
      });

      it('keeps the previous version when an oversized replacement is refused', async () => {
        const small = record('e1');
        await store.save(small);
        await expect(store.save(record('e1', { value: 'x'.repeat(harness.maxRecordBytes) }))).rejects.toBeInstanceOf(
          RecordTooLargeError,
        );
        expect(await store.get('e1')).toEqual(small);
      });

      it('accepts a record of exactly the size limit', async () => {
        const base = JSON.stringify(record('edge', { input: { blob: '' } }));
        const fits = record('edge', { input: { blob: 'y'.repeat(harness.maxRecordBytes - Buffer.byteLength(base)) } });
        expect(Buffer.byteLength(JSON.stringify(fits))).toBe(harness.maxRecordBytes);
        await store.save(fits);
        expect((await store.get('edge'))?.input).toEqual(fits.input);
      });
    });

    describe('list', () => {
      const seed = async (): Promise<void> => {
        const rows: [string, string, ExecutionStatus, number][] = [
          ['c1', 'Checkout', 'completed', 1],
          ['c2', 'Checkout', 'failed', 2],
          ['r1', 'Refund', 'completed', 3],
          ['c3', 'Checkout', 'completed', 4],
          ['r2', 'Refund', 'running', 5],
          ['c4', 'Checkout', 'completed', 6],
        ];
        // Saved out of creation order: the order of saves must not matter.
        for (const index of [3, 0, 5, 1, 4, 2]) {
          const [id, reactor, status, at] = rows[index]!;
          await store.save(record(id, { reactor, status, createdAt: T0 + at * 1000, updatedAt: T0 + at * 1000 }));
        }
      };
      const ids = (records: readonly ExecutionRecord[]): string[] => records.map((r) => r.id);

      it('is empty on an empty store', async () => {
        const page = await store.list();
        expect(page.records).toEqual([]);
        expect(page.cursor).toBeUndefined();
      });

      it('lists every record newest first', async () => {
        await seed();
        const page = await store.list();
        expect(ids(page.records)).toEqual(['c4', 'r2', 'c3', 'r1', 'c2', 'c1']);
        expect(page.cursor).toBeUndefined();
        expect(page.records[0]).toEqual(await store.get('c4'));
      });

      it('filters by reactor, by status, and by both', async () => {
        await seed();
        expect(ids((await store.list({ reactor: 'Refund' })).records)).toEqual(['r2', 'r1']);
        expect(ids((await store.list({ status: 'completed' })).records)).toEqual(['c4', 'c3', 'r1', 'c1']);
        expect(ids((await store.list({ reactor: 'Checkout', status: 'completed' })).records)).toEqual([
          'c4',
          'c3',
          'c1',
        ]);
        expect((await store.list({ reactor: 'Nobody' })).records).toEqual([]);
      });

      it('reflects a status change in the status filter', async () => {
        await seed();
        await store.save(
          record('r2', { reactor: 'Refund', status: 'completed', createdAt: T0 + 5000, updatedAt: T0 + 9000 }),
        );
        expect(ids((await store.list({ status: 'running' })).records)).toEqual([]);
        expect(ids((await store.list({ reactor: 'Refund', status: 'completed' })).records)).toEqual(['r2', 'r1']);
      });

      it('pages with a cursor, each record once, newest first', async () => {
        await seed();
        const first = await store.list({ limit: 4 });
        expect(ids(first.records)).toEqual(['c4', 'r2', 'c3', 'r1']);
        expect(first.cursor).toBeDefined();
        const second = await store.list({ limit: 4, cursor: first.cursor! });
        expect(ids(second.records)).toEqual(['c2', 'c1']);
        expect(second.cursor).toBeUndefined();
      });

      it('pages through a filtered list', async () => {
        await seed();
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.list({ reactor: 'Checkout', limit: 1, ...(cursor === undefined ? {} : { cursor }) });
          seen.push(...ids(page.records));
          cursor = page.cursor;
          pages += 1;
        } while (cursor !== undefined && pages < 10);
        expect(seen).toEqual(['c4', 'c3', 'c2', 'c1']);
      });

      it('filters by tags (every one given must match), with reactor, status and time range', async () => {
        const tagged = (id: string, at: number, tags: Record<string, string>, status: ExecutionStatus = 'completed') =>
          store.save(record(id, { status, tags, createdAt: T0 + at, updatedAt: T0 + at }));
        await tagged('t1', 1, { orderId: '42', region: 'eu' });
        await tagged('t2', 2, { orderId: '42', region: 'us' }, 'running');
        await tagged('t3', 3, { orderId: '43', region: 'eu' });
        await tagged('t4', 4, { orderId: 'a{b}%c', region: 'eu' });
        expect(ids((await store.list({ tags: { orderId: '42' } })).records)).toEqual(['t2', 't1']);
        expect(ids((await store.list({ tags: { orderId: '42', region: 'eu' } })).records)).toEqual(['t1']);
        expect(ids((await store.list({ tags: { region: 'eu' }, status: 'completed' })).records)).toEqual([
          't4',
          't3',
          't1',
        ]);
        expect(
          ids((await store.list({ tags: { region: 'eu' }, createdFrom: T0 + 2, createdTo: T0 + 4 })).records),
        ).toEqual(['t3']);
        expect(ids((await store.list({ tags: { orderId: 'a{b}%c' } })).records)).toEqual(['t4']);
        expect((await store.list({ tags: { orderId: '44' } })).records).toEqual([]);
        // A status change leaves the tag filter as it was and moves the record between statuses.
        await tagged('t2', 2, { orderId: '42', region: 'us' }, 'completed');
        expect(ids((await store.list({ tags: { orderId: '42' }, status: 'completed' })).records)).toEqual(['t2', 't1']);
        expect((await store.list({ status: 'running' })).records).toEqual([]);
      });

      it('pages by keyset: records created while paging (newer) never enter a later page; ties split by id', async () => {
        for (const id of ['k1', 'k2', 'k3', 'k4', 'k5']) await store.save(record(id, { createdAt: T0, updatedAt: T0 }));
        const first = await store.list({ limit: 2 });
        expect(ids(first.records)).toEqual(['k5', 'k4']);
        await store.save(record('k9', { createdAt: T0 + 1, updatedAt: T0 + 1 }));
        await store.save(record('k0', { createdAt: T0 + 1, updatedAt: T0 + 1 }));
        const second = await store.list({ limit: 2, cursor: first.cursor! });
        expect(ids(second.records)).toEqual(['k3', 'k2']);
        const third = await store.list({ limit: 2, cursor: second.cursor! });
        expect(ids(third.records)).toEqual(['k1']);
        expect(third.cursor).toBeUndefined();
      });

      it('refuses a cursor it did not hand out with ListFilterError', async () => {
        await expect(store.list({ cursor: 'nonsense' })).rejects.toMatchObject({ code: 'list_filter_invalid' });
      });
    });

    describe('idempotency claims', () => {
      it('lets the first claim win and tells a later one the winner', async () => {
        expect(await store.claimIdempotency('Checkout', 'order-7', 'e1')).toEqual({ claimed: true });
        expect(await store.claimIdempotency('Checkout', 'order-7', 'e2')).toEqual({
          claimed: false,
          executionId: 'e1',
        });
        // A repeated claim by the winner itself: the port leaves open whether it answers `claimed`
        // (retry-safe) or names itself as the first; it must never name another execution.
        const again = await store.claimIdempotency('Checkout', 'order-7', 'e1');
        expect(again.claimed ? 'e1' : again.executionId).toBe('e1');
        expect(await store.claimIdempotency('Checkout', 'order-7', 'e3')).toEqual({
          claimed: false,
          executionId: 'e1',
        });
      });

      it('scopes a key to its reactor', async () => {
        expect(await store.claimIdempotency('Checkout', 'k', 'e1')).toEqual({ claimed: true });
        expect(await store.claimIdempotency('Refund', 'k', 'e2')).toEqual({ claimed: true });
        expect(await store.claimIdempotency('Checkout', 'k2', 'e3')).toEqual({ claimed: true });
        expect(await store.claimIdempotency('Refund', 'k', 'e4')).toEqual({ claimed: false, executionId: 'e2' });
      });

      it('writes the first record with a won claim, atomically; a lost claim writes nothing (decision 056)', async () => {
        const first = record('e1', { status: 'pending', idempotencyKey: 'order-7' });
        expect(await store.claimIdempotency('Checkout', 'order-7', 'e1', first)).toEqual({ claimed: true });
        expect(await store.get('e1')).toEqual(first);
        expect(await store.claimIdempotency('Checkout', 'order-7', 'e2', record('e2'))).toEqual({
          claimed: false,
          executionId: 'e1',
        });
        expect(await store.get('e2')).toBeUndefined();
        expect((await store.list({ status: 'pending' })).records.map((r) => r.id)).toEqual(['e1']); // listed like a saved record
        expect((await store.list()).records.map((r) => r.id)).toEqual(['e1']);
      });

      it('never overwrites a saved record with a repeated claim', async () => {
        expect(await store.claimIdempotency('Checkout', 'k', 'e1', record('e1', { status: 'running' }))).toEqual({
          claimed: true,
        });
        const saved = record('e1', { status: 'completed', value: 42, updatedAt: T0 + 9 });
        await store.save(saved);
        const again = await store.claimIdempotency('Checkout', 'k', 'e1', record('e1', { status: 'running' }));
        expect(again.claimed ? 'e1' : again.executionId).toBe('e1');
        expect(await store.get('e1')).toEqual(saved);
      });

      it('refuses a first record over the size limit before claiming', async () => {
        const big = record('big', { input: { blob: 'x'.repeat(harness.maxRecordBytes) } });
        await expect(store.claimIdempotency('Checkout', 'big', 'big', big)).rejects.toBeInstanceOf(RecordTooLargeError);
        expect(await store.get('big')).toBeUndefined();
        expect(await store.claimIdempotency('Checkout', 'big', 'other')).toEqual({ claimed: true });
      });

      it('has exactly one winner among 50 concurrent claims', async () => {
        const claims = await Promise.all(
          Array.from({ length: 50 }, (_, i) => store.claimIdempotency('Checkout', 'race', `e${i}`, record(`e${i}`))),
        );
        const winners = claims.flatMap((claim, i) => (claim.claimed ? [`e${i}`] : []));
        expect(winners).toHaveLength(1);
        for (const claim of claims) if (!claim.claimed) expect(claim.executionId).toBe(winners[0]);
        const written = await Promise.all(claims.map((_, i) => store.get(`e${i}`)));
        expect(written.flatMap((r) => (r === undefined ? [] : [r.id]))).toEqual(winners);
      });
    });

    describe('interrupt claims', () => {
      const claims = (): InterruptClaims => {
        if (!hasInterruptClaims(store)) throw new Error('this store does not implement InterruptClaims');
        return store;
      };

      it('a correlation id is held by one execution: the holder claims again, another is refused with the holder, replace takes a stale one over', async () => {
        expect(await claims().claimCorrelation('order:1', 'e1')).toEqual({ claimed: true });
        expect(await claims().claimCorrelation('order:1', 'e1')).toEqual({ claimed: true });
        expect(await claims().claimCorrelation('order:1', 'e2')).toEqual({ claimed: false, holder: 'e1' });
        expect(await claims().claimCorrelation('order:1', 'e3', { replace: 'e2' })).toEqual({
          claimed: false,
          holder: 'e1',
        });
        expect(await claims().correlation('order:1')).toBe('e1');
        expect(await claims().claimCorrelation('order:1', 'e2', { replace: 'e1' })).toEqual({ claimed: true });
        expect(await claims().correlation('order:1')).toBe('e2');
        expect(await claims().correlation('order:none')).toBeUndefined();
      });

      it('a resume claim is won exactly once, also by concurrent claimants', async () => {
        const outcomes = await Promise.all(
          ['a', 'b', 'c', 'd'].map((who) => claims().claimResume('e1', 'review.approve', who, 60_000)),
        );
        expect(outcomes.filter((o) => o.claimed)).toHaveLength(1);
        const winner = ['a', 'b', 'c', 'd'][outcomes.findIndex((o) => o.claimed)];
        expect(outcomes.filter((o) => !o.claimed)).toEqual([
          { claimed: false, holder: winner },
          { claimed: false, holder: winner },
          { claimed: false, holder: winner },
        ]);
        expect(await claims().claimResume('e1', 'review.approve', winner!, 60_000)).toEqual({
          claimed: false,
          holder: winner,
        });
        expect(await claims().claimResume('e1', 'other', 'a', 60_000)).toEqual({ claimed: true });
      });

      it('a resume claim is given back by its claimant only, and can then be won by another', async () => {
        expect(await claims().claimResume('e1', 'approve', 'a', 60_000)).toEqual({ claimed: true });
        await claims().releaseResume('e1', 'approve', 'b'); // not b's: nothing happens
        expect(await claims().claimResume('e1', 'approve', 'c', 60_000)).toEqual({ claimed: false, holder: 'a' });
        await claims().releaseResume('e1', 'approve', 'a');
        await claims().releaseResume('e1', 'approve', 'a'); // twice is harmless
        expect(await claims().claimResume('e1', 'approve', 'c', 60_000)).toEqual({ claimed: true });
      });

      it('a resume claim is a lease: once it lapses (its winner died) another claimant wins', async () => {
        expect(await claims().claimResume('e1', 'approve', 'a', 150)).toEqual({ claimed: true });
        expect(await claims().claimResume('e1', 'approve', 'b', 150)).toEqual({ claimed: false, holder: 'a' });
        await harness.pass(250);
        expect(await claims().claimResume('e1', 'approve', 'b', 150)).toEqual({ claimed: true });
        await expect(claims().claimResume('e1', 'approve', 'c', 0)).rejects.toThrow(RangeError);
      });
    });
  });
}
