/**
 * The EventWaits contract: one suite every event-wait index must pass (memory, Redis,
 * PostgreSQL). Each test gets a fresh index from the factory; `second()` is another index over
 * the same state through a connection of its own (a second process's view; on memory, the same
 * index).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ListFilterError } from '../../src/errors.js';
import type { EventWait, EventWaitEntry, EventWaits } from '../../src/ports/event-waits.js';

/** A fresh index under test. */
export interface EventWaitsHarness {
  readonly waits: EventWaits;
  /** Another index over the same registrations, on a connection of its own. */
  second(): Promise<EventWaits>;
  /** Lets `ms` of the index's clock pass (and a little more on a server). */
  pass(ms: number): Promise<void>;
  close(): Promise<void>;
}

const entry = (over: Partial<EventWaitEntry> = {}): EventWaitEntry => ({
  event: 'payment.settled',
  matchKey: '["o-1"]',
  kind: 'resume',
  executionId: 'ex-1',
  ref: 'payment',
  ...over,
});

/** Every registration of a key and kind, page by page. */
async function all(
  index: EventWaits,
  key: { event: string; matchKey: string },
  kind: 'resume' | 'cancel',
  limit = 100,
): Promise<EventWait[]> {
  const found: EventWait[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await index.lookup(key, kind, { limit, ...(after === undefined ? {} : { after }) });
    found.push(...page.waits);
    if (page.cursor === undefined) return found;
    after = page.cursor;
  }
}

