/**
 * `engine.list` and execution tags on the embedded engine (memory store, manual clock: nothing
 * sleeps). Paging by tag through 10,000 retained executions yields each exactly once while new
 * ones are started between pages; the filters (reactor, status as it changes, time range, tags),
 * cursor stability, limit bounds, and bad input refused with typed errors before anything is
 * written (docs/decisions/103).
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEmbeddedEngine,
  errorFromJSON,
  ListFilterError,
  reactor,
  TagsInvalidError,
  type EmbeddedEngine,
  type ListedExecution,
  type ListQuery,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/clock.js';
import { gate } from '../background/helpers.js';
import { pageThroughWhileAdding } from './scenario.js';

const T0 = Date.UTC(2026, 0, 1);

const order = reactor('history-order')
  .input({ n: z.number() })
  .step('note', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => n })
  .returns('note');

function engineAt(): { engine: EmbeddedEngine; clock: ManualClock } {
  const clock = new ManualClock({ start: T0, autoAdvance: false });
  const engine = createEmbeddedEngine({ clock, reactors: [order] });
  return { engine, clock };
}

/** Every execution a query lists, page by page. */
async function all(engine: EmbeddedEngine, query: ListQuery): Promise<ListedExecution[]> {
  const found: ListedExecution[] = [];
  let cursor: string | undefined;
  do {
    const page = await engine.list({ ...query, ...(cursor === undefined ? {} : { cursor }) });
    found.push(...page.executions);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return found;
}

describe('engine.list on the memory store', () => {
  test('pages by tag through 10,000 retained executions exactly once while executions are added', async () => {
    const { engine, clock } = engineAt();
    const report = await pageThroughWhileAdding({
      engine,
      reactor: order,
      total: 10_000,
      pageSize: 250,
      // Every one of the 10,000 has the same creation time here: the pages are cut between ties by id.
      afterCreate: () => clock.advance(1),
    });
    expect(report.listed).toHaveLength(10_000);
    expect(new Set(report.listed).size).toBe(10_000);
    expect(new Set(report.listed)).toEqual(new Set(report.created));
    expect(report.added).toBeGreaterThan(0);
    await engine.drain();
    await engine.close();
  }, 120_000);

  test('tags are stored on the record, returned by result, kept across the run, copied by a retry', async () => {
    const { engine } = engineAt();
    const failing = reactor('history-fails')
      .step('boom', {
        run: () => {
          throw new Error('no');
        },
      })
      .build();
    const ran = await engine.run(order, { n: 1 }, { tags: { orderId: '42', region: 'eu' } });
    expect(ran.status).toBe('completed');
    expect((await engine.result(ran.executionId))?.tags).toEqual({ orderId: '42', region: 'eu' });
    const queued = await engine.start(order, { n: 2 }, { tags: { orderId: '43' } });
    expect(queued).toMatchObject({ status: 'queued', tags: { orderId: '43' } });
    await engine.drain();
    expect(await engine.result(queued.executionId)).toMatchObject({ status: 'completed', tags: { orderId: '43' } });
    const failed = await engine.run(failing, {}, { tags: { orderId: '44' } });
    const retried = await engine.retry(failed.executionId);
    await engine.drain();
    expect((await engine.result(retried.executionId))?.tags).toEqual({ orderId: '44' });
    expect((await engine.list({ tags: { orderId: '44' } })).executions.map((e) => e.executionId).sort()).toEqual(
      [failed.executionId, retried.executionId].sort(),
    );
    await engine.close();
  });

  test('filters by reactor, by status as it changes, by every given tag', async () => {
    const { engine } = engineAt();
    const held = gate();
    const waits = reactor('history-waits')
      .step('hold', { run: () => held.promise.then(() => 'done') })
      .returns('hold');
    const a = await engine.start(waits, {}, { tags: { orderId: '1', kind: 'a' } });
    const b = await engine.start(order, { n: 1 }, { tags: { orderId: '1', kind: 'b' } });
    await engine.start(order, { n: 2 }, { tags: { orderId: '2', kind: 'b' } });
    const ids = async (query: ListQuery) => (await engine.list(query)).executions.map((e) => e.executionId);
    await expect.poll(() => ids({ reactor: 'history-order', status: 'completed' })).toHaveLength(2);
    // The held one is live (queued or running, as far as its record says): listed under that status only.
    const live = (await engine.list({ reactor: 'history-waits' })).executions[0]!.status;
    expect(['queued', 'running']).toContain(live);
    expect(await ids({ status: live })).toEqual([a.executionId]);
    expect(await ids({ status: 'completed', reactor: 'history-waits' })).toEqual([]);
    expect(await ids({ reactor: 'history-waits' })).toEqual([a.executionId]);
    expect(await ids({ tags: { orderId: '1' } })).toEqual(expect.arrayContaining([a.executionId, b.executionId]));
    expect(await ids({ tags: { orderId: '1', kind: 'b' } })).toEqual([b.executionId]);
    expect(await ids({ tags: { orderId: '1' }, reactor: 'history-waits' })).toEqual([a.executionId]);
    expect(await ids({ tags: { orderId: '3' } })).toEqual([]);
    held.open();
    // The status change moves the execution from the running listing to the completed one.
    await expect.poll(() => ids({ status: live })).toEqual([]);
    await expect.poll(() => ids({ status: 'completed', reactor: 'history-waits' })).toEqual([a.executionId]);
    const [summary] = (await engine.list({ tags: { kind: 'a' } })).executions;
    expect(summary).toEqual({
      executionId: a.executionId,
      reactor: 'history-waits',
      status: 'completed',
      tags: { kind: 'a', orderId: '1' },
      createdAt: T0,
      updatedAt: T0,
    });
    await engine.close();
  });

  test('a time range: from inclusive, to exclusive, Dates or epoch ms', async () => {
    const { engine, clock } = engineAt();
    const at: Record<number, string> = {};
    for (const t of [0, 10, 20, 30]) {
      clock.set(T0 + t);
      at[t] = (await engine.run(order, { n: t })).executionId;
    }
    const ids = async (query: ListQuery) => (await all(engine, query)).map((e) => e.executionId);
    expect(await ids({ from: T0 + 10, to: T0 + 30 })).toEqual([at[20], at[10]]);
    expect(await ids({ from: new Date(T0 + 20) })).toEqual([at[30], at[20]]);
    expect(await ids({ to: new Date(T0 + 10) })).toEqual([at[0]]);
    expect(await ids({ from: T0 + 31 })).toEqual([]);
    await engine.close();
  });

  test('a cursor stays valid: newer executions never enter later pages, and a page is never repeated', async () => {
    const { engine, clock } = engineAt();
    for (let n = 0; n < 5; n++) {
      clock.set(T0 + n);
      await engine.run(order, { n });
    }
    const first = await engine.list({ limit: 2 });
    expect(first.executions.map((e) => e.createdAt)).toEqual([T0 + 4, T0 + 3]);
    clock.set(T0 + 100);
    await engine.run(order, { n: 100 });
    const second = await engine.list({ limit: 2, cursor: first.cursor! });
    expect(second.executions.map((e) => e.createdAt)).toEqual([T0 + 2, T0 + 1]);
    const third = await engine.list({ limit: 2, cursor: second.cursor! });
    expect(third.executions.map((e) => e.createdAt)).toEqual([T0]);
    expect(third.cursor).toBeUndefined();
    // The same cursor again gives the same page.
    expect((await engine.list({ limit: 2, cursor: first.cursor! })).executions).toEqual(second.executions);
    await engine.close();
  });

  test('limit bounds: 1 to 1,000, default 50', async () => {
    const { engine } = engineAt();
    await engine.startMany(Array.from({ length: 60 }, (_, n) => ({ reactor: order, input: { n } })));
    expect((await engine.list()).executions).toHaveLength(50);
    expect((await engine.list({ limit: 1 })).executions).toHaveLength(1);
    expect((await engine.list({ limit: 1_000 })).executions).toHaveLength(60);
    for (const limit of [0, -1, 1_001, 1.5, Number.NaN])
      await expect(engine.list({ limit })).rejects.toMatchObject({
        code: 'list_filter_invalid',
        details: { field: 'limit' },
      });
    await engine.drain();
    await engine.close();
  });

  test('bad filters throw ListFilterError, with a stable code and a JSON round trip', async () => {
    const { engine } = engineAt();
    const bad: [ListQuery, string][] = [
      [{ cursor: 'not-a-cursor' }, 'cursor'],
      [{ cursor: '' }, 'cursor'],
      [{ status: 'done' as never }, 'status'],
      [{ from: -1 }, 'from'],
      [{ to: new Date(Number.NaN) }, 'to'],
      [{ from: T0 + 10, to: T0 }, 'to'],
      [{ reactor: '' }, 'reactor'],
      [{ tags: { 'order id': '1' } }, 'tags.order id'],
      [{ tags: { orderId: 42 as never } }, 'tags.orderId'],
      [{ tags: [] as never }, 'tags'],
    ];
    for (const [query, field] of bad) {
      const error = await engine.list(query).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, JSON.stringify(query)).toBeInstanceOf(ListFilterError);
      expect(error).toMatchObject({ code: 'list_filter_invalid', details: { field } });
      const revived = errorFromJSON(JSON.parse(JSON.stringify(error)));
      expect(revived).toBeInstanceOf(ListFilterError);
      expect(revived).toMatchObject({ code: 'list_filter_invalid', details: { field } });
    }
    await engine.close();
  });

  test('bad tags throw TagsInvalidError before anything is written: run, start, a startMany entry', async () => {
    const { engine } = engineAt();
    const cases: [unknown, string][] = [
      [{ '': 'x' }, ''],
      [{ 'a=b': 'x' }, 'a=b'],
      [{ ['k'.repeat(65)]: 'x' }, 'k'.repeat(65)],
      [{ orderId: '' }, 'orderId'],
      [{ orderId: 'v'.repeat(257) }, 'orderId'],
      [{ orderId: 'line\nbreak' }, 'orderId'],
      [{ orderId: 42 }, 'orderId'],
      [Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`t${i}`, 'x'])), 'tags'],
      ['orderId=42', 'tags'],
      [new Map([['orderId', '42']]), 'tags'],
    ];
    for (const [tags, tag] of cases) {
      const options = { tags: tags as Record<string, string> };
      await expect(engine.run(order, { n: 1 }, options)).rejects.toMatchObject({
        code: 'tags_invalid',
        details: { tag },
      });
      await expect(engine.start(order, { n: 1 }, options)).rejects.toBeInstanceOf(TagsInvalidError);
      await expect(
        engine.startMany([
          { reactor: order, input: { n: 1 } },
          { reactor: order, input: { n: 2 }, options },
        ]),
      ).rejects.toMatchObject({ code: 'tags_invalid', details: { tag, entry: 1 } });
    }
    expect((await engine.list()).executions).toEqual([]);
    const error = await engine.run(order, { n: 1 }, { tags: { orderId: '' } }).catch((e: unknown) => e);
    expect(errorFromJSON(JSON.parse(JSON.stringify(error)))).toBeInstanceOf(TagsInvalidError);
    // The limits themselves are accepted.
    const edge = {
      ...Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`t${i}`, 'x'])),
      ['k'.repeat(64)]: 'é'.repeat(256),
    };
    expect((await engine.run(order, { n: 1 }, { tags: edge })).status).toBe('completed');
    await engine.close();
  });
});
