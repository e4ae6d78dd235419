/**
 * An engine over the PostgreSQL store: a run's record is written and read back through the
 * database, an idempotent repeat replays the first run, and `engine.list` finds it by tag.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createEngine, reactor } from '../../src/index.js';
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
});
