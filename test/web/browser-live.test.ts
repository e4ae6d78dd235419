/**
 * The execution page, live, in a real headless Chromium (docs/realtime.md). On Redis and on
 * PostgreSQL, a worker process (`test/multiprocess/reactor-worker-process.ts`) runs the execution;
 * this process serves the dashboard and runs no worker. The page follows the execution's event stream: the step's
 * progress appears beside it while the step is held at a gate the test opens (so the page shows
 * progress N before the step goes on, by construction), a dropped connection is reopened with
 * `Last-Event-ID` (the position of the last event the page saw), the status turns `completed` at
 * the end and the stream closes; all in one document, never reloaded, with polling off
 * (`refreshSeconds` an hour), the page and its stream let in by the dashboard's session (a cookie
 * its `authorize` hook reads). On an engine without an execution stream the page falls back to
 * polling.
 */
import type { ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createEngine, MemoryStore, reactor } from '../../src/index.js';
import { createDashboard } from '../../src/web/index.js';
import { describeOnBackends } from '../support/backend-matrix.js';
import { launchChromium, type Browser } from '../support/chromium.js';
import { spawnJsonChild } from '../support/json-child.js';
import { gateFile, live } from '../multiprocess/live-protocol.js';
import type { ReactorWorkerConfig } from '../multiprocess/reactor-worker-process.js';

const WORKER = fileURLToPath(new URL('../multiprocess/reactor-worker-process.ts', import.meta.url));
/** A bound on a hung wait, not a speed requirement: a loaded machine may take long to start a worker. */
const DEADLINE = 120_000;
/** The whole test's bound: a worker process, Chromium and several waits, each bounded by {@link DEADLINE}. */
const TEST_BOUND = 600_000;

let server: ServerType | undefined;
let browser: Browser | undefined;
const dirs: string[] = [];

