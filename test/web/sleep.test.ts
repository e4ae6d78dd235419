/**
 * The dashboard and the CLI's list line show an execution sleeping in a worker (docs/time.md#sleeps):
 * the step it sleeps at and its wake time.
 */
import { expect, test } from 'vitest';
import { executionLine } from '../../src/cli/ops-format.js';
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
