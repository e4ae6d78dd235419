/**
 * The dashboard and the CLI's list line show an execution sleeping in a worker (docs/time.md#sleeps):
 * the step it sleeps at and its wake time.
 */
import { expect, test } from 'vitest';
import { executionLine, executionText } from '../../src/cli/ops-format.js';
import { reactor } from '../../src/index.js';
import { createReadModel } from '../../src/ops/index.js';
import { ManualClock, createTestEngine } from '../../src/testing/index.js';
import { createDashboard } from '../../src/web/index.js';

test('a sleeping execution: the list and its page show the step and the wake time', async () => {
  const clock = new ManualClock({ autoAdvance: false });
  const t = createTestEngine({ clock });
  const r = reactor('napper')
    .step('before', { run: () => 1 })
    .sleep('nap', { for: '1d', waitFor: ['before'] })
    .build();
  const queued = await t.run(r, {});
  for (let i = 0; i < 1_000 && (await t.engine.store.get(queued.executionId))?.status !== 'parked'; i++)
    await new Promise((resolve) => setImmediate(resolve));
  const wakeAt = new Date(clock.now() + 86_400_000).toISOString();
  const app = createDashboard({ engine: t.engine, coordinator: t.coordinator, reactors: [r], refreshSeconds: 0 });
  const list = await (await app.request('/executions')).text();
  expect(list).toContain(`sleeping at <code>nap</code> until ${wakeAt}`);
  const detail = await (await app.request(`/executions/${queued.executionId}`)).text();
  expect(detail).toContain('Sleeping at step <code>nap</code> until');
  const model = createReadModel({ store: t.engine.store, reactors: [r] });
  const summary = (await model.executions()).items.find((e) => e.id === queued.executionId)!;
  expect(executionLine(summary)).toContain(`sleeping at nap until ${wakeAt}`);
});

test("a sleep step's times read as dates on its page and in executions show; the record keeps the numbers", async () => {
  const clock = new ManualClock({ autoAdvance: false });
  const t = createTestEngine({ clock });
  const r = reactor('napper-times')
    .step('before', { run: () => 1 })
    .sleep('nap', { for: '1d', waitFor: ['before'] })
    .build();
  const queued = await t.run(r, {});
  const id = queued.executionId;
  for (let i = 0; i < 1_000 && (await t.engine.store.get(id))?.status !== 'parked'; i++)
    await new Promise((resolve) => setImmediate(resolve));
  const wakeMs = clock.now() + 86_400_000;
  const wakeAt = new Date(wakeMs).toISOString();
  const app = createDashboard({ engine: t.engine, coordinator: t.coordinator, reactors: [r], refreshSeconds: 0 });
  const model = createReadModel({ store: t.engine.store, reactors: [r] });
  const sleeping = await (await app.request(`/executions/${id}`)).text();
  expect(sleeping).toMatch(new RegExp(`<tr data-step="nap">.*sleeps until <time datetime="${wakeAt}">`, 's'));
  expect(executionText((await model.execution(id))!)).toContain(`      sleeps until ${wakeAt}`);

  expect(await t.engine.wake(id)).toBe(true);
  for (let i = 0; i < 1_000 && (await t.engine.store.get(id))?.status !== 'completed'; i++)
    await new Promise((resolve) => setImmediate(resolve));
  const record = await t.engine.store.get(id);
  expect(record?.status).toBe('completed');
  const stored = record!.steps['nap']!.result as { wakeAt: number; wokeAt: number; early: boolean };
  expect(stored).toEqual({ wakeAt: wakeMs, wokeAt: clock.now(), early: true }); // numbers, as stored
  const wokeAt = new Date(stored.wokeAt).toISOString();
  const page = await (await app.request(`/executions/${id}`)).text();
  const row = /<tr data-step="nap">(.*?)<\/tr>/s.exec(page)?.[1] ?? '';
  expect(row).toContain(wakeAt);
  expect(row).toContain(wokeAt);
  expect(row).not.toContain(String(wakeMs));
  const shown = executionText((await model.execution(id))!);
  expect(shown).toContain(`      woke ${wokeAt} (wake time ${wakeAt}, woken early)`);
  expect(shown.join('\n')).not.toContain(String(wakeMs));
});
