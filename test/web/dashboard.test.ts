/**
 * The dashboard on the embedded memory backend, through `app.request()`: every page, the JSON
 * API, every action's effect on the execution, the authorization hook, read-only mode and the
 * base path.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { Hono } from 'hono';
import { createDashboard, type DashboardOptions, type DashboardPermission } from '../../src/web/index.js';
import { fixture, until, type Fixture } from './fixtures.js';

let f: Fixture;
const dash = (options: Partial<DashboardOptions> = {}): Hono =>
  createDashboard({
    engine: f.engine,
    coordinator: f.coordinator,
    reactors: [f.payment, f.transfer],
    refreshSeconds: 0,
    ...options,
  });
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  body: new URLSearchParams(fields),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});
const post = (body: unknown) => ({
  method: 'POST',
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json' },
});

async function finished(input: { user: string; password: string; fail?: boolean }) {
  const queued = await f.engine.start(f.payment, input);
  return f.engine.wait(queued.executionId, { timeoutMs: 5_000, pollMs: 5 });
}

/** One transfer holding `account:acme` (its step waits for the test), one parked behind it. */
async function contended() {
  const holder = await f.engine.start(f.transfer, { account: 'acme' });
  await until(
    async () => (await f.coordinator.lockState('account:acme'))?.holder.executionId === holder.executionId,
    'the holder to take the lock',
  );
  const waiter = await f.engine.start(f.transfer, { account: 'acme' });
  await until(async () => (await f.engine.result(waiter.executionId))?.status === 'parked', 'the waiter to park');
  return { holder: holder.executionId, waiter: waiter.executionId };
}

beforeEach(() => {
  f = fixture();
});
afterEach(async () => {
  f.release();
  await f.engine.drain();
  await f.engine.close();
});

