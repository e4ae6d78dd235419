/**
 * The dashboard and paused executions, async units and step-level holds, on the embedded memory
 * backend through `app.request()`: resuming an interrupt (HTML and API, a refused payload counted,
 * a valid one completing the run, read-only mode and the hook), a wait for an event shown as such
 * (no resume offered), the paused filter and badge, an
 * async unit as its dispatcher's child with its parked reader, and a step-level semaphore hold.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { Hono } from 'hono';
import type { ExecutionRecord } from '../../src/index.js';
import {
  createDashboard,
  type DashboardOptions,
  type DashboardPermission,
  type ExecutionDetail,
} from '../../src/web/index.js';
import { fixture, gate, until, type Fixture } from './fixtures.js';
import {
  approvalReactor,
  asyncOrderReactor,
  paymentSettled,
  paymentWaitReactor,
  stepSemaphoreReactor,
} from './interrupt-fixtures.js';

let f: Fixture;
let held: ReturnType<typeof gate>;
const approval = approvalReactor();
const paymentWait = paymentWaitReactor();
const dash = (options: Partial<DashboardOptions> = {}): Hono =>
  createDashboard({
    engine: f.engine,
    coordinator: f.coordinator,
    reactors: [approval, paymentWait],
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
const record = async (id: string): Promise<ExecutionRecord> => (await f.engine.store.get(id))!;

/** An approval run in a worker, paused at `approve`. */
async function paused(orderId = 'o-1'): Promise<string> {
  const queued = await f.engine.start(approval, { orderId });
  await until(async () => (await record(queued.executionId))?.status === 'paused', 'the run to pause');
  return queued.executionId;
}

beforeEach(() => {
  f = fixture();
  held = gate();
});
afterEach(async () => {
  f.release();
  held.open();
  await f.engine.drain();
  await f.engine.close();
});

