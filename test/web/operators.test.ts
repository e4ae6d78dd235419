/**
 * The operators' additions to the dashboard on the embedded memory backend, through
 * `app.request()`: search by execution id, idempotency key, correlation id and input text (never
 * by a redacted secret); the reactor picker; the timeline and the folded trace; bulk cancel and
 * bulk retry with their confirm page; the queue view; the favicon, `/healthz`, `/readyz` and
 * `/metrics`.
 */
import type { Hono } from 'hono';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createDashboard, type DashboardOptions } from '../../src/web/index.js';
import { createEmbeddedEngine, createEngine, MemoryStore, reactor } from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { fixture, gate, until, type Fixture } from './fixtures.js';
import { approvalReactor } from './interrupt-fixtures.js';

let f: Fixture;
const approval = approvalReactor();
const dash = (options: Partial<DashboardOptions> = {}): Hono =>
  createDashboard({
    engine: f.engine,
    coordinator: f.coordinator,
    reactors: [f.payment, f.transfer, approval],
    refreshSeconds: 0,
    ...options,
  });
const form = (fields: [string, string][]) => ({
  method: 'POST',
  body: new URLSearchParams(fields),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

async function finished(input: { user: string; password: string; fail?: boolean }, idempotencyKey?: string) {
  const queued = await f.engine.start(f.payment, input, idempotencyKey === undefined ? {} : { idempotencyKey });
  return f.engine.wait(queued.executionId, { timeoutMs: 5_000, pollMs: 5 });
}

/** One transfer holding `account:acme`, and `n` parked behind it. */
async function parked(n: number): Promise<{ holder: string; waiters: string[] }> {
  const holder = await f.engine.start(f.transfer, { account: 'acme' });
  await until(
    async () => (await f.coordinator.lockState('account:acme'))?.holder.executionId === holder.executionId,
    'the holder to take the lock',
  );
  const waiters: string[] = [];
  for (let i = 0; i < n; i += 1) {
    const waiter = await f.engine.start(f.transfer, { account: 'acme' });
    await until(async () => (await f.engine.result(waiter.executionId))?.status === 'parked', 'a waiter to park');
    waiters.push(waiter.executionId);
  }
  return { holder: holder.executionId, waiters };
}

const rowsOf = (page: string): string[] => [...page.matchAll(/<tr data-execution="([^"]+)"/g)].map((m) => m[1]!);

beforeEach(() => {
  f = fixture();
});
afterEach(async () => {
  f.release();
  await f.engine.drain();
  await f.engine.close();
});

describe('search', () => {
  test('finds an execution by its id, its idempotency key, its correlation id and its input text; a secret never matches', async () => {
    const keyed = await finished({ user: 'ada', password: 'hunter2' }, 'order-7781');
    const other = await finished({ user: 'grace', password: 'x' });
    const paused = await f.engine.start(approval, { orderId: 'o-42' });
    await until(async () => (await f.engine.result(paused.executionId))?.status === 'paused', 'the approval to pause');
    const app = dash();
    const search = async (q: string, extra = '') => {
      const response = await app.request(`/executions?q=${encodeURIComponent(q)}${extra}`);
      expect(response.status).toBe(200);
      return response.text();
    };

    expect(rowsOf(await search('order-7781'))).toEqual([keyed.executionId]);
    expect(await search('order-7781')).toContain('data-match="idempotency_key"');
    expect(rowsOf(await search('approval:o-42'))).toEqual([paused.executionId]);
    expect(await search('approval:o-42')).toContain('data-match="correlation_id"');
    expect(rowsOf(await search(other.executionId))).toEqual([other.executionId]);
    expect(rowsOf(await search('GRACE'))).toEqual([other.executionId]);
    expect(await search('GRACE')).toContain('data-match="input"');
    expect(rowsOf(await search('hunter2'))).toEqual([]);
    expect(rowsOf(await search('order-7781', '&status=failed'))).toEqual([]);
    expect(rowsOf(await search('order-7781', '&reactor=transfer'))).toEqual([]);

    const api = (await (await app.request('/api/executions?q=order-7781')).json()) as {
      items: { id: string; match: string }[];
      window: number;
    };
    expect(api.items.map((i) => [i.id, i.match])).toEqual([[keyed.executionId, 'idempotency_key']]);
    expect(api.window).toBe(1000);
    const tooLong = await app.request(`/api/executions?q=${'x'.repeat(201)}`);
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as { error: { code: string } }).error.code).toBe('query_invalid');
  });

  test('the reactor filter is a picker of the registered reactors', async () => {
    const page = await (await dash().request('/executions?reactor=payment')).text();
    const select = /<select name="reactor">(.*?)<\/select>/s.exec(page)?.[1] ?? '';
    expect([...select.matchAll(/<option[^>]*>([^<]*)<\/option>/g)].map((m) => m[1])).toEqual([
      'any',
      'approval',
      'payment',
      'transfer',
    ]);
    expect(select).toContain('<option selected>payment</option>');
  });
});