describe('pages', () => {
  test('the list shows executions newest first, filters by status (parked apart from failed), reactor and time, and pages', async () => {
    const ok = await finished({ user: 'ada', password: 's3cret' });
    const bad = await finished({ user: 'bob', password: 's3cret', fail: true });
    const { waiter } = await contended();
    const app = dash();
    const all = await (await app.request('/executions')).text();
    expect(all).toContain(ok.executionId);
    expect(all.indexOf(waiter)).toBeLessThan(all.indexOf(bad.executionId));
    const failed = await (await app.request('/executions?status=failed')).text();
    expect(failed).toContain(bad.executionId);
    expect(failed).not.toContain(waiter);
    expect(failed).toContain('failed at <code>charge</code>: card declined');
    const parked = await (await app.request('/executions?status=parked')).text();
    expect(parked).toContain(waiter);
    expect(parked).not.toContain(bad.executionId);
    expect(parked).toContain('waits for lock <code>account:acme</code>');
    const byReactor = await (await app.request('/executions?reactor=payment')).text();
    expect(byReactor).toContain(ok.executionId);
    expect(byReactor).not.toContain(waiter);
    expect(await (await app.request(`/executions?from=${Date.now() + 60_000}`)).text()).toContain(
      'No executions match.',
    );
    expect(await (await app.request(`/executions?to=${new Date(Date.now() - 60_000).toISOString()}`)).text()).toContain(
      'No executions match.',
    );
    const first = await (await app.request('/executions?limit=1&reactor=payment')).text();
    const next = /href="([^"]*cursor=[^"]*)"/.exec(first)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toBeDefined();
    const second = await (await app.request(next!)).text();
    expect(second).toContain(ok.executionId);
    expect(second).not.toContain(bad.executionId);
  });

  test('the detail page shows the graph with step statuses, the input without its secret, attempts, the error with its cause and the trace', async () => {
    const bad = await finished({ user: 'bob', password: 'hunter2', fail: true });
    const res = await dash().request(`/executions/${bad.executionId}`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('<svg class="dag"');
    expect(page).toMatch(/data-step="reserve" data-status="undone"/);
    expect(page).toMatch(/data-step="charge" data-status="failed"/);
    expect(page).toMatch(/data-step="notify" data-status="pending"/);
    expect(page).toMatch(/<tr data-step="reserve">.*completed<\/span> → <span class="badge s-undone">undone/);
    expect(page).not.toContain('hunter2');
    expect(page).toContain('Redacted: password');
    expect(page).toContain('card declined');
    expect(page).toContain('issuer timeout');
    expect(page).toContain('data-event="run.failed"');
    expect(page).toContain('data-event="step.undone"');
    expect(page).toContain('data-action="retry"');
    expect(page).not.toContain('data-action="cancel"');
  });

  test("the detail page shows each attempt with its worker and outcome, a lost worker's included", async () => {
    const ok = await finished({ user: 'ada', password: 's3cret' });
    const record = (await f.engine.store.get(ok.executionId))!;
    const charge = record.steps['charge']!;
    const lost = {
      attempt: 1,
      worker: 'web-1-3981/9tq2m7ad',
      outcome: 'worker_lost' as const,
      startedAt: 1,
      endedAt: 2,
    };
    const runs = [lost, ...(charge.runs ?? []).map((r) => ({ ...r, attempt: r.attempt + 1 }))];
    await f.engine.store.save({
      ...record,
      steps: { ...record.steps, charge: { ...charge, attempts: runs.length, runs } },
    });
    const page = await (await dash().request(`/executions/${ok.executionId}`)).text();
    expect(page).toMatch(
      /data-attempt="1" data-outcome="worker_lost">#1 <span class="badge s-worker_lost">worker_lost<\/span>/,
    );
    expect(page).toContain('started, worker lost: the body may have run');
    expect(page).toContain('web-1-3981/9tq2m7ad');
    // The completed attempt names the embedded engine's worker: this process.
    expect(page).toMatch(new RegExp(`data-attempt="2" data-outcome="succeeded">[^]*?-${process.pid}/`));
  });

  test('a parked execution shows what it waits for and who holds it; the coordination view shows the hold and the waiter', async () => {
    const { holder, waiter } = await contended();
    const app = dash();
    const detail = await (await app.request(`/executions/${waiter}`)).text();
    expect(detail).toContain('Parked on lock <code class="wait-key">account:acme</code>');
    expect(detail).toContain(`href="/executions/${holder}"`);
    const view = await (await app.request('/coordination')).text();
    const row = /<tr data-lock="account:acme">([\s\S]*?)<\/tr>/.exec(view)?.[1] ?? '';
    expect(row).toContain(holder);
    expect(row).toContain('<span class="muted">reactor</span>');
    expect(row).toContain(`data-waiter="${waiter}"`);
    expect(view).not.toContain('(liveness)');
    expect(await (await app.request('/coordination?internal=1')).text()).toContain('(liveness)');
    expect(await (await app.request('/coordination?pattern=nothing*')).text()).toContain('No lock is held.');
  });

  test('a step-level park shows the waiting step in the graph and in the coordination view', async () => {
    const { reactor } = await import('../../src/index.js');
    let open!: () => void;
    const held = new Promise<void>((r) => (open = r));
    const stepLocked = reactor('step-locked')
      .step('prepare', { run: () => 'ready' })
      .step('book', { waitFor: ['prepare'], lock: { key: () => 'ledger' }, run: async () => (await held, 'booked') })
      .build();
    const app = dash({ reactors: [stepLocked] });
    const first = await f.engine.start(stepLocked, {});
    await until(
      async () => (await f.coordinator.lockState('ledger'))?.holder.executionId === first.executionId,
      'the first to hold the ledger',
    );
    const second = await f.engine.start(stepLocked, {});
    await until(async () => (await f.engine.result(second.executionId))?.status === 'parked', 'the second to park');
    const page = await (await app.request(`/executions/${second.executionId}`)).text();
    expect(page).toMatch(/data-step="prepare" data-status="completed"/);
    expect(page).toMatch(/data-step="book" data-status="parked"/);
    expect(page).toContain('at step <code>book</code>');
    const view = await (await app.request('/coordination')).text();
    const row = /<tr data-lock="ledger">([\s\S]*?)<\/tr>/.exec(view)?.[1] ?? '';
    expect(row).toContain('step <code>book</code>');
    expect(row).toContain(`data-waiter="${second.executionId}"`);
    expect(row).toContain('step book · attempt 1');
    open();
  });

  test('an execution parked on a full semaphore is listed under it as waiting, with the free slots', async () => {
    const { reactor } = await import('../../src/index.js');
    await f.coordinator.semaphoreAcquire({
      key: 'exports',
      holder: { owner: 'other', executionId: 'other', reactor: 'export' },
      limit: 1,
      ttlMs: 60_000,
    });
    const limited = reactor('limited')
      .withSemaphore({ key: () => 'exports', limit: 1 })
      .step('s', { run: () => 1 })
      .build();
    const parked = await f.engine.start(limited, {});
    await until(async () => (await f.engine.result(parked.executionId))?.status === 'parked', 'the execution to park');
    const view = (await (await dash({ reactors: [limited] }).request('/api/coordination')).json()) as {
      semaphores: unknown[];
    };
    expect(view.semaphores).toMatchObject([
      {
        key: 'exports',
        limit: 1,
        free: 0,
        holders: [{ owner: 'other', level: 'reactor' }],
        waiting: [{ executionId: parked.executionId, reactor: 'limited', attempt: 1 }],
      },
    ]);
    await f.coordinator.semaphoreRelease('exports', 'other');
    await f.engine.cancel(parked.executionId); // a direct release wakes no one: end it so drain() returns
  });

  test('semaphores, rate windows, period markers and ordered cursors appear with their figures', async () => {
    await f.coordinator.semaphoreAcquire({
      key: 'pool',
      holder: { owner: 'x', executionId: 'x', reactor: 'r', step: 'call' },
      limit: 3,
      ttlMs: 60_000,
    });
    await f.coordinator.rateTake({ id: 'a', windows: [{ key: 'api', limit: 5, periodMs: 60_000 }] });
    await f.coordinator.periodMark({ key: 'daily', bucket: '2026-11-30', ttlMs: 60_000 });
    await f.coordinator.orderedTicket('feed');
    await f.coordinator.orderedTicket('feed');
    const view = await (await dash().request('/coordination')).text();
    expect(view).toMatch(
      /data-semaphore="pool">[\s\S]*1 held \/ 3 · <strong>2 free<\/strong>[\s\S]*step <code>call<\/code>/,
    );
    expect(view).toMatch(/data-rate="api">[\s\S]*<td>1 min 0 s<\/td><td>1<\/td>/);
    expect(view).toMatch(/data-period="daily">[\s\S]*2026-11-30/);
    expect(view).toMatch(/data-ordered="feed">[\s\S]*<td class="next">1<\/td><td class="last-completed">0<\/td>/);
  });

  test('a queued execution is shown and filtered as queued, in the pages and the API; status=pending is its other name', async () => {
    const queued = await f.engine.start(f.payment, { user: 'cy', password: 's3cret' }, { delay: '1h' });
    try {
      const { waiter } = await contended();
      const app = dash();
      for (const name of ['queued', 'pending']) {
        const page = await (await app.request(`/executions?status=${name}`)).text();
        expect(page).toContain(`data-execution="${queued.executionId}" data-status="queued"`);
        expect(page).not.toContain(waiter);
      }
      const list = await (await app.request('/executions')).text();
      expect(list).toMatch(/<option[^>]*>queued<\/option>/);
      expect(list).not.toMatch(/<option[^>]*>pending<\/option>/);
      const api = (await (await app.request('/api/executions?status=queued')).json()) as {
        items: { id: string; status: string }[];
      };
      expect(api.items.map((i) => i.id)).toContain(queued.executionId);
      expect(new Set(api.items.map((i) => i.status))).toEqual(new Set(['queued']));
      expect(await (await app.request(`/executions/${queued.executionId}`)).text()).toContain('s-queued');
    } finally {
      await f.engine.cancel(queued.executionId); // its delayed job would hold the pool's drain
    }
  });

  test('unknown executions and pages are 404; bad filters are 400 with the reason', async () => {
    const app = dash();
    expect((await app.request('/executions/nope')).status).toBe(404);
    expect((await app.request('/elsewhere')).status).toBe(404);
    const bad = await app.request('/executions?status=lost');
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('status: &quot;lost&quot; is not one of');
    expect((await app.request('/executions?from=yesterday-ish')).status).toBe(400);
    expect((await app.request('/')).headers.get('location')).toBe('/executions');
  });
});

describe('actions (each confirmed, each with its effect on the execution and in its trace)', () => {
  test('cancel a parked execution: confirm page, refused unconfirmed, then cancelled with the dashboard named in its trace', async () => {
    const { waiter } = await contended();
    const app = dash();
    const confirm = await app.request(`/executions/${waiter}/actions/cancel`);
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain('<input type="hidden" name="confirm" value="yes">');
    expect((await app.request(`/executions/${waiter}/actions/cancel`, form({}))).status).toBe(400);
    expect((await f.engine.result(waiter))?.status).toBe('parked');
    const done = await app.request(`/executions/${waiter}/actions/cancel`, form({ confirm: 'yes' }));
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toMatch(new RegExp(`^/executions/${waiter}\\?notice=`));
    const record = await f.engine.store.get(waiter);
    expect(record?.status).toBe('cancelled');
    expect(record?.trace?.find((e) => e.type === 'run.cancelled')).toMatchObject({
      reason: 'cancel requested from the dashboard',
    });
    const page = await (await app.request(done.headers.get('location')!)).text();
    expect(page).toContain('Cancel: execution');
    expect(page).toContain('data-event="run.cancelled"');
  });

  test('retry a failed execution: a new linked execution runs; the source trace records run.retried', async () => {
    const bad = await finished({ user: 'bob', password: 'p', fail: true });
    const app = dash();
    const done = await app.request(`/executions/${bad.executionId}/actions/retry`, form({ confirm: 'yes' }));
    expect(done.status).toBe(303);
    const newId = /^\/executions\/([^?]+)\?/.exec(done.headers.get('location') ?? '')?.[1];
    expect(newId).toBeDefined();
    expect(newId).not.toBe(bad.executionId);
    const retried = await f.engine.wait(newId!, { timeoutMs: 5_000, pollMs: 5 });
    expect(retried?.status).toBe('failed'); // same input: it fails again, as a new execution
    expect((await f.engine.store.get(newId!))?.retryOf).toBe(bad.executionId);
    const source = await f.engine.store.get(bad.executionId);
    expect(source?.trace?.at(-1)).toMatchObject({ type: 'run.retried', retryExecutionId: newId });
    expect(await (await app.request(`/executions/${bad.executionId}`)).text()).toContain(`href="/executions/${newId}"`);
  });

  test('undo a completed execution: every undo ran newest first and it ends cancelled', async () => {
    const ok = await finished({ user: 'ada', password: 'p' });
    const app = dash();
    expect(await (await app.request(`/executions/${ok.executionId}`)).text()).toContain('data-action="undo"');
    const done = await app.request(`/executions/${ok.executionId}/actions/undo`, form({ confirm: 'yes' }));
    expect(done.status).toBe(303);
    expect(f.undone).toEqual(['charge:ch-res-ada', 'reserve:res-ada']);
    const record = await f.engine.store.get(ok.executionId);
    expect(record?.status).toBe('cancelled');
    expect(record?.trace?.filter((e) => e.type === 'step.undone').map((e) => (e as { step: string }).step)).toEqual([
      'charge',
      'reserve',
    ]);
  });

  test('an action that does not apply is refused with 409 and changes nothing', async () => {
    const ok = await finished({ user: 'ada', password: 'p' });
    const res = await dash().request(`/executions/${ok.executionId}/actions/cancel`, form({ confirm: 'yes' }));
    expect(res.status).toBe(409);
    expect((await f.engine.store.get(ok.executionId))?.status).toBe('completed');
    expect((await dash().request(`/executions/${ok.executionId}/actions/explode`)).status).toBe(404);
  });

  test('ordered-lock skip and reset move the cursor; the audit hook sees each action', async () => {
    for (let i = 0; i < 3; i++) await f.coordinator.orderedTicket('feed');
    const audit: unknown[] = [];
    const app = dash({ onAction: (r) => audit.push(r) });
    const confirm = await (await app.request('/coordination/ordered/skip?key=feed')).text();
    expect(confirm).toContain('next 1, last completed 0');
    const skipped = await app.request('/coordination/ordered/skip?key=feed', form({ confirm: 'yes' }));
    expect(skipped.status).toBe(303);
    expect(await f.coordinator.orderedState('feed')).toMatchObject({ lastCompleted: 1 });
    const before = (await f.coordinator.orderedState('feed')).epoch;
    expect((await app.request('/coordination/ordered/reset?key=feed', form({ confirm: 'yes' }))).status).toBe(303);
    const after = await f.coordinator.orderedState('feed');
    expect(after.epoch).toBeGreaterThan(before);
    expect(after).toMatchObject({ issued: 0, lastCompleted: 0, drained: true });
    expect(audit).toMatchObject([
      { action: 'skip', target: { type: 'ordered-lock', key: 'feed' } },
      { action: 'reset', target: { type: 'ordered-lock', key: 'feed' } },
    ]);
  });

  test('an added action (the extension point) gets a button, a confirm page with its fields, and runs with them', async () => {
    const ok = await finished({ user: 'ada', password: 'p' });
    const seen: unknown[] = [];
    const app = dash({
      actions: [
        {
          name: 'note',
          label: 'Note',
          description: 'Records a note.',
          appliesTo: (e) => e.status === 'completed',
          fields: [{ name: 'payload', label: 'Payload', kind: 'json', required: true }],
          perform: async ({ execution, fields }) => (
            seen.push(fields),
            { executionId: execution.id, status: execution.status }
          ),
        },
      ],
    });
    expect(await (await app.request(`/executions/${ok.executionId}/actions/note`)).text()).toContain(
      '<textarea name="payload"',
    );
    expect(
      (await app.request(`/executions/${ok.executionId}/actions/note`, form({ confirm: 'yes', payload: '{oops' })))
        .status,
    ).toBe(400);
    expect(
      (await app.request(`/executions/${ok.executionId}/actions/note`, form({ confirm: 'yes', payload: '{"a":1}' })))
        .status,
    ).toBe(303);
    expect(seen).toEqual([{ payload: { a: 1 } }]);
  });
});

describe('JSON API', () => {
  test('serves the same data as the pages', async () => {
    const bad = await finished({ user: 'bob', password: 'hunter2', fail: true });
    const { holder, waiter } = await contended();
    const app = dash();
    const list = (await (await app.request('/api/executions?status=parked')).json()) as {
      items: { id: string; waitingFor: unknown }[];
    };
    expect(list.items.map((i) => i.id)).toEqual([waiter]);
    expect(list.items[0]?.waitingFor).toMatchObject({ primitive: 'lock', key: 'account:acme' });
    const detail = (await (await app.request(`/api/executions/${bad.executionId}`)).json()) as Record<string, unknown>;
    expect(detail).toMatchObject({
      id: bad.executionId,
      status: 'failed',
      failedStep: 'charge',
      input: { user: 'bob', password: '[redacted]' },
      redacted: ['password'],
      actions: ['retry', 'fork'],
    });
    expect(JSON.stringify(detail)).not.toContain('hunter2');
    expect(JSON.stringify(detail)).not.toContain('"stack"');
    expect(detail['error']).toMatchObject({ message: 'card declined', cause: { message: 'issuer timeout' } });
    expect((detail['graph'] as { edges: unknown[] }).edges).toContainEqual({
      from: 'reserve',
      to: 'charge',
      kind: 'result',
    });
    const coordination = (await (await app.request('/api/coordination')).json()) as {
      locks: { key: string; executionId: string; level: string; waiting: { executionId: string }[] }[];
    };
    expect(coordination.locks).toMatchObject([
      { key: 'account:acme', executionId: holder, level: 'reactor', waiting: [{ executionId: waiter }] },
    ]);
    expect((await app.request('/api/executions/none')).status).toBe(404);
    expect(await (await app.request('/api/executions?status=zzz')).json()).toMatchObject({
      error: { code: 'query_invalid' },
    });
  });

  test('performs actions with {"confirm": true} and refuses them without', async () => {
    const { waiter } = await contended();
    const app = dash();
    expect((await app.request(`/api/executions/${waiter}/actions/cancel`, post({}))).status).toBe(400);
    expect((await f.engine.result(waiter))?.status).toBe('parked');
    const res = await app.request(`/api/executions/${waiter}/actions/cancel`, post({ confirm: true }));
    expect(await res.json()).toEqual({ executionId: waiter, status: 'cancelled' });
    await f.coordinator.orderedTicket('q');
    await f.coordinator.orderedTicket('q');
    const skipped = await app.request('/api/ordered-locks/skip?key=q', post({ confirm: true }));
    expect(await skipped.json()).toMatchObject({ key: 'q', lastCompleted: 1, next: 2, drained: false });
    expect(await (await app.request('/api/actions')).json()).toMatchObject({
      readOnly: false,
      execution: [
        { name: 'retry' },
        { name: 'cancel' },
        { name: 'undo' },
        { name: 'resume' },
        { name: 'retry-step' },
        { name: 'skip-step' },
        { name: 'rollback' },
        { name: 'fork' },
      ],
      orderedLock: [{ name: 'skip' }, { name: 'reset' }],
    });
  });
});

describe('authorization, read-only mode, base path', () => {
  test('the hook guards every route with what it is asked: 401 unauthenticated, 403 refused', async () => {
    const { waiter } = await contended();
    const asked: DashboardPermission[] = [];
    const app = dash({
      authorize: (c, permission) => {
        asked.push(permission);
        if (c.req.header('x-user') === undefined) return 'unauthenticated';
        return permission.kind === 'view' || c.req.header('x-user') === 'admin';
      },
    });
    for (const path of [
      '/executions',
      `/executions/${waiter}`,
      '/coordination',
      '/api/executions',
      `/api/executions/${waiter}`,
      '/api/coordination',
      '/api/ordered-locks?key=k',
      '/api/actions',
    ]) {
      expect((await app.request(path)).status, path).toBe(401);
      expect((await app.request(path, { headers: { 'x-user': 'viewer' } })).status, path).toBe(200);
    }
    const viewer = { 'x-user': 'viewer', 'content-type': 'application/x-www-form-urlencoded' };
    expect((await app.request(`/executions/${waiter}/actions/cancel`, { headers: viewer })).status).toBe(403);
    expect(
      (
        await app.request(`/executions/${waiter}/actions/cancel`, {
          method: 'POST',
          headers: viewer,
          body: 'confirm=yes',
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await app.request(`/api/executions/${waiter}/actions/cancel`, {
          method: 'POST',
          headers: { 'x-user': 'viewer', 'content-type': 'application/json' },
          body: '{"confirm":true}',
        })
      ).status,
    ).toBe(403);
    expect(
      (await app.request('/coordination/ordered/skip?key=k', { method: 'POST', headers: viewer, body: 'confirm=yes' }))
        .status,
    ).toBe(403);
    expect((await f.engine.result(waiter))?.status).toBe('parked');
    expect(asked).toContainEqual({ kind: 'action', action: 'cancel', target: { type: 'execution', id: waiter } });
    expect(asked).toContainEqual({ kind: 'action', action: 'skip', target: { type: 'ordered-lock', key: 'k' } });
    const admin = await app.request(`/executions/${waiter}/actions/cancel`, {
      method: 'POST',
      headers: { 'x-user': 'admin', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'confirm=yes',
    });
    expect(admin.status).toBe(303);
    expect((await f.engine.result(waiter))?.status).toBe('cancelled');
  });

  test('a cross-site action is refused, and the API takes only JSON', async () => {
    const { waiter } = await contended();
    const app = dash();
    const headers = (extra: Record<string, string>) => ({
      'content-type': 'application/x-www-form-urlencoded',
      host: 'ops.example.com',
      ...extra,
    });
    const evil = await app.request(`/executions/${waiter}/actions/cancel`, {
      method: 'POST',
      headers: headers({ origin: 'https://evil.example' }),
      body: 'confirm=yes',
    });
    expect(evil.status).toBe(403);
    expect(await evil.text()).toContain('cross-site action refused');
    expect(
      (
        await app.request(`/executions/${waiter}/actions/cancel`, {
          method: 'POST',
          headers: headers({ 'sec-fetch-site': 'cross-site' }),
          body: 'confirm=yes',
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await app.request(`/api/executions/${waiter}/actions/cancel`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: '{"confirm":true}',
        })
      ).status,
    ).toBe(415);
    expect((await f.engine.result(waiter))?.status).toBe('parked');
    const same = await app.request(`/executions/${waiter}/actions/cancel`, {
      method: 'POST',
      headers: headers({ origin: 'https://ops.example.com', 'sec-fetch-site': 'same-origin' }),
      body: 'confirm=yes',
    });
    expect(same.status).toBe(303);
  });

  test('read-only mode hides every action and refuses their routes', async () => {
    const bad = await finished({ user: 'bob', password: 'p', fail: true });
    await f.coordinator.orderedTicket('feed');
    const app = dash({ readOnly: true });
    expect(await (await app.request(`/executions/${bad.executionId}`)).text()).not.toContain('data-action=');
    expect(await (await app.request('/coordination')).text()).not.toContain('data-action=');
    expect((await app.request(`/executions/${bad.executionId}/actions/retry`)).status).toBe(403);
    expect((await app.request(`/executions/${bad.executionId}/actions/retry`, form({ confirm: 'yes' }))).status).toBe(
      403,
    );
    expect(
      (await app.request(`/api/executions/${bad.executionId}/actions/retry`, post({ confirm: true }))).status,
    ).toBe(403);
    expect((await app.request('/api/ordered-locks/reset?key=feed', post({ confirm: true }))).status).toBe(403);
    expect(await (await app.request('/api/actions')).json()).toEqual({
      readOnly: true,
      execution: [],
      orderedLock: [],
    });
    expect((await f.engine.store.list({ reactor: 'payment' })).records).toHaveLength(1);
    expect((await f.coordinator.orderedState('feed')).issued).toBe(1);
  });

  test('a base path prefixes every route and link', async () => {
    const ok = await finished({ user: 'ada', password: 'p' });
    const app = dash({ basePath: '/ops/' });
    expect((await app.request('/executions')).status).toBe(404);
    const list = await (await app.request('/ops/executions')).text();
    expect(list).toContain(`href="/ops/executions/${ok.executionId}"`);
    expect(list).toContain('href="/ops/coordination"');
    const undo = await app.request(`/ops/executions/${ok.executionId}/actions/undo`, form({ confirm: 'yes' }));
    expect(undo.headers.get('location')).toMatch(new RegExp(`^/ops/executions/${ok.executionId}\\?`));
    expect((await app.request('/ops/api/executions')).status).toBe(200);
    expect(() => createDashboard({ engine: f.engine, basePath: '/a b' })).toThrow(RangeError);
  });
});
