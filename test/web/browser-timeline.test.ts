/**
 * The timeline in a real headless Chromium, measured: an execution that waited in the queue for
 * its delayed start, slept, parked on a lock until its own fallback job, and retried a step is
 * run on a manual clock, and each drawn bar's bounding box is checked against the times of its
 * trace, on the axis the page draws (its chart's left edge and its pixels per millisecond).
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ReactorEvent } from '../../src/engine/model/events.js';
import type { TestEngine } from '../../src/testing/index.js';
import { createDashboard } from '../../src/web/index.js';
import { launchChromium, type Browser } from '../support/chromium.js';
import { journeyReactor, manualEngine, runJourney, timeOf } from './timeline-fixtures.js';

let t: TestEngine;
let server: ServerType;
let browser: Browser;
let base: string;
let id: string;
let trace: readonly ReactorEvent[];

beforeAll(async () => {
  t = manualEngine();
  const journey = journeyReactor(t.clock);
  id = await runJourney(t, journey);
  trace = (await t.engine.store.get(id))?.trace ?? [];
  const app = createDashboard({ engine: t.engine, coordinator: t.coordinator, reactors: [journey], refreshSeconds: 0 });
  server = await new Promise<ServerType>((ready) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ready(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium({ width: 1400, height: 1000 });
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  await t?.close();
});

interface Box {
  readonly x: number;
  readonly width: number;
  readonly right: number;
}

async function box(locator: Locator): Promise<Box> {
  expect(await locator.count()).toBe(1);
  const b = await locator.boundingBox();
  if (!b) throw new Error('the bar is not drawn');
  return { x: b.x, width: b.width, right: b.x + b.width };
}

/** The axis as drawn: where time `from` sits on the page and how many pixels a millisecond takes. */
async function axis(
  page: Page,
): Promise<{ at: (ms: number) => number; px: (ms: number) => number; tolerance: number }> {
  const svg = page.locator('svg.timeline');
  const b = (await svg.boundingBox())!;
  const attr = async (name: string): Promise<number> => Number(await svg.getAttribute(name));
  const scale = b.width / (await attr('width'));
  const perMs = ((await attr('data-chart-width')) * scale) / (await attr('data-span-ms'));
  const left = b.x + (await attr('data-chart-x')) * scale;
  const from = trace[0]!.at;
  // Positions are written to a tenth of a pixel; a bar is never narrower than 3 px.
  return { at: (ms) => left + (ms - from) * perMs, px: (ms) => ms * perMs, tolerance: 0.2 * scale + perMs };
}

const bar = (page: Page, lane: string, kind: string): Locator =>
  page.locator(`svg.timeline g[data-lane="${lane}"] rect[data-bar="${kind}"]`);

test('each bar of the timeline sits where its trace says: queue time, the sleep, a park ended by its own fallback job, the retry', async () => {
  const page = await browser.context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${base}/executions/${id}`);
  const { at, px, tolerance } = await axis(page);
  const close = (actual: number, expected: number): void =>
    expect(Math.abs(actual - expected), `${actual} vs ${expected} (±${tolerance})`).toBeLessThanOrEqual(tolerance);

  // Queue time: from queued to the first job a worker took, labelled on the bar and below the chart.
  const queued = await box(bar(page, 'execution', 'queued'));
  const firstStart = timeOf(trace, 'run.resumed');
  close(queued.x, at(timeOf(trace, 'run.queued')));
  close(queued.width, px(firstStart - timeOf(trace, 'run.queued')));
  expect(await page.locator('svg.timeline g[data-lane="execution"] text.bar-label').textContent()).toBe('queued');
  expect(await page.locator('.timeline-axis').innerText()).toContain('Queue time: 1.0 s');

  // The sleep: its own bar, no attempt drawn under it, after `before`'s attempt and before `post`'s.
  const sleep = await box(bar(page, 'nap', 'sleep'));
  close(sleep.x, at(timeOf(trace, 'step.sleeping')));
  close(sleep.width, px(timeOf(trace, 'step.woke') - timeOf(trace, 'step.sleeping')));
  for (const kind of ['attempt', 'failed']) {
    const bars = bar(page, 'nap', kind);
    for (let i = 0; i < (await bars.count()); i++) {
      const other = await box(bars.nth(i));
      expect(other.right <= sleep.x + tolerance || other.x >= sleep.right - tolerance).toBe(true);
    }
  }
  const before = await box(bar(page, 'before', 'attempt'));
  const post = await box(bar(page, 'post', 'attempt'));
  expect(before.right).toBeLessThanOrEqual(sleep.x + tolerance);
  expect(sleep.right).toBeLessThanOrEqual(post.x + tolerance);

  // The lock park: from run.parked to the fallback job that resumed it (no run.woken), then post's attempt.
  expect(trace.some((e) => e.type === 'run.woken')).toBe(false);
  const parkedAt = timeOf(trace, 'run.parked');
  const resumedAt = timeOf(trace, 'run.resumed', 'run.parked');
  expect(resumedAt - parkedAt).toBeGreaterThanOrEqual(15_000);
  const park = await box(bar(page, 'execution', 'park'));
  close(park.x, at(parkedAt));
  close(park.width, px(resumedAt - parkedAt));
  expect(park.right).toBeLessThanOrEqual(post.x + tolerance);
  expect(await bar(page, 'execution', 'park').locator('title').textContent()).toContain('resumed by its own job');

  // The retry: the failed attempt, its 3 s backoff, then the second attempt, in that order.
  const failed = await box(bar(page, 'charge', 'failed'));
  const backoff = await box(bar(page, 'charge', 'backoff'));
  const second = await box(bar(page, 'charge', 'attempt'));
  close(failed.right, at(timeOf(trace, 'step.retrying')));
  close(backoff.x, failed.right);
  close(backoff.width, px(3_000));
  expect(second.x).toBeGreaterThanOrEqual(backoff.right - tolerance);
  close(second.x, at(timeOf(trace, 'step.started', 'step.retrying')));
  expect(park.right).toBeLessThanOrEqual(failed.x + tolerance);

  // The axis is the execution's own: its right edge is the run's completion.
  close(second.right, at(timeOf(trace, 'run.completed')));
  await page.close();
});