describe('execution page', () => {
  test("the timeline draws attempts, the rollback and the undo marks; the trace folds each event's JSON", async () => {
    const bad = await finished({ user: 'bob', password: 'pw', fail: true });
    const page = await (await dash().request(`/executions/${bad.executionId}`)).text();
    const timeline = /<svg class="timeline".*?<\/svg>/s.exec(page)?.[0] ?? '';
    expect(timeline).toContain('data-lane="execution"');
    expect(timeline).toContain('data-lane="reserve"');
    expect(timeline).toContain('data-bar="attempt"');
    expect(timeline).toContain('data-bar="failed"');
    expect(timeline).toContain('data-bar="rollback"');
    expect(timeline).toMatch(/data-bar="(undo|compensate)"/);
    expect(page).toMatch(/<tr data-event="step.failed"[^>]*>.*?<details><summary>JSON<\/summary><pre class="json">/s);
    expect(page).toContain('error: card declined');
  });

  test("a parked execution's timeline shows its park still going", async () => {
    const { waiters } = await parked(1);
    const page = await (await dash().request(`/executions/${waiters[0]}`)).text();
    expect(page).toMatch(/<rect class="bar b-park open" data-bar="park"/);
    expect(page).toContain('parked on lock account:acme');
  });

  test('the returned step carries a "returns" tag inside its box', async () => {
    const ok = await finished({ user: 'ada', password: 'pw' });
    const page = await (await dash().request(`/executions/${ok.executionId}`)).text();
    const charge = /<g class="node[^"]*" data-step="charge".*?<\/g>/s.exec(page)?.[0] ?? '';
    expect(charge).toContain('data-returns="true"');
    expect(charge).toContain('>returns</text>');
    expect(charge).toMatch(/<text x="\d+" y="\d+" fill="#4a5263">completed<\/text>/);
  });
});

