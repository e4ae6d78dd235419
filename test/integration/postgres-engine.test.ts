/**
 * An engine over the PostgreSQL store: a run's record is written and read back through the
 * database, an idempotent repeat replays the first run, and `engine.list` finds it by tag; an
 * execution that finished a month ago (on the engine's manual clock) is still kept and found.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createEngine, reactor } from '../../src/index.js';
import { ManualClock } from '../../src/testing/clock.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { usePostgresServer } from '../support/use-postgres-server.js';

const server = usePostgresServer();

describe('an engine over the PostgreSQL store', () => {
  test('runs a reactor inline, replays an idempotent repeat, and lists it by tag', async () => {
    const store = new PostgresStore({ connection: server.url, schema: 'engine_run', migrate: true });
    try {
      let charges = 0;
      const order = reactor('pg-order')
        .input({ sku: z.string(), quantity: z.number() })
        .step('reserve', {
          args: ($) => ({ sku: $.input('sku'), quantity: $.input('quantity') }),
          run: ({ sku, quantity }) => ({ sku, reserved: quantity }),
        })
        .step('charge', {
          args: ($) => ({ reserved: $.result('reserve', 'reserved') }),
          run: ({ reserved }) => ({ charged: reserved * 100, n: ++charges }),
        })
        .returns('charge');
      const engine = createEngine({ store });
      const options = { idempotencyKey: 'order-1', tags: { orderId: '1' } };
      const first = await engine.run(order, { sku: 'mug', quantity: 2 }, options);
      expect(first.status === 'completed' && first.value).toEqual({ charged: 200, n: 1 });
      const again = await engine.run(order, { sku: 'mug', quantity: 2 }, options);
      expect(again).toMatchObject({ executionId: first.executionId, status: 'completed', replay: true });
      expect(charges).toBe(1);
      const record = await store.get(first.executionId);
      expect(record).toMatchObject({ status: 'completed', idempotencyKey: 'order-1', tags: { orderId: '1' } });
      expect(Object.keys(record?.steps ?? {})).toEqual(['reserve', 'charge']);
      const page = await engine.list({ tags: { orderId: '1' } });
      expect(page.executions.map((e) => e.executionId)).toEqual([first.executionId]);
    } finally {
      await store.close();
    }
  });

  test('keeps history by default: an execution finished a month ago is listed, found by tag and by its time range', async () => {
    const store = new PostgresStore({ connection: server.url, schema: 'engine_history', migrate: true });
    try {
      const monthAgo = Date.UTC(2026, 10, 5);
      const clock = new ManualClock({ start: monthAgo });
      const audit = reactor('pg-audit')
        .input({ orderId: z.string() })
        .step('note', { args: ($) => ({ orderId: $.input('orderId') }), run: ({ orderId }) => `noted ${orderId}` })
        .returns('note');
      const old = await createEngine({ store, clock }).run(audit, { orderId: 'a-1' }, { tags: { orderId: 'a-1' } });
      expect(old.status).toBe('completed');
      // A month later, on a new engine: nothing expired the record.
      clock.advance(31 * 24 * 60 * 60 * 1000);
      const engine = createEngine({ store, clock });
      await engine.run(audit, { orderId: 'a-2' }, { tags: { orderId: 'a-2' } });
      const byTag = await engine.list({ tags: { orderId: 'a-1' } });
      expect(byTag.executions.map((e) => [e.executionId, e.status])).toEqual([[old.executionId, 'completed']]);
      const inTheMonth = await engine.list({ from: monthAgo - 1, to: monthAgo + 1 });
      expect(inTheMonth.executions.map((e) => e.executionId)).toEqual([old.executionId]);
      expect(await store.get(old.executionId)).toMatchObject({
        status: 'completed',
        steps: { note: { result: 'noted a-1' } },
      });
    } finally {
      await store.close();
    }
  });
});
