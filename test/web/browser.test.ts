/**
 * The dashboard end to end in a real headless Chromium over a real redis-server and an in-test
 * BullMQ worker: one execution holds `account:acme` (its step waits for the test), a second one
 * parks on it. The coordination view shows the holder and the parked waiter; the operator opens
 * the waiter, cancels it through the confirm page, and sees it cancelled with the action in its
 * trace; when the holder finishes, the live refresh drops the hold without a reload. A paused
 * approval is resumed from its page: a refused payload comes back on the confirm page, a valid
 * one completes the run.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { reactor } from '../../src/index.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { createDashboard } from '../../src/web/index.js';
import { launchChromium, type Browser } from '../support/chromium.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { gate, until } from './fixtures.js';
import { approvalReactor } from './interrupt-fixtures.js';

const held = gate();
const transfer = reactor('transfer')
  .input({ account: z.string(), note: z.string() }, { redact: ['note'] })
  .withLock({ key: ({ account }) => `account:${account}` })
  .step('post', { run: async () => (await held.promise, 'posted') })
  .build();
const approval = approvalReactor();

let redis: RedisServerHandle;
let runtime: RedisRuntime;
let backend: RedisBackend;
let server: ServerType;
let browser: Browser;
let base: string;

beforeAll(async () => {
  redis = await startRedisServer();
  const prefix = 'web-e2e';
  runtime = createRedisRuntime({
    url: redis.url,
    prefix,
    reactors: [transfer, approval],
    background: { workerWaitMs: 0, parkFallbackMs: 60_000 },
  });
  runtime.startWorker({ concurrency: 4 });
  backend = createRedisBackend({ url: redis.url, prefix });
  const app = createDashboard({
    engine: runtime.engine,
    coordinator: backend.coordinator,
    reactors: [transfer, approval],
    refreshSeconds: 1,
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
  await browser?.close();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  await runtime?.close();
  await backend?.close();
  await redis?.dispose();
});

test('the coordination view shows the holder and the parked waiter; cancelling the waiter from the browser cancels it', async () => {
  const holder = await runtime.engine.start(transfer, { account: 'acme', note: 'first' });
  await until(
    async () => (await backend.coordinator.lockState('account:acme'))?.holder.executionId === holder.executionId,
    'the holder to take the lock',
    15_000,
  );
  const waiter = await runtime.engine.start(transfer, { account: 'acme', note: 'top secret' });
  await until(
    async () => (await runtime.engine.result(waiter.executionId))?.status === 'parked',
    'the waiter to park',
    15_000,
  );

  const page = await browser.context.newPage();
  await page.goto(`${base}/coordination`);
  const row = page.locator('tr[data-lock="account:acme"]');
  await expect.poll(() => row.count()).toBe(1);
  expect(await row.innerText()).toContain(holder.executionId);
  expect(await row.locator(`[data-waiter="${waiter.executionId}"]`).count()).toBe(1);

  await row.locator(`[data-waiter="${waiter.executionId}"] a`).click();
  await page.waitForURL(`**/ops/executions/${waiter.executionId}`);
  expect(await page.locator('.waiting').innerText()).toContain('Parked on lock account:acme');
  expect(await page.content()).not.toContain('top secret');
  // A reactor-level lock parks the execution before any step: the step has not started.
  expect(await page.locator('svg.dag g[data-step="post"]').getAttribute('data-status')).toBe('pending');

  await page.locator('a[data-action="cancel"]').click();
  await page.waitForURL(`**/ops/executions/${waiter.executionId}/actions/cancel`);
  await page.locator('form.confirm button[type="submit"]').click();
  await page.waitForURL(`**/ops/executions/${waiter.executionId}?notice=*`);
  expect(await page.locator('.notice').innerText()).toContain('is cancelled');
  expect(await page.locator('h1 .badge').innerText()).toBe('cancelled');
  expect(await page.locator('tr[data-event="run.cancelled"]').innerText()).toContain(
    'cancel requested from the dashboard',
  );
  expect((await runtime.engine.result(waiter.executionId))?.status).toBe('cancelled');

  await page.goto(`${base}/coordination`);
  await expect.poll(() => page.locator('tr[data-lock="account:acme"] [data-waiter]').count()).toBe(0);
  held.open();
  expect((await runtime.engine.wait(holder.executionId, { timeoutMs: 15_000 }))?.status).toBe('completed');
  // The live refresh swaps the page's content in place: the released hold disappears without a reload.
  await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 42));
  await expect.poll(() => page.locator('tr[data-lock="account:acme"]').count(), { timeout: 10_000 }).toBe(0);
  expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(42);
  await page.close();
});

test('resuming a paused execution from its page: a refused payload shows the typed error, a valid one completes it', async () => {
  const run = await runtime.engine.start(approval, { orderId: 'b-1' });
  await until(
    async () => (await runtime.engine.result(run.executionId))?.status === 'paused',
    'the run to pause',
    15_000,
  );
  const page = await browser.context.newPage();
  await page.goto(`${base}/executions/${run.executionId}`);
  expect(await page.locator('tr[data-interrupt="approve"]').innerText()).toContain('approval:b-1');
  await page.locator('tr[data-interrupt="approve"] a[data-action="resume"]').click();
  await page.waitForURL(`**/ops/executions/${run.executionId}/actions/resume?step=approve`);
  await page.locator('textarea[name="payload"]').fill('{"approved": "yes"}');
  await page.locator('form.confirm button[type="submit"]').click();
  await expect.poll(() => page.locator('.problem').count()).toBe(1);
  expect(await page.locator('.problem').innerText()).toContain('invalid attempt 1 of 2');
  expect(await page.locator('input[name="step"]').inputValue()).toBe('approve');
  await page.locator('textarea[name="payload"]').fill('{"approved": true, "approver": "ann"}');
  await page.locator('form.confirm button[type="submit"]').click();
  await page.waitForURL(`**/ops/executions/${run.executionId}?notice=*`);
  expect(await page.locator('h1 .badge').innerText()).toBe('completed');
  expect(await page.locator('tr[data-event="interrupt.resumed"]').count()).toBe(1);
  expect((await runtime.engine.result(run.executionId))?.status).toBe('completed');
  await page.close();
});