export function describeEventWaitsContract(name: string, make: () => Promise<EventWaitsHarness>): void {
  describe(`EventWaits contract: ${name}`, () => {
    let harness: EventWaitsHarness;
    let waits: EventWaits;
    beforeEach(async () => {
      harness = await make();
      waits = harness.waits;
    });
    afterEach(async () => harness.close());

    it('an added registration is found under its key and kind, with its time', async () => {
      const added = await waits.add(entry());
      expect(added).toMatchObject(entry());
      expect(Number.isSafeInteger(added.since)).toBe(true);
      expect(await all(waits, { event: 'payment.settled', matchKey: '["o-1"]' }, 'resume')).toEqual([added]);
    });

    it('adding again is idempotent: one registration, its first time kept', async () => {
      const first = await waits.add(entry());
      await harness.pass(5);
      const again = await waits.add(entry());
      expect(again).toEqual(first);
      expect(await all(waits, entry(), 'resume')).toEqual([first]);
    });

    it('removing is idempotent and answers whether it was filed', async () => {
      await waits.add(entry());
      expect(await waits.remove(entry())).toBe(true);
      expect(await waits.remove(entry())).toBe(false);
      expect(await waits.remove(entry({ executionId: 'never' }))).toBe(false);
      expect(await all(waits, entry(), 'resume')).toEqual([]);
      // Re-added after a remove: a new registration.
      await waits.add(entry());
      expect(await all(waits, entry(), 'resume')).toHaveLength(1);
    });

    it('a lookup sees only its own name, key and kind', async () => {
      await waits.add(entry());
      await waits.add(entry({ matchKey: '["o-2"]', executionId: 'ex-2' }));
      await waits.add(entry({ matchKey: '', executionId: 'ex-3' }));
      await waits.add(entry({ event: 'payment.failed', executionId: 'ex-4' }));
      await waits.add(entry({ kind: 'cancel', executionId: 'ex-5', ref: '' }));
      expect((await all(waits, entry(), 'resume')).map((w) => w.executionId)).toEqual(['ex-1']);
      expect(
        (await all(waits, { event: 'payment.settled', matchKey: '' }, 'resume')).map((w) => w.executionId),
      ).toEqual(['ex-3']);
      expect((await all(waits, entry(), 'cancel')).map((w) => w.executionId)).toEqual(['ex-5']);
      expect(await all(waits, { event: 'payment.failed', matchKey: '["o-2"]' }, 'resume')).toEqual([]);
      expect(await all(waits, { event: 'nothing', matchKey: '' }, 'cancel')).toEqual([]);
    });

    it('two waits of one execution under one key are two registrations, removed apart', async () => {
      await waits.add(entry({ ref: 'first' }));
      await waits.add(entry({ ref: 'second' }));
      expect((await all(waits, entry(), 'resume')).map((w) => w.ref)).toEqual(['first', 'second']);
      await waits.remove(entry({ ref: 'first' }));
      expect((await all(waits, entry(), 'resume')).map((w) => w.ref)).toEqual(['second']);
    });

    it('pages cover every registration once, in member order, whatever the page size', async () => {
      const ids = Array.from({ length: 23 }, (_, i) => `ex-${String(i).padStart(2, '0')}`);
      for (const id of [...ids].reverse()) await waits.add(entry({ executionId: id }));
      for (const limit of [1, 5, 23, 50]) {
        expect(
          (await all(waits, entry(), 'resume', limit)).map((w) => w.executionId),
          String(limit),
        ).toEqual(ids);
      }
      const first = await waits.lookup(entry(), 'resume', { limit: 5 });
      expect(first.waits).toHaveLength(5);
      expect(first.cursor).toBeDefined();
    });

    it('registrations removed or added between pages never make one filed throughout repeat or go missing', async () => {
      const ids = Array.from({ length: 10 }, (_, i) => `ex-${i}`);
      for (const id of ids) await waits.add(entry({ executionId: id }));
      const first = await waits.lookup(entry(), 'resume', { limit: 4 });
      await waits.remove(entry({ executionId: 'ex-1' }));
      await waits.remove(entry({ executionId: 'ex-8' }));
      await waits.add(entry({ executionId: 'ex-55' }));
      const seen = first.waits.map((w) => w.executionId);
      let after = first.cursor;
      while (after !== undefined) {
        const page = await waits.lookup(entry(), 'resume', { limit: 4, after });
        seen.push(...page.waits.map((w) => w.executionId));
        after = page.cursor;
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of ids.filter((id) => id !== 'ex-8')) expect(seen).toContain(id);
      expect(seen).not.toContain('ex-8');
    });

    it('a cursor of another kind, or none at all, is refused', async () => {
      await waits.add(entry());
      await waits.add(entry({ executionId: 'ex-2' }));
      const page = await waits.lookup(entry(), 'resume', { limit: 1 });
      await expect(waits.lookup(entry(), 'cancel', { limit: 1, after: page.cursor! })).rejects.toBeInstanceOf(
        ListFilterError,
      );
      await expect(waits.lookup(entry(), 'resume', { limit: 1, after: 'garbage' })).rejects.toBeInstanceOf(
        ListFilterError,
      );
      await expect(waits.lookup(entry(), 'resume', { limit: 0 })).rejects.toBeInstanceOf(RangeError);
    });

    it('names, keys and refs with quotes, unicode and separators-like characters round-trip', async () => {
      const odd = entry({
        event: 'order.päid {x}',
        matchKey: '["o:1","{tag}",null,"\\"q\\""]',
        executionId: 'ex/ü:1',
        ref: 'step "a"',
      });
      const added = await waits.add(odd);
      expect(await all(waits, odd, 'resume')).toEqual([added]);
      expect(await waits.remove(odd)).toBe(true);
    });

    it('another connection sees the same registrations; concurrent adds of one entry keep one', async () => {
      const other = await harness.second();
      const added = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? waits : other).add(entry())));
      for (const each of added) expect(each).toEqual(added[0]);
      expect(await all(other, entry(), 'resume')).toEqual([added[0]]);
      expect(await other.remove(entry())).toBe(true);
      expect(await all(waits, entry(), 'resume')).toEqual([]);
    });

    it('since is on the backend clock and grows', async () => {
      const first = await waits.add(entry());
      await harness.pass(10);
      const later = await waits.add(entry({ executionId: 'ex-2' }));
      expect(later.since).toBeGreaterThan(first.since);
    });
  });
}