describe('resume an interrupt', () => {
  test('the detail page lists the interrupt it waits at, with its correlation id, timeout and a resume button', async () => {
    const id = await paused();
    const page = await (await dash().request(`/executions/${id}`)).text();
    const row = /<tr data-interrupt="approve">([\s\S]*?)<\/tr>/.exec(page)?.[1] ?? '';
    expect(row).toContain('<code>approval:o-1</code>');
    expect(row).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC<\/td><td>\d{4}-/); // paused at, then the timeout
    expect(row).toContain('0 of 2');
    expect(row).toContain(`href="/executions/${id}/actions/resume?step=approve"`);
    expect(page).toMatch(/data-step="approve" data-status="paused"/);
    expect(page).toContain('<span class="badge s-paused">paused</span>');
    expect(page).toMatch(
      /<tr data-step="approve"><td><code>approve<\/code><\/td><td><span class="badge s-paused">paused<\/span>/,
    );
    const confirm = await (await dash().request(`/executions/${id}/actions/resume?step=approve`)).text();
    expect(confirm).toContain('name="step" size="60" value="approve"');
    expect(confirm).toContain('<textarea name="payload"');
    const api = (await (await dash().request(`/api/executions/${id}`)).json()) as ExecutionDetail & {
      actions: string[];
    };
    expect(api.actions).toContain('resume');
    expect(api.interrupts).toEqual([
      {
        step: 'approve',
        correlationId: 'approval:o-1',
        pausedAt: expect.any(Number),
        timeoutAt: expect.any(Number),
        invalidAttempts: 0,
        maxAttempts: 2,
      },
    ]);
  });

  test('a wait for an event shows its event and match key, and offers no resume; the event resumes it', async () => {
    const run = await f.engine.run(paymentWait, { orderId: 'o-7' });
    expect(run.status).toBe('paused');
    const id = run.executionId;
    const page = await (await dash().request(`/executions/${id}`)).text();
    expect(page).toContain('<h2>Waiting for event <code>payment.settled</code></h2>');
    const row = /<tr data-event-wait="payment">([\s\S]*?)<\/tr>/.exec(page)?.[1] ?? '';
    expect(row).toContain('<td><code>payment.settled</code></td><td><code>[&quot;o-7&quot;]</code></td>');
    expect(row).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC<\/td><td>none<\/td>$/); // paused at, then no timeout
    expect(page).not.toContain('data-interrupt=');
    expect(page).not.toContain('data-action="resume"');
    expect(page).not.toContain('Waiting for a resume');
    expect(page).toMatch(
      /<tr data-step="payment"><td><code>payment<\/code><\/td><td><span class="badge s-paused">paused<\/span>/,
    );
    const api = (await (await dash().request(`/api/executions/${id}`)).json()) as ExecutionDetail & {
      actions: string[];
    };
    expect(api.actions).not.toContain('resume');
    expect(api.interrupts).toEqual([
      {
        step: 'payment',
        pausedAt: expect.any(Number),
        invalidAttempts: 0,
        event: { name: 'payment.settled', matchKey: '["o-7"]' },
      },
    ]);
    expect((await dash().request(`/executions/${id}/actions/resume`)).status).toBe(409); // the action does not apply
    const list = await (await dash().request('/executions?status=paused')).text();
    expect(list).toContain('waiting for event <code>payment.settled</code> at <code>payment</code>');
    // An interrupt beside it keeps its resume button.
    const other = await paused('o-8');
    expect(await (await dash().request(`/executions/${other}`)).text()).toContain('data-action="resume"');
    await f.engine.send(paymentSettled, { orderId: 'o-7', amount: 5 });
    await until(async () => (await record(id)).status === 'completed', 'the wait to be resumed', 60_000);
  });

  test('HTML: an invalid payload comes back on the confirm page with the typed error and is counted; a valid one completes the run', async () => {
    const id = await paused();
    const app = dash();
    const bad = await app.request(
      `/executions/${id}/actions/resume`,
      form({ confirm: 'yes', step: 'approve', payload: '{"approved":"yes"}' }),
    );
    expect(bad.status).toBe(422);
    const problem = await bad.text();
    expect(problem).toMatch(
      /<div class="error problem">execution \S+, interrupt &quot;approve&quot;: invalid payload \(approved: .*invalid attempt 1 of 2, 1 attempt\(s\) left<\/div>/,
    );
    expect(problem).toContain('{&quot;approved&quot;:&quot;yes&quot;}</textarea>');
    expect((await record(id)).status).toBe('paused');
    expect((await record(id)).interrupts?.[0]?.invalidAttempts).toBe(1);
    expect(await (await app.request(`/executions/${id}`)).text()).toContain('1 of 2');
    const notJson = await app.request(
      `/executions/${id}/actions/resume`,
      form({ confirm: 'yes', payload: '{approved' }),
    );
    expect(notJson.status).toBe(400);
    expect(await notJson.text()).toContain('Payload (JSON) is not valid JSON');
    expect((await record(id)).interrupts?.[0]?.invalidAttempts).toBe(1);
    const good = await app.request(
      `/executions/${id}/actions/resume`,
      form({ confirm: 'yes', step: 'approve', payload: '{"approved":true,"approver":"ann"}' }),
    );
    expect(good.status).toBe(303);
    expect(decodeURIComponent(good.headers.get('location') ?? '')).toContain(`Resume: execution ${id} is completed.`);
    const done = await record(id);
    expect(done.status).toBe('completed');
    expect(done.value).toBe('paid, approved by ann');
    const page = await (await app.request(`/executions/${id}`)).text();
    expect(page).toContain('data-event="interrupt.payload_invalid"');
    expect(page).toContain('data-event="interrupt.resumed"');
    expect(page).not.toContain('data-action="resume"');
  });

  test('API: a refused payload is 422 with the error as JSON; the last allowed one fails the run; a second resume is refused', async () => {
    const app = dash();
    const id = await paused('o-2');
    const first = await app.request(
      `/api/executions/${id}/actions/resume`,
      post({ confirm: true, payload: { approved: 1 } }),
    );
    expect(first.status).toBe(422);
    expect(await first.json()).toMatchObject({
      error: {
        name: 'ResumePayloadError',
        code: 'resume_payload_invalid',
        details: { attempt: 1, maxAttempts: 2, exhausted: false, step: 'approve' },
      },
    });
    const last = await app.request(`/api/executions/${id}/actions/resume`, post({ confirm: true, payload: {} }));
    expect(await last.json()).toMatchObject({
      error: { code: 'resume_payload_invalid', details: { attempt: 2, exhausted: true } },
    });
    expect((await record(id)).status).toBe('failed');
    const late = await app.request(
      `/api/executions/${id}/actions/resume`,
      post({ confirm: true, payload: { approved: true, approver: 'ann' } }),
    );
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ error: { code: 'execution_state' } });

    const other = await paused('o-3');
    const ok = await app.request(
      `/api/executions/${other}/actions/resume`,
      post({ confirm: true, payload: { approved: false, approver: 'bob' } }),
    );
    expect(await ok.json()).toEqual({ executionId: other, status: 'completed' });
    expect((await record(other)).value).toBe('refused');
    const wrongStep = await paused('o-4');
    const refused = await app.request(
      `/api/executions/${wrongStep}/actions/resume`,
      post({ confirm: true, step: 'pay', payload: { approved: true, approver: 'x' } }),
    );
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      error: { name: 'ResumeRefusedError', code: 'resume_refused', details: { reason: 'no_such_interrupt' } },
    });
    expect((await record(wrongStep)).status).toBe('paused');
  });

  test('read-only mode and the hook guard it; the list filters paused apart from parked and failed', async () => {
    const id = await paused();
    const ro = dash({ readOnly: true });
    expect(await (await ro.request(`/executions/${id}`)).text()).not.toContain('data-action="resume"');
    expect((await ro.request(`/executions/${id}/actions/resume`)).status).toBe(403);
    expect(
      (
        await ro.request(
          `/executions/${id}/actions/resume`,
          form({ confirm: 'yes', payload: '{"approved":true,"approver":"a"}' }),
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await ro.request(
          `/api/executions/${id}/actions/resume`,
          post({ confirm: true, payload: { approved: true, approver: 'a' } }),
        )
      ).status,
    ).toBe(403);
    const asked: DashboardPermission[] = [];
    const guarded = dash({ authorize: (_c, p) => (asked.push(p), p.kind === 'view') });
    expect(
      (
        await guarded.request(
          `/api/executions/${id}/actions/resume`,
          post({ confirm: true, payload: { approved: true, approver: 'a' } }),
        )
      ).status,
    ).toBe(403);
    expect(asked).toContainEqual({ kind: 'action', action: 'resume', target: { type: 'execution', id } });
    expect((await record(id)).status).toBe('paused');
    expect((await record(id)).interrupts?.[0]?.invalidAttempts).toBe(0);

    const parked = await f.engine.start(f.transfer, { account: 'acme' });
    await until(
      async () => (await f.coordinator.lockState('account:acme'))?.holder.executionId === parked.executionId,
      'the transfer to hold its lock',
    );
    const list = async (status: string) =>
      (await dash({ reactors: [approval, f.transfer] }).request(`/executions?status=${status}`)).text();
    const pausedList = await list('paused');
    expect(pausedList).toMatch(
      new RegExp(
        `data-execution="${id}" data-status="paused"[\\s\\S]*paused at interrupt <code>approve</code> \\(approval:o-1\\)`,
      ),
    );
    expect(pausedList).not.toContain(parked.executionId);
    expect(await list('running')).not.toContain(id);
    expect(await list('failed')).not.toContain(id);
  });
});

