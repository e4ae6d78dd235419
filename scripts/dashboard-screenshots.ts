/**
 * `npm run docs:screenshots`: renders the dashboard's main pages in headless Chromium and saves
 * them as PNG under docs/images/ (executions list, execution detail, coordination view, a search,
 * the queue view, a bulk cancel's confirm page). It runs the embedded engine (no Redis):
 * completed, failed and retried executions, one execution holding a step-level lock while two
 * are parked on it, a refund paused at an interrupt (one refused payload counted), a start
 * delayed by an hour, a semaphore lease, a rate window, a period marker and an ordered lock with
 * positions in line. Never run by CI.
 */
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { z } from 'zod';
import { createEmbeddedEngine, MemoryCoordinator, reactor } from '../src/index.js';
import { createDashboard } from '../src/web/index.js';
import { launchChromium } from '../test/support/chromium.js';

const out = (name: string): string => fileURLToPath(new URL(`../docs/images/${name}`, import.meta.url));
let releaseHold!: () => void;
const hold = new Promise<void>((resolve) => (releaseHold = resolve));

const checkout = reactor('checkout')
  .input(
    { orderId: z.string(), account: z.string(), cardToken: z.string(), fail: z.boolean().default(false) },
    { redact: ['cardToken'] },
  )
  .step('reserve', {
    args: ($) => ({ orderId: $.input('orderId') }),
    run: ({ orderId }) => ({ reservation: `res-${orderId}` }),
    undo: () => undefined,
  })
  .step('fraud-check', { args: ($) => ({ orderId: $.input('orderId') }), run: () => ({ score: 0.02 }) })
  .step('charge', {
    args: ($) => ({
      account: $.input('account'),
      reservation: $.result('reserve', 'reservation'),
      fail: $.input('fail'),
    }),
    waitFor: ['fraud-check'],
    lock: { key: ({ account }) => `account:${account}`, ttl: '30s' },
    run: async ({ account, fail }) => {
      if (fail) throw new Error('card declined', { cause: new Error('issuer answered 05: do not honour') });
      if (account === 'acme') await hold;
      return { chargeId: `ch-${account}` };
    },
    undo: () => undefined,
  })
  .step('receipt', { args: ($) => ({ charge: $.result('charge', 'chargeId') }), run: ({ charge }) => `sent ${charge}` })
  .step('ledger', { args: ($) => ({ charge: $.result('charge', 'chargeId') }), run: () => 'posted' })
  .returns('charge');

const refund = reactor('refund')
  .input({ orderId: z.string() })
  .step('hold', { args: ($) => ({ orderId: $.input('orderId') }), run: ({ orderId }) => `hold-${orderId}` })
  .interrupt('approval', {
    waitFor: ['hold'],
    args: ($) => ({ orderId: $.input('orderId') }),
    payload: { approved: z.boolean(), approver: z.string() },
    correlationId: ({ orderId }) => `refund:${orderId}`,
    timeout: '2d',
    maxAttempts: 3,
  })
  .step('pay', {
    args: ($) => ({ approved: $.result('approval', 'approved') }),
    run: ({ approved }) => (approved ? 'refunded' : 'kept'),
  })
  .returns('pay');

async function main(): Promise<void> {
  const coordinator = new MemoryCoordinator();
  const engine = createEmbeddedEngine({ coordinator, background: { workerWaitMs: 0, parkFallbackMs: 600_000 } });
  const done = async (input: { orderId: string; account: string; fail?: boolean }) => {
    const queued = await engine.start(checkout, { cardToken: 'tok_live_4242', ...input });
    return engine.wait(queued.executionId, { timeoutMs: 5_000, pollMs: 5 });
  };
  await done({ orderId: 'o-1001', account: 'globex' });
  await done({ orderId: 'o-1002', account: 'initech' });
  const failed = await done({ orderId: 'o-1003', account: 'umbrella', fail: true });
  await engine.retry(failed.executionId);
  const holder = await engine.start(checkout, { orderId: 'o-1004', account: 'acme', cardToken: 'tok_live_1111' });
  while ((await coordinator.lockState('account:acme'))?.holder.executionId !== holder.executionId)
    await new Promise((r) => setTimeout(r, 5));
  const parked = await engine.start(checkout, { orderId: 'o-1005', account: 'acme', cardToken: 'tok_live_2222' });
  while ((await engine.result(parked.executionId))?.status !== 'parked') await new Promise((r) => setTimeout(r, 5));
  const paused = await engine.start(refund, { orderId: 'o-1006' });
  while ((await engine.result(paused.executionId))?.status !== 'paused') await new Promise((r) => setTimeout(r, 5));
  await engine.resume(paused.executionId, { approved: 'yes' }).catch(() => undefined); // one refused payload, counted
  const parkedToo = await engine.start(checkout, { orderId: 'o-1007', account: 'acme', cardToken: 'tok_live_3333' });
  while ((await engine.result(parkedToo.executionId))?.status !== 'parked') await new Promise((r) => setTimeout(r, 5));
  await engine.start(checkout, { orderId: 'o-1008', account: 'hooli', cardToken: 'tok_live_5555' }, { delay: '1h' });
  await coordinator.semaphoreAcquire({
    key: 'exports:tenant-7',
    holder: { owner: 'exp-81', executionId: 'exp-81', reactor: 'export', step: 'upload' },
    limit: 3,
    ttlMs: 60_000,
  });
  await coordinator.rateTake({
    id: 'r1',
    windows: [
      { key: 'psp', limit: 50, periodMs: 1_000 },
      { key: 'reset:ada@example.com', limit: 2, periodMs: 3_600_000 },
    ],
  });
  await coordinator.periodMark({
    key: 'report:user-9',
    bucket: new Date().toISOString().slice(0, 10),
    ttlMs: 43_200_000,
  });
  for (let i = 0; i < 4; i++) await coordinator.orderedTicket('updates:account-3');
  await coordinator.orderedEnter({
    key: 'updates:account-3',
    nonce: 1,
    epoch: (await coordinator.orderedState('updates:account-3')).epoch,
    poisonMs: 60_000,
    strict: false,
    holder: { owner: 'upd-1' },
  });

  const app = createDashboard({ engine, coordinator, reactors: [checkout, refund], refreshSeconds: 0 });
  const server = await new Promise<ServerType>((ready) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await launchChromium({ width: 1280, height: 800 });
  try {
    const page = await browser.context.newPage();
    const shots: [string, string][] = [
      ['/executions', 'dashboard-executions.png'],
      [`/executions/${parked.executionId}`, 'dashboard-execution.png'],
      [`/executions/${failed.executionId}`, 'dashboard-execution-failed.png'],
      [`/executions/${paused.executionId}`, 'dashboard-execution-paused.png'],
      ['/coordination', 'dashboard-coordination.png'],
      ['/executions?q=o-1005', 'dashboard-search.png'],
      ['/queue', 'dashboard-queue.png'],
      [
        `/executions/bulk?action=cancel&id=${parked.executionId}&id=${parkedToo.executionId}&id=${paused.executionId}`,
        'dashboard-bulk-cancel.png',
      ],
    ];
    for (const [path, file] of shots) {
      await page.goto(`${base}${path}`);
      await page.screenshot({ path: out(file), fullPage: true });
      console.log(`wrote docs/images/${file}`);
    }
  } finally {
    await browser.close();
    releaseHold();
    await engine.close(); // drops the delayed start (due in an hour)
    await new Promise<void>((r) => server.close(() => r()));
  }
}

await main();
