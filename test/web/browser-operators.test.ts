/**
 * The operators' pages in a real headless Chromium over a real redis-server and an in-test
 * BullMQ worker: search finds an execution by its idempotency key and by its correlation id;
 * the Queue page shows a delayed and an active job and the worker with its concurrency; three
 * parked executions are cancelled in bulk through the confirm page, and the timeline of one shows
 * its park and its rollback; `/readyz` answers 503 while Redis is frozen (SIGSTOP), 200 again
 * once it is resumed.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { reactor } from '../../src/index.js';
import { redisReadiness } from '../../src/metrics/readiness.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { createDashboard } from '../../src/web/index.js';
import { launchChromium, type Browser } from '../support/chromium.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { gate, until } from './fixtures.js';
import { approvalReactor } from './interrupt-fixtures.js';

const held = gate();
const transfer = reactor('transfer')
  .input({ account: z.string() })
  .withLock({ key: ({ account }) => `account:${account}` })
  .step('post', { run: async () => (await held.promise, 'posted') })
  .build();
const booking = reactor('booking')
  .input({ guest: z.string() })
  .step('book', { args: ($) => ({ guest: $.input('guest') }), run: ({ guest }) => `room for ${guest}` })
  .returns('book');
const approval = approvalReactor();
const reactors = [transfer, booking, approval];

let redis: RedisServerHandle;
let runtime: RedisRuntime;
let backend: RedisBackend;
let probe: Redis;
let server: ServerType;
let browser: Browser;
let base: string;

beforeAll(async () => {
  redis = await startRedisServer();
  const prefix = 'web-ops-e2e';
  runtime = createRedisRuntime({
    url: redis.url,
    prefix,
    reactors,
    background: { workerWaitMs: 0, parkFallbackMs: 60_000 },
  });
  runtime.startWorker({ concurrency: 4 });
  backend = createRedisBackend({ url: redis.url, prefix });
  probe = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  probe.on('error', () => undefined);
  const app = createDashboard({
    engine: runtime.engine,
    coordinator: backend.coordinator,
    reactors,
    queue: runtime.queueInspector,
    readiness: redisReadiness({ redis: probe, timeoutMs: 500 }),
    refreshSeconds: 0,
    basePath: '/ops',
  });
  server = await new Promise<ServerType>((ready) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops`;
  browser = await launchChromium();
});

afterAll(async () => {
  held.open();
  redis?.resume();
  await browser?.close();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  await runtime?.close();
  await backend?.close();
  probe?.disconnect();
  await redis?.dispose();
});

test('search finds an execution by its idempotency key and by its correlation id', async () => {
  const booked = await runtime.engine.start(booking, { guest: 'ada' }, { idempotencyKey: 'booking-2026-77' });
  await runtime.engine.start(booking, { guest: 'bob' });
  expect((await runtime.engine.wait(booked.executionId, { timeoutMs: 15_000 })).status).toBe('completed');
  const paused = await runtime.engine.start(approval, { orderId: 'o-9' });
  await until(async () => (await runtime.engine.result(paused.executionId))?.status === 'paused', 'the pause', 15_000);

  const page = await browser.context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && consoleErrors.push(m.text())));
  await page.goto(`${base}/executions`);
  await page.locator('input[name="q"]').fill('booking-2026-77');
  await page.locator('form.filters button[type="submit"]').click();
  await page.waitForURL('**/ops/executions?q=booking-2026-77*');
  const rows = page.locator('table.executions tr[data-execution]');
  expect(await rows.count()).toBe(1);
  expect(await rows.first().getAttribute('data-execution')).toBe(booked.executionId);
  expect(await rows.first().locator('[data-match]').getAttribute('data-match')).toBe('idempotency_key');

  await page.locator('input[name="q"]').fill('approval:o-9');
  await page.locator('form.filters button[type="submit"]').click();
  await page.waitForURL('**/ops/executions?q=approval%3Ao-9*');
  expect(await rows.count()).toBe(1);
  expect(await rows.first().getAttribute('data-execution')).toBe(paused.executionId);
  expect(await rows.first().locator('[data-match]').getAttribute('data-match')).toBe('correlation_id');

  // The reactor filter is a picker; the page has a favicon (no 404 in the console).
  const options = await page.locator('select[name="reactor"] option').allInnerTexts();
  expect(options).toEqual(['any', 'approval', 'booking', 'transfer']);
  expect(consoleErrors).toEqual([]);
  await page.close();
});