describe('async units and step-level holds', () => {
  test("an async unit shows as its dispatcher's child, and the parked reader shows it waits for the unit", async () => {
    const order = asyncOrderReactor(held.promise);
    const app = dash({ reactors: [order] });
    const run = await f.engine.start(order, { orderId: 'o-9' });
    const unitId = `${run.executionId}~charge`;
    await until(
      async () => (await record(run.executionId))?.background?.waitingFor?.primitive === 'async',
      'the reader to park on the unit',
    );
    const page = await (await app.request(`/executions/${run.executionId}`)).text();
    const child = /<tr data-child="([^"]+)">([\s\S]*?)<\/tr>/.exec(page);
    expect(child?.[1]).toBe(unitId);
    expect(child?.[2]).toContain('async unit of step <code>charge</code>');
    expect(page).toContain(
      `Parked on the async unit <a class="mono" href="/executions/${encodeURIComponent(unitId)}">${unitId}</a>`,
    );
    expect(page).toContain("it resumes when the unit's record is terminal");
    expect(page).not.toContain('no holder right now');
    expect(page).toContain('; park 1;');
    const list = await (await app.request('/executions?status=parked')).text();
    expect(list).toContain(`waits for async unit <code>${unitId}</code> (attempt 1)`);
    const unit = await (await app.request(`/executions/${encodeURIComponent(unitId)}`)).text();
    expect(unit).toContain(`parent <a class="mono" href="/executions/${run.executionId}">`);
    held.open();
    await until(async () => (await record(run.executionId)).status === 'completed', 'the run to complete');
    expect((await record(run.executionId)).value).toBe('receipt for ch-o-9');
  });

  test('a step-level semaphore hold names its step, and an execution parked on it is its waiter', async () => {
    const exporter = stepSemaphoreReactor(held.promise);
    const app = dash({ reactors: [exporter] });
    const first = await f.engine.start(exporter, {});
    await until(
      async () => (await f.coordinator.semaphoreState('exports')).holders.length === 1,
      'the first to take the slot',
    );
    const second = await f.engine.start(exporter, {});
    await until(async () => (await record(second.executionId)).status === 'parked', 'the second to park');
    const view = (await (await app.request('/api/coordination')).json()) as {
      semaphores: { key: string; holders: unknown[]; waiting: unknown[] }[];
    };
    expect(view.semaphores).toEqual([
      expect.objectContaining({
        key: 'exports',
        free: 0,
        holders: [expect.objectContaining({ executionId: first.executionId, step: 'export', level: 'step' })],
        waiting: [expect.objectContaining({ executionId: second.executionId, step: 'export' })],
      }),
    ]);
    const html = await (await app.request('/coordination')).text();
    const row = /<tr data-semaphore="exports">([\s\S]*?)<\/tr>/.exec(html)?.[1] ?? '';
    expect(row).toContain('step <code>export</code>');
    expect(row).toContain(`data-waiter="${second.executionId}"`);
    expect(row).toContain('step export · attempt 1');
  });
});
