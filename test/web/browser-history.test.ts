/**
 * Finding history on the dashboard, in a real headless Chromium over a real redis-server and an
 * in-test BullMQ worker: the executions list filtered by a tag finds the one execution started
 * with it (from the Redis tag index), shows the operator's chosen tag column and each
 * execution's duration; a time range that excludes it finds nothing; the JSON API takes the same
 * filters and refuses a malformed tag with a 400.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { reactor } from '../../src/index.js';
import { createDashboard } from '../../src/web/index.js';
import { launchChromium, type Browser } from '../support/chromium.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const shipment = reactor('shipment')
  .input({ orderId: z.string() })
  .step('ship', { args: ($) => ({ orderId: $.input('orderId') }), run: ({ orderId }) => `shipped ${orderId}` })
  .returns('ship');

let redis: RedisServerHandle;
let runtime: RedisRuntime;
let server: ServerType;
let browser: Browser;
let base: string;

beforeAll(async () => {
  redis = await startRedisServer();
  runtime = createRedisRuntime({ url: redis.url, prefix: 'web-history', reactors: [shipment] });
  runtime.startWorker({ concurrency: 4 });
  const app = createDashboard({ engine: runtime.engine, reactors: [shipment], refreshSeconds: 0, basePath: '/ops' });
  server = await new Promise<ServerType>((ready) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  await runtime?.close();
  await redis?.dispose();
});

test('the executions list finds an execution by tag, with a chosen tag column and its duration', async () => {
  const started = await runtime.engine.startMany(
    Array.from({ length: 30 }, (_, i) => ({
      reactor: shipment,
      input: { orderId: `o-${i}` },
      options: { tags: { orderId: `o-${i}`, region: i % 2 === 0 ? 'eu' : 'us' } },
    })),
  );
  const wanted = started[17]!.executionId;
  expect((await runtime.engine.wait(wanted, { timeoutMs: 15_000 })).status).toBe('completed');
  const created = (await runtime.engine.list({ tags: { orderId: 'o-17' } })).executions[0]!.createdAt;

  const page = await browser.context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && consoleErrors.push(m.text())));
  await page.goto(`${base}/executions`);
  await page.locator('input[name="tag"]').fill('orderId=o-17');
  await page.locator('input[name="column"]').fill('region');
  await page.locator('form.filters button[type="submit"]').click();
  await page.waitForURL('**/ops/executions?*tag=orderId%3Do-17*');
  const rows = page.locator('table.executions tr[data-execution]');
  expect(await rows.count()).toBe(1);
  expect(await rows.first().getAttribute('data-execution')).toBe(wanted);
  expect(await page.locator('th[data-tag-column]').innerText()).toBe('region');
  expect(await rows.first().locator('td[data-tag="region"]').innerText()).toBe('us');
  const ms = Number(await rows.first().locator('[data-duration-ms]').getAttribute('data-duration-ms'));
  expect(ms).toBeGreaterThanOrEqual(0);
  // The form keeps the filters; the Next page link would carry them.
  expect(await page.locator('input[name="tag"]').inputValue()).toBe('orderId=o-17');

  // Two tags narrow it; a time range after its creation excludes it.
  await page.locator('input[name="tag"]').fill('region=us, orderId=o-17');
  await page.locator('form.filters button[type="submit"]').click();
  await page.waitForURL('**/ops/executions?*tag=region*');
  expect(await rows.count()).toBe(1);
  await page.goto(
    `${base}/executions?tag=orderId%3Do-17&from=${encodeURIComponent(new Date(created + 1).toISOString())}`,
  );
  expect(await rows.count()).toBe(0);
  expect(await page.locator('p.empty').count()).toBe(1);
  await page.goto(`${base}/executions?tag=region%3Deu&column=orderId&limit=100`);
  expect(await rows.count()).toBe(15);
  const shown = await page.locator('td[data-tag="orderId"]').allInnerTexts();
  expect(shown.every((v) => Number(v.slice(2)) % 2 === 0)).toBe(true);
  // The execution's page shows its tags; each links to the list filtered by it.
  await page.goto(`${base}/executions/${encodeURIComponent(wanted)}`);
  await page.locator('a.tag[data-tag-key="orderId"]').click();
  await page.waitForURL('**/ops/executions?tag=orderId%3Do-17');
  expect(await rows.count()).toBe(1);
  expect(await rows.first().getAttribute('data-execution')).toBe(wanted);
  expect(consoleErrors).toEqual([]);
  await page.close();
});

test('the JSON API lists by tag and refuses a malformed tag with a 400', async () => {
  const one = await runtime.engine.start(shipment, { orderId: 'api-1' }, { tags: { orderId: 'api-1' } });
  const listed = (await (await fetch(`${base}/api/executions?tag=orderId%3Dapi-1`)).json()) as {
    items: { id: string; tags: Record<string, string> }[];
  };
  expect(listed.items.map((i) => i.id)).toEqual([one.executionId]);
  expect(listed.items[0]!.tags).toEqual({ orderId: 'api-1' });
  const bad = await fetch(`${base}/api/executions?tag=orderId`);
  expect(bad.status).toBe(400);
  expect(await bad.json()).toMatchObject({ error: { code: 'query_invalid' } });
  expect((await fetch(`${base}/api/executions?tag=bad%20key%3D1`)).status).toBe(400);
});