afterEach(async () => {
  await browser?.close();
  browser = undefined;
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Serves `fetch` on a free port of 127.0.0.1; resolves with its base URL. */
async function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<string> {
  const s = await new Promise<ServerType>((ready) => {
    const started = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () => ready(started));
  });
  server = s;
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

const progressOf = (page: Page, step: string) => page.locator(`table.steps tr[data-step="${step}"] [data-progress]`);
const stepBadge = (page: Page, step: string) =>
  page.locator(`table.steps tr[data-step="${step}"] td:nth-child(2) .badge`);

describeOnBackends(
  'the execution page follows the execution live',
  (backend) => {
    const children = new Set<ChildProcess>();
    afterEach(() => {
      for (const child of children) child.kill('SIGKILL');
      children.clear();
    });

    test(
      'progress and step events appear without a reload while a worker process runs it; a reconnect resumes; it ends completed',
      async () => {
        const runtime = backend.runtime({ reactors: [live] });
        const config: ReactorWorkerConfig = {
          backend: backend.name,
          address: backend.address(),
          namespace: runtime.namespace,
          reactor: 'live',
        };
        const worker = spawnJsonChild(WORKER, config, children);
        // The dashboard's own session (a cookie the authorize hook reads) lets the page and its stream in.
        const app = createDashboard({
          engine: runtime.engine,
          reactors: [live],
          basePath: '/ops',
          refreshSeconds: 3600,
          authorize: (c) => /(?:^|;\s*)session=ops(?:;|$)/.test(c.req.header('cookie') ?? '') || 'unauthenticated',
        });
        const lastEventIds: (string | null)[] = [];
        const base = await listen((request) => {
          if (new URL(request.url).pathname.endsWith('/stream'))
            lastEventIds.push(request.headers.get('last-event-id'));
          return app.fetch(request);
        });
        browser = await launchChromium();
        await browser.context.addCookies([{ name: 'session', value: 'ops', url: base }]);
        expect((await fetch(`${base}/ops/executions`)).status).toBe(401); // without the cookie
        await worker.line((v) => v.ready === true);

        const gates = mkdtempSync(join(tmpdir(), 'ts-reactor-live-'));
        dirs.push(gates);
        const { executionId } = await runtime.engine.start(live, { gates, total: 2 });
        const page = await browser.context.newPage();
        page.setDefaultTimeout(DEADLINE);
        let documents = 0;
        page.on('framenavigated', (frame) => {
          if (frame === page.mainFrame()) documents++;
        });
        // The positions of the progress reports the page's stream delivered, as the browser saw them.
        await page.addInitScript(() => {
          const Native = EventSource;
          const delivered: string[] = [];
          Object.assign(globalThis, { progressIds: delivered });
          globalThis.EventSource = class extends Native {
            constructor(url: string | URL, init?: EventSourceInit) {
              super(url, init);
              this.addEventListener('step.progress', (e) => delivered.push((e as MessageEvent).lastEventId));
            }
          };
        });
        await page.goto(`${base}/ops/executions/${executionId}`);
        expect(await page.locator('body').getAttribute('data-stream')).toBe(`/ops/executions/${executionId}/stream`);
        await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));

        // Progress 1 of 2, while the step waits at its first gate: it cannot have gone on.
        await progressOf(page, 'work').filter({ hasText: '{"done":1,"total":2}' }).waitFor();
        expect(await page.locator('body').getAttribute('data-stream-state')).toBe('open');
        await expect.poll(() => stepBadge(page, 'work').textContent(), { timeout: DEADLINE }).toBe('running');
        await expect.poll(() => stepBadge(page, 'prepare').textContent(), { timeout: DEADLINE }).toBe('completed');
        expect(await page.locator('table.trace tr[data-event="step.started"]').count()).toBe(2);

        // The connection drops: the browser reconnects with the position of the last event it saw (that progress report).
        // The page may show the report from its first render before its stream has delivered it: wait for the stream.
        const seen = [];
        for await (const item of runtime.engine.watch(executionId)) {
          seen.push(item);
          if (item.event.type === 'step.progress') break;
        }
        const progressPosition = seen.at(-1)!.position;
        await expect
          .poll(() => page.evaluate(() => (globalThis as { progressIds?: string[] }).progressIds), {
            timeout: DEADLINE,
          })
          .toEqual([progressPosition]);
        expect(lastEventIds).toEqual([null]);
        (server as Server).closeAllConnections();
        await expect.poll(() => lastEventIds, { timeout: DEADLINE }).toEqual([null, progressPosition]);
        await page.locator('body[data-stream-state="open"]').waitFor();

        writeFileSync(gateFile(gates, 1), '');
        await progressOf(page, 'work').filter({ hasText: '{"done":2,"total":2}' }).waitFor();

        writeFileSync(gateFile(gates, 2), '');
        await page.locator('h1[data-execution-status="completed"]').waitFor();
        await page.locator('body[data-stream-state="ended"]').waitFor();
        await expect.poll(() => stepBadge(page, 'work').textContent(), { timeout: DEADLINE }).toBe('completed');
        await expect.poll(() => stepBadge(page, 'finish').textContent(), { timeout: DEADLINE }).toBe('completed');
        await page.locator('table.trace tr[data-event="run.completed"]').waitFor();
        // Each event once in the trace, though the page saw some of them twice (the page, then the stream).
        const rows = await page
          .locator('table.trace tr[data-event]')
          .evaluateAll((trs) =>
            trs.map((tr) =>
              ['data-event', 'data-at', 'data-event-step'].map((name) => tr.getAttribute(name)).join(' '),
            ),
          );
        expect(new Set(rows).size).toBe(rows.length);
        // One document all along; the progress report stays beside its step.
        expect(await page.evaluate(() => (globalThis as { sameDocument?: boolean }).sameDocument)).toBe(true);
        expect(documents).toBe(1);
        expect(await progressOf(page, 'work').textContent()).toBe('{"done":2,"total":2}');
        expect(lastEventIds).toHaveLength(2);
        expect((await runtime.engine.wait(executionId, { timeoutMs: DEADLINE })).status).toBe('completed');
      },
      TEST_BOUND,
    );
  },
  { backends: ['redis', 'postgres'] },
);

describe('without an execution stream', () => {
  test(
    'the page falls back to polling: the stream answers 501 and the page still turns completed',
    async () => {
      let open = (): void => undefined;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const held = reactor('live-held')
        .input({ n: z.number() })
        .step('wait', { run: async () => gate.then(() => 'done') })
        .returns('wait');
      const engine = createEngine({ store: new MemoryStore(), reactors: [held] });
      const running = engine.run(held, { n: 1 });
      await expect.poll(async () => (await engine.list({})).executions.length, { timeout: DEADLINE }).toBe(1);
      const executionId = (await engine.list({})).executions[0]!.executionId;
      const base = await listen(createDashboard({ engine, reactors: [held], refreshSeconds: 1 }).fetch);
      browser = await launchChromium();
      const page = await browser.context.newPage();
      page.setDefaultTimeout(DEADLINE);
      await page.goto(`${base}/executions/${executionId}`);
      await page.locator('body[data-stream-state="unavailable"]').waitFor();
      expect(await page.locator('h1').getAttribute('data-terminal')).toBe('false');
      await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));
      open();
      expect((await running).status).toBe('completed');
      await page.locator('h1[data-execution-status="completed"]').waitFor();
      expect(await page.evaluate(() => (globalThis as { sameDocument?: boolean }).sameDocument)).toBe(true);
    },
    TEST_BOUND,
  );
});