test('the queue view shows a delayed and an active job; bulk cancel of 3 parked executions; the timeline shows the park and the rollback', async () => {
  const holder = await runtime.engine.start(transfer, { account: 'acme' });
  await until(
    async () => (await backend.coordinator.lockState('account:acme'))?.holder.executionId === holder.executionId,
    'the holder to take the lock',
    15_000,
  );
  const waiters: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const waiter = await runtime.engine.start(transfer, { account: 'acme' });
    await until(async () => (await runtime.engine.result(waiter.executionId))?.status === 'parked', 'a park', 15_000);
    waiters.push(waiter.executionId);
  }
  const later = await runtime.engine.start(booking, { guest: 'carol' }, { delay: '1h' });

  const page = await browser.context.newPage();
  await page.goto(`${base}/queue`);
  const delayed = page.locator('tr[data-job-state="delayed"]', { hasText: later.executionId });
  expect(await delayed.count()).toBe(1);
  expect(await delayed.innerText()).toContain('due ');
  const active = page.locator('tr[data-job-state="active"]', { hasText: holder.executionId });
  expect(await active.count()).toBe(1);
  const worker = page.locator('table.workers tr[data-worker]');
  expect(await worker.count()).toBe(1);
  expect(await worker.locator('td').nth(1).innerText()).toBe('4');
  expect(Number(await page.locator('[data-count="delayed"] .n').innerText())).toBeGreaterThanOrEqual(1);

  await page.goto(`${base}/executions?status=parked`);
  for (const id of waiters) await page.locator(`input[name="id"][value="${id}"]`).check();
  await page.locator('button[data-bulk="cancel"]').click();
  await page.waitForURL('**/ops/executions/bulk?*');
  expect(await page.locator('h1').innerText()).toBe('Cancel 3 executions?');
  expect(await page.locator('tr[data-bulk-target][data-applies="true"]').count()).toBe(3);
  await page.locator('form.confirm button[type="submit"]').click();
  await expect.poll(() => page.locator('tr[data-bulk-result][data-outcome="done"]').count()).toBe(3);
  expect(await page.locator('.notice').innerText()).toContain('Cancel: 3 of 3 done.');
  for (const id of waiters) expect((await runtime.engine.result(id))?.status).toBe('cancelled');

  await page.locator(`tr[data-bulk-result="${waiters[0]}"] a`).first().click();
  await page.waitForURL(`**/ops/executions/${waiters[0]}`);
  const timeline = page.locator('svg.timeline');
  expect(await timeline.locator('[data-bar="park"]').count()).toBeGreaterThanOrEqual(1);
  expect(await timeline.locator('[data-bar="rollback"]').count()).toBe(1);
  expect(await timeline.locator('[data-bar="park"] title').first().textContent()).toContain(
    'parked on lock account:acme',
  );
  // The trace reads as rows; each event's JSON is folded until opened.
  const cancelled = page.locator('tr[data-event="run.cancelled"]');
  expect(await cancelled.locator('details').getAttribute('open')).toBeNull();
  await cancelled.locator('summary').click();
  expect(await cancelled.locator('pre.json').innerText()).toContain('cancel requested from the dashboard');
  await page.close();
  held.open();
  expect((await runtime.engine.wait(holder.executionId, { timeoutMs: 15_000 })).status).toBe('completed');
  await runtime.engine.cancel(later.executionId);
});

test('/healthz answers 200; /readyz 200 while Redis answers, 503 while it is frozen', async () => {
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  redis.pause();
  try {
    const frozen = await fetch(`${base}/readyz`);
    expect(frozen.status).toBe(503);
    expect(((await frozen.json()) as { checks: { name: string; ok: boolean }[] }).checks).toEqual([
      expect.objectContaining({ name: 'redis', ok: false }),
    ]);
  } finally {
    redis.resume();
  }
  await expect.poll(async () => (await fetch(`${base}/readyz`)).status, { timeout: 10_000 }).toBe(200);
});
