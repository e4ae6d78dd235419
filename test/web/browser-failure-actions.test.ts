/**
 * The dashboard's failure buttons in a real headless Chromium (embedded memory backend): on a run
 * paused on a step's failure, Retry step, Skip step, Roll back and Fork each open their confirm
 * page, whose fields are filled and submitted like an operator would; each action is then read
 * back from the execution's record.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createEmbeddedEngine, MemoryCoordinator, type EmbeddedEngine } from '../../src/index.js';
import { createDashboard } from '../../src/web/index.js';
import { launchChromium, type Browser } from '../support/chromium.js';
import { ledger, order, type Ledger } from '../steer/helpers.js';

let engine: EmbeddedEngine;
let l: Ledger;
let server: ServerType;
let browser: Browser;
let base: string;
const r = () => order(l, 'steer-browser');

beforeAll(async () => {
  l = ledger();
  const coordinator = new MemoryCoordinator();
  engine = createEmbeddedEngine({ coordinator });
  const app = createDashboard({ engine, coordinator, reactors: [r()], refreshSeconds: 0 });
  server = await new Promise<ServerType>((ready) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  await engine?.close();
});

async function pausedRun(orderId: string): Promise<string> {
  l.failCharge = true;
  const paused = await engine.run(r(), { orderId, amount: 2 });
  expect(paused).toBePausedOnFailure('charge');
  return paused.executionId;
}

/** Opens the execution's page, clicks the action's button, checks its confirm page, fills `fields` and confirms. */
async function act(page: Page, id: string, action: string, title: string, fields: Record<string, string> = {}) {
  await page.goto(`${base}/executions/${id}`);
  await page.locator(`a[data-action="${action}"]`).click();
  await page.waitForURL(`**/executions/${id}/actions/${action}`);
  expect(await page.locator('h1').innerText()).toContain(title);
  for (const [name, value] of Object.entries(fields)) await page.locator(`[name="${name}"]`).fill(value);
  await page.locator('form.confirm button[type="submit"]').click();
  await page.waitForLoadState('load');
}

test('retry step, skip step, roll back and fork, each through its confirm page, act on the execution', async () => {
  const page = await browser.context.newPage();
  try {
    // Retry step: the step runs again and the run completes.
    const retried = await pausedRun('b1');
    l.failCharge = false;
    await act(page, retried, 'retry-step', 'Retry step');
    await expect.poll(async () => (await engine.store.get(retried))?.status, { timeout: 20_000 }).toBe('completed');
    expect((await engine.store.get(retried))?.steps['charge']).toMatchObject({ status: 'completed', attempts: 2 });

    // Skip step: the value is the step's result, recorded skipped; the run completes with it.
    const skipped = await pausedRun('b2');
    await act(page, skipped, 'skip-step', 'Skip step', { value: '{"id":"by-phone"}' });
    await expect.poll(async () => (await engine.store.get(skipped))?.status, { timeout: 20_000 }).toBe('completed');
    expect((await engine.store.get(skipped))?.steps['charge']).toMatchObject({
      status: 'skipped',
      result: { id: 'by-phone' },
    });
    expect(await engine.result(skipped)).toMatchObject({ status: 'completed', value: 'shipped with by-phone' });

    // Roll back: the run ends failed at the step, its completed steps undone.
    const rolled = await pausedRun('b3');
    const undoneBefore = l.rollback.length;
    await act(page, rolled, 'rollback', 'Roll back');
    await expect.poll(async () => (await engine.store.get(rolled))?.status, { timeout: 20_000 }).toBe('failed');
    expect((await engine.store.get(rolled))?.failedStep).toBe('charge');
    expect(l.rollback.slice(undoneBefore)).toEqual(['compensate charge', 'undo price', 'undo reserve']);

    // Fork: a new execution linked to the source, from the failed step; the source stays paused.
    const source = await pausedRun('b4');
    l.failCharge = false;
    const before = { ...l.bodies };
    await act(page, source, 'fork', 'Fork', { fromStep: 'charge' });
    const forkOf = async (): Promise<string | undefined> =>
      (await engine.store.list({ limit: 50 })).records.find((rec) => rec.retryOf === source)?.id;
    await expect.poll(forkOf, { timeout: 20_000 }).toBeDefined();
    const forkId = await forkOf();
    expect(forkId).toBeDefined();
    await expect.poll(async () => (await engine.store.get(forkId!))?.status, { timeout: 20_000 }).toBe('completed');
    // Reserve and price were reused from the source (their bodies did not run again); charge and ship ran.
    expect(l.bodies).toEqual({ ...before, charge: before.charge! + 1, ship: (before.ship ?? 0) + 1 });
    expect((await engine.store.get(forkId!))?.steps['reserve']).toMatchObject({ status: 'completed' });
    expect((await engine.store.get(source))?.status).toBe('paused');
  } finally {
    await page.close();
  }
}, 120_000);
