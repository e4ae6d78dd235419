/**
 * The EventLog contract: one suite every event log must pass (memory, Redis, PostgreSQL). Each
 * test gets a fresh log from the factory; `second()` is another log over the same state through
 * a connection of its own (a second process's view; on memory, the same log).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ListFilterError } from '../../src/errors.js';
import type { EventLog, StoredEvent } from '../../src/ports/event-log.js';

/** A fresh log under test. */
export interface EventLogHarness {
  readonly log: EventLog;
  /** Another log over the same events, on a connection of its own. */
  second(): Promise<EventLog>;
  /** Lets `ms` of the log's clock pass (and a little more on a server). */
  pass(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** How long the logs of the expiry test keep an event, in ms. */
export const SHORT_TTL_MS = 1_000;

/** Newest first: receipt time descending, then id descending (the order of every listing). */
const newestFirst = (a: StoredEvent, b: StoredEvent): number =>
  b.receivedAt - a.receivedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

export function describeEventLogContract(
  name: string,
  make: (options: { readonly ttlMs?: number }) => Promise<EventLogHarness>,
): void {
  describe(`EventLog contract: ${name}`, () => {
    let harness: EventLogHarness;
    let log: EventLog;
    beforeEach(async () => {
      harness = await make({});
      log = harness.log;
    });
    afterEach(async () => harness.close());

    it('accepts an event once: its id, name, payload and times come back, with no effects', async () => {
      const payload = { orderId: 'o-1', amount: 42.5, lines: [], meta: {}, note: 'crème brûlée {x}/"y"', n: null };
      const sent = await log.append({ id: 'e-1', name: 'order.paid', payload, ts: 1_700_000_000_000 });
      expect(sent.status).toBe('accepted');
      expect(sent.event).toMatchObject({ id: 'e-1', name: 'order.paid', payload, ts: 1_700_000_000_000 });
      expect(sent.event.effects).toEqual({ started: [], resumed: [], cancelled: [] });
      expect(Number.isSafeInteger(sent.event.receivedAt)).toBe(true);
      expect(await log.get('e-1')).toEqual(sent.event);
      expect(await log.get('nothing')).toBeUndefined();
    });

    it('an event without ts takes its receipt time', async () => {
      const sent = await log.append({ id: 'e-1', name: 'tick', payload: 1 });
      expect(sent.event.ts).toBe(sent.event.receivedAt);
      expect((await log.get('e-1'))?.ts).toBe(sent.event.receivedAt);
    });

    it('a repeated id is a duplicate: nothing changes, the kept event is answered', async () => {
      const first = await log.append({ id: 'e-1', name: 'order.paid', payload: { amount: 1 } });
      await harness.pass(5);
      const again = await log.append({ id: 'e-1', name: 'order.refunded', payload: { amount: 2 }, ts: 5 });
      expect(again).toEqual({ status: 'duplicate', event: first.event });
      expect(await log.get('e-1')).toEqual(first.event);
      expect((await log.list({ limit: 10 })).events).toEqual([first.event]);
    });

    it('of concurrent appends of one id through two connections, exactly one is accepted', async () => {
      const other = await harness.second();
      const ids = Array.from({ length: 20 }, (_, i) => `race-${i}`);
      const outcomes = await Promise.all(
        ids.flatMap((id) =>
          [log, other, log, other].map((each, n) => each.append({ id, name: 'race', payload: { n } })),
        ),
      );
      for (const id of ids) {
        const mine = outcomes.filter((o) => o.event.id === id);
        expect(
          mine.filter((o) => o.status === 'accepted'),
          id,
        ).toHaveLength(1);
        const kept = mine.find((o) => o.status === 'accepted')!.event;
        for (const o of mine) expect(o.event.payload, id).toEqual(kept.payload);
        expect(await other.get(id)).toEqual(kept);
      }
    });

    it('effects are appended once each, in order, per kind; an unknown event answers false', async () => {
      await log.append({ id: 'e-1', name: 'order.paid', payload: {} });
      expect(await log.addEffect('e-1', 'started', 'x-1')).toBe(true);
      expect(await log.addEffect('e-1', 'started', 'x-2')).toBe(true);
      expect(await log.addEffect('e-1', 'started', 'x-1')).toBe(true);
      expect(await log.addEffect('e-1', 'resumed', 'x-3')).toBe(true);
      expect(await log.addEffect('e-1', 'cancelled', 'x-1')).toBe(true);
      expect(await log.addEffect('nothing', 'started', 'x-1')).toBe(false);
      const kept = await log.get('e-1');
      expect(kept?.effects).toEqual({ started: ['x-1', 'x-2'], resumed: ['x-3'], cancelled: ['x-1'] });
      expect((await log.list({ limit: 5 })).events[0]?.effects).toEqual(kept?.effects);
      // A duplicate answers the kept event with its effects.
      expect((await log.append({ id: 'e-1', name: 'order.paid', payload: {} })).event.effects).toEqual(kept?.effects);
    });

    it('concurrent effects on one event through two connections are all kept', async () => {
      const other = await harness.second();
      await log.append({ id: 'e-1', name: 'fan', payload: {} });
      const ids = Array.from({ length: 30 }, (_, i) => `x-${String(i).padStart(2, '0')}`);
      await Promise.all(ids.map((id, i) => (i % 2 === 0 ? log : other).addEffect('e-1', 'resumed', id)));
      expect([...((await log.get('e-1'))?.effects.resumed ?? [])].sort()).toEqual(ids);
    });

    it('lists newest first, by name and receipt time, in keyset pages that cover each event once', async () => {
      const sent: StoredEvent[] = [];
      for (let i = 0; i < 12; i++) {
        sent.push(
          (await log.append({ id: `e-${String(i).padStart(2, '0')}`, name: i % 3 === 0 ? 'a' : 'b', payload: { i } }))
            .event,
        );
        if (i % 4 === 3) await harness.pass(3);
      }
      const all = [...sent].sort(newestFirst);
      expect((await log.list({ limit: 100 })).events).toEqual(all);
      expect((await log.list({ limit: 100, name: 'a' })).events).toEqual(all.filter((e) => e.name === 'a'));
      expect((await log.list({ limit: 100, name: 'none' })).events).toEqual([]);

      const seen: StoredEvent[] = [];
      let page = await log.list({ limit: 5 });
      seen.push(...page.events);
      // Events received after the first page never shift the listing.
      await log.append({ id: 'late', name: 'b', payload: {} });
      while (page.cursor !== undefined) {
        page = await log.list({ limit: 5, cursor: page.cursor });
        seen.push(...page.events);
      }
      expect(seen).toEqual(all);

      const middle = all[6]!.receivedAt;
      const since = (await log.list({ limit: 100, since: middle })).events.filter((e) => e.id !== 'late');
      expect(since).toEqual(all.filter((e) => e.receivedAt >= middle));
      const until = await log.list({ limit: 100, until: middle });
      expect(until.events).toEqual(all.filter((e) => e.receivedAt < middle));
      const byName: StoredEvent[] = [];
      for (let p = await log.list({ limit: 2, name: 'b', until: middle + 1 }); ;) {
        byName.push(...p.events);
        if (p.cursor === undefined) break;
        p = await log.list({ limit: 2, name: 'b', until: middle + 1, cursor: p.cursor });
      }
      expect(byName).toEqual(all.filter((e) => e.name === 'b' && e.receivedAt <= middle));
    });

    it('a cursor no listing handed out is a ListFilterError', async () => {
      await expect(log.list({ limit: 5, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(ListFilterError);
    });
  });

  describe(`EventLog contract: ${name}, retention`, () => {
    let harness: EventLogHarness;
    beforeEach(async () => {
      harness = await make({ ttlMs: SHORT_TTL_MS });
    });
    afterEach(async () => harness.close());

    it('an event expires after the retention: gone from reads, its id accepted again', async () => {
      const first = await harness.log.append({ id: 'e-1', name: 'old', payload: { v: 1 } });
      expect(first.status).toBe('accepted');
      await harness.pass(SHORT_TTL_MS + 50);
      expect(await harness.log.get('e-1')).toBeUndefined();
      expect((await harness.log.list({ limit: 10 })).events).toEqual([]);
      expect(await harness.log.addEffect('e-1', 'started', 'x-1')).toBe(false);
      const again = await harness.log.append({ id: 'e-1', name: 'new', payload: { v: 2 } });
      expect(again.status).toBe('accepted');
      expect(again.event).toMatchObject({ name: 'new', payload: { v: 2 }, effects: { started: [] } });
      expect((await harness.log.list({ limit: 10 })).events).toEqual([again.event]);
    });
  });
}
