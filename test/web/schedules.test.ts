/**
 * The dashboard's schedules page: the list with next runs, the remove confirm page and post,
 * read-only mode, the authorize hook, and `GET /api/schedules`.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createEmbeddedEngine, reactor, type EmbeddedEngine } from '../../src/index.js';
import { ManualClock } from '../../src/testing/clock.js';
import { createDashboard, type DashboardPermission } from '../../src/web/index.js';

const nightly = reactor('nightly-report')
  .step('run', { run: () => 'done' })
  .returns('run');

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  body: new URLSearchParams(fields),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

let engine: EmbeddedEngine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

async function withSchedules(): Promise<EmbeddedEngine> {
  engine = createEmbeddedEngine({ reactors: [nightly] });
  await engine.schedules.upsert({
    id: 'berlin',
    reactor: nightly,
    cron: { pattern: '0 2 * * *', tz: 'Europe/Berlin' },
  });
  await engine.schedules.upsert({ id: 'hourly', reactor: nightly, every: '1h', input: { region: 'eu' } });
  return engine;
}

describe('dashboard: schedules', () => {
  test('a schedule whose latest tick failed shows the failure until a tick starts its execution', async () => {
    const T0 = Date.UTC(2026, 0, 1);
    const clock = new ManualClock({ start: T0, autoAdvance: false });
    const order = reactor('sched-order')
      .input({ orderId: z.string().min(1) })
      .step('take', { args: ($) => ({ id: $.input('orderId') }), run: ({ id }) => id })
      .returns('take');
    let orderId = '';
    const e = (engine = createEmbeddedEngine({
      clock,
      reactors: [order],
      scheduleInputs: { computed: () => ({ orderId }) },
    }));
    await e.schedules.upsert({ id: 'orders', reactor: order, every: '1s', inputFrom: 'computed' });
    const app = createDashboard({ engine: e, schedules: e.schedules });
    const settle = async (at: number): Promise<void> => {
      clock.set(at);
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      await e.schedules.idle();
      await e.drain();
    };
    await settle(T0 + 1_000);
    const failing = await (await app.request('/schedules')).text();
    expect(failing).toMatch(/<td class="last-failure" data-failed="input_invalid">/);
    expect(failing).toContain('orderId');
    const api = (await (await app.request('/api/schedules')).json()) as {
      items: { id: string; lastFailure?: { tickAt: number; code?: string } }[];
    };
    expect(api.items[0]?.lastFailure).toMatchObject({ tickAt: T0 + 1_000, code: 'input_invalid' });
    orderId = 'o-1';
    await settle(T0 + 2_000);
    const fine = await (await app.request('/schedules')).text();
    expect(fine).toContain('<td class="last-failure"></td>');
    expect(fine).not.toContain('data-failed');
  });

  test('the page lists id, reactor, spec and next runs; remove goes through a confirm page', async () => {
    const e = await withSchedules();
    const app = createDashboard({ engine: e, schedules: e.schedules });
    const listed = await (await app.request('/schedules')).text();
    expect(listed).toContain('href="/schedules">Schedules</a>');
    expect(listed).toContain('data-schedule="berlin"');
    expect(listed).toContain('cron 0 2 * * * (Europe/Berlin)');
    expect(listed).toContain('every 3600000 ms');
    expect(listed.match(/<td class="next-runs">(.*?)<\/td>/)?.[1]?.match(/<div>/g)).toHaveLength(3);
    expect(listed).toContain('data-action="remove-schedule"');

    const api = (await (await app.request('/api/schedules?runs=2')).json()) as {
      items: { id: string; nextRuns: string[] }[];
    };
    expect(api.items.map((s) => [s.id, s.nextRuns.length])).toEqual([
      ['berlin', 2],
      ['hourly', 2],
    ]);

    const confirm = await (await app.request('/schedules/hourly/remove')).text();
    expect(confirm).toContain('Remove schedule hourly');
    expect((await app.request('/schedules/hourly/remove', form({}))).status).toBe(400);
    const done = await app.request('/schedules/hourly/remove', form({ confirm: 'yes' }));
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/schedules?notice=Schedule%20hourly%20removed.');
    expect((await e.schedules.list()).map((s) => s.id)).toEqual(['berlin']);
    expect((await app.request('/schedules/hourly/remove')).status).toBe(404);
  });

  test('read-only: no remove button, the removal refused; the authorize hook is asked', async () => {
    const e = await withSchedules();
    const asked: DashboardPermission[] = [];
    const app = createDashboard({
      engine: e,
      schedules: e.schedules,
      readOnly: true,
      authorize: (_c, permission) => (asked.push(permission), true),
    });
    expect(await (await app.request('/schedules')).text()).not.toContain('data-action="remove-schedule"');
    expect((await app.request('/schedules/berlin/remove', form({ confirm: 'yes' }))).status).toBe(403);
    expect((await e.schedules.list()).length).toBe(2);
    expect(asked).toContainEqual({ kind: 'view', page: 'schedules' });
    expect(asked).toContainEqual({
      kind: 'action',
      action: 'remove-schedule',
      target: { type: 'schedule', id: 'berlin' },
    });
  });

  test('without schedules there is no Schedules link and no page', async () => {
    engine = createEmbeddedEngine();
    const app = createDashboard({ engine });
    expect(await (await app.request('/executions')).text()).not.toContain('>Schedules</a>');
    expect((await app.request('/schedules')).status).toBe(404);
  });
});