describe('bulk actions', () => {
  test('bulk cancel of 3 parked executions goes through a confirm page listing them', async () => {
    const { holder, waiters } = await parked(3);
    const app = dash();
    const list = await (await app.request('/executions?status=parked')).text();
    expect(list).toContain('data-bulk="cancel"');
    for (const id of waiters) expect(list).toContain(`name="id" value="${id}"`);

    const query = new URLSearchParams([['action', 'cancel'], ...waiters.map((id): [string, string] => ['id', id])]);
    const confirm = await app.request(`/executions/bulk?${query.toString()}`);
    expect(confirm.status).toBe(200);
    const confirmPage = await confirm.text();
    expect(confirmPage).toContain('Cancel 3 executions?');
    for (const id of waiters) expect(confirmPage).toContain(`data-bulk-target="${id}" data-applies="true"`);
    for (const w of waiters) expect((await f.engine.result(w))?.status).toBe('parked');

    const unconfirmed = await app.request(
      '/executions/bulk',
      form([
        ['action', 'cancel'],
        ['id', waiters[0]!],
      ]),
    );
    expect(unconfirmed.status).toBe(400);

    const done = await app.request(
      '/executions/bulk',
      form([
        ['confirm', 'yes'],
        ['action', 'cancel'],
        ...waiters.map((id): [string, string] => ['id', id]),
        ['id', holder],
      ]),
    );
    expect(done.status).toBe(200);
    const result = await done.text();
    expect(result).toContain('Cancel: 4 of 4 done.');
    for (const w of waiters) expect((await f.engine.result(w))?.status).toBe('cancelled');
    for (const w of waiters) expect(result).toContain(`data-bulk-result="${w}" data-outcome="done"`);
  });

  test('bulk retry skips what it does not apply to; the API takes ids; read-only refuses it', async () => {
    const bad = await finished({ user: 'bob', password: 'pw', fail: true });
    const ok = await finished({ user: 'ada', password: 'pw' });
    const app = dash();
    const response = await app.request('/api/executions/bulk/retry', {
      method: 'POST',
      body: JSON.stringify({ confirm: true, ids: [bad.executionId, ok.executionId, 'nope'] }),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { results: { id: string; outcome: string; executionId?: string }[] };
    expect(body.results.map((r) => [r.id, r.outcome])).toEqual([
      [bad.executionId, 'done'],
      [ok.executionId, 'skipped'],
      ['nope', 'skipped'],
    ]);
    const retried = body.results[0]!.executionId!;
    expect(retried).not.toBe(bad.executionId);
    await f.engine.wait(retried, { timeoutMs: 5_000, pollMs: 5 });

    const readOnly = dash({ readOnly: true });
    expect((await readOnly.request(`/executions/bulk?action=retry&id=${bad.executionId}`)).status).toBe(403);
    expect(await (await readOnly.request('/executions')).text()).not.toContain('data-bulk=');
    expect((await app.request('/executions/bulk?action=undo&id=x')).status).toBe(404);
    expect((await app.request('/executions/bulk?action=cancel')).status).toBe(400);
  });

  test('the authorize hook is asked for each execution of a bulk action', async () => {
    const { waiters } = await parked(2);
    const asked: string[] = [];
    const app = dash({
      authorize: (_c, p) => {
        if (p.kind === 'action' && p.target.type === 'execution') asked.push(`${p.action}:${p.target.id}`);
        return (
          p.kind === 'view' || (p.kind === 'action' && p.target.type === 'execution' && p.target.id !== waiters[1])
        );
      },
    });
    const response = await app.request(`/executions/bulk?action=cancel&id=${waiters[0]}&id=${waiters[1]}`);
    expect(response.status).toBe(403);
    expect(asked).toEqual([`cancel:${waiters[0]}`, `cancel:${waiters[1]}`]);
  });
});

describe('queue view', () => {
  test('shows counts by state, a delayed job, an active job and the embedded pool with its concurrency (manual clock)', async () => {
    const clock = new ManualClock({ start: Date.UTC(2026, 11, 1, 10), autoAdvance: false });
    const held = gate();
    const slow = reactor('slow')
      .step('work', { run: async () => (await held.promise, 'done') })
      .build();
    const engine = createEmbeddedEngine({ clock, workerConcurrency: 3 });
    try {
      const active = await engine.start(slow, {});
      await until(async () => (await engine.queueInspector.inspectQueue()).counts['active'] === 1, 'the job to start');
      const later = await engine.start(slow, {}, { delay: '1h' });
      const app = createDashboard({ engine, reactors: [slow], refreshSeconds: 0 });
      const page = await (await app.request('/queue')).text();
      expect(page).toMatch(/data-count="delayed"><span class="n">1</);
      expect(page).toMatch(/data-count="active"><span class="n">1</);
      expect(page).toContain('due 2026-12-01 11:00:00.000 UTC (in 1 h 0 min)');
      expect(page).toMatch(new RegExp(`data-job-state="delayed"><td class="mono">${later.executionId}:`));
      expect(page).toMatch(new RegExp(`data-job-state="active"><td class="mono">${active.executionId}:`));
      expect(page).toMatch(/<tr data-worker="embedded pool \(pid \d+\)"><td class="mono">[^<]*<\/td><td>3<\/td>/);
      const api = (await (await app.request('/api/queue')).json()) as {
        counts: Record<string, number>;
        workers: unknown[];
        delayed: { executionId: string; dueAt: number }[];
      };
      expect(api.counts['delayed']).toBe(1);
      expect(api.delayed).toEqual([
        expect.objectContaining({ executionId: later.executionId, dueAt: clock.now() + 3_600_000 }),
      ]);
      expect(api.workers).toHaveLength(1);
    } finally {
      held.open();
      await engine.close(); // drops the delayed job
    }
  });

  test('without a queue the page says how to give one, and the API answers 501', async () => {
    const app = createDashboard({ engine: createEngine({ store: new MemoryStore() }), refreshSeconds: 0 });
    expect(await (await app.request('/queue')).text()).toContain('This dashboard was not given the queue');
    expect((await app.request('/api/queue')).status).toBe(501);
  });
});

describe('favicon, health and metrics', () => {
  test('the favicon is an inline SVG; /healthz answers 200; /readyz follows its checks; /metrics serves the metrics given', async () => {
    let up = true;
    const app = dash({
      readiness: async () => [{ name: 'redis', ok: up, ...(up ? {} : { detail: 'no answer' }) }],
      metrics: { contentType: 'text/plain; version=0.0.4', text: async () => 'ts_reactor_up 1\n' },
      authorize: () => false,
    });
    const icon = await app.request('/favicon.ico');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(await icon.text()).toMatch(/^<svg /);
    expect((await app.request('/favicon.svg')).status).toBe(200);
    expect((await app.request('/healthz')).status).toBe(200);
    expect((await app.request('/readyz')).status).toBe(200);
    up = false;
    const down = await app.request('/readyz');
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ ready: false, checks: [{ name: 'redis', ok: false, detail: 'no answer' }] });
    const metrics = await app.request('/metrics');
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4');
    expect(await metrics.text()).toBe('ts_reactor_up 1\n');
    expect((await dash().request('/metrics')).status).toBe(404);
    expect(await (await dash().request('/executions')).text()).toContain(
      '<link rel="icon" type="image/svg+xml" href="/favicon.svg">',
    );
  });
});
