/**
 * The dashboard's events page (`createDashboard({ events: true })`): the list newest first with a
 * name filter and keyset paging, `GET /api/events`, a 400 for a bad filter, and the link in the
 * navigation.
 */
import { afterEach, expect, test } from 'vitest';
import { z } from 'zod';
import { createEmbeddedEngine, event, reactor, type EmbeddedEngine } from '../../src/index.js';
import { createDashboard } from '../../src/web/index.js';

const orderPaid = event('order.paid', { orderId: z.string() });

let engine: EmbeddedEngine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

test('the events page lists sent events newest first, by name, a page at a time', async () => {
  engine = createEmbeddedEngine();
  for (let i = 0; i < 3; i++) await engine.send(orderPaid, { orderId: `o-${i}` }, { id: `pay-${i}` });
  await engine.send('stock.low', { sku: '<script>' }, { id: 'stock-1' });
  const app = createDashboard({ engine, events: true });

  const html = await (await app.request('/events')).text();
  expect(html).toContain('href="/events">Events</a>');
  expect([...html.matchAll(/data-event-id="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual([
    'pay-0',
    'pay-1',
    'pay-2',
    'stock-1',
  ]);
  expect(html).toContain('&lt;script&gt;'); // payloads are escaped

  const named = await (await app.request('/events?name=stock.low')).text();
  expect([...named.matchAll(/data-event-id="([^"]+)"/g)].map((m) => m[1])).toEqual(['stock-1']);

  const first = (await (await app.request('/api/events?limit=2')).json()) as {
    items: { id: string }[];
    cursor?: string;
  };
  expect(first.items).toHaveLength(2);
  expect(first.cursor).toBeDefined();
  const second = (await (await app.request(`/api/events?limit=2&cursor=${first.cursor!}`)).json()) as {
    items: { id: string }[];
    cursor?: string;
  };
  expect([...first.items, ...second.items].map((e) => e.id).sort()).toEqual(['pay-0', 'pay-1', 'pay-2', 'stock-1']);
  expect(second.cursor).toBeUndefined();

  expect((await app.request('/api/events?limit=0')).status).toBe(400);
});

test('an event that started a reactor links its execution, whose page shows the event tags', async () => {
  const fulfil = reactor('fulfil')
    .input({ orderId: z.string() })
    .on(orderPaid, { input: (e) => ({ orderId: e.orderId }) })
    .step('ship', { run: ({ orderId }) => orderId })
    .returns('ship');
  engine = createEmbeddedEngine({ reactors: [fulfil] });
  const sent = await engine.send(orderPaid, { orderId: 'o-1' }, { id: 'pay-1' });
  const [executionId] = sent.started;
  await engine.wait(executionId!);
  const app = createDashboard({ engine, events: true });
  const html = await (await app.request('/events')).text();
  expect(html).toContain(`<div data-effect="started">started: <a href="/executions/${executionId!}">`);
  const detail = await (await app.request(`/executions/${executionId!}`)).text();
  expect(detail).toContain('pay-1');
  expect(detail).toContain('event.name');
});

test('without events: true there is no events page and no link', async () => {
  engine = createEmbeddedEngine();
  const app = createDashboard({ engine });
  expect((await app.request('/events')).status).toBe(404);
  expect(await (await app.request('/executions')).text()).not.toContain('>Events</a>');
});
