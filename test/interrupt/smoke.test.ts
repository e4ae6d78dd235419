import { expect, test } from 'vitest';
import { z } from 'zod';
import { reactor } from '../../src/index.js';
import { createTestEngine } from '../../src/testing/index.js';

test('smoke', async () => {
  const r = reactor('approval')
    .input({ orderId: z.string() })
    .step('reserve', { run: () => 'R', undo: () => undefined })
    .interrupt('approve', { waitFor: ['reserve'], payload: { ok: z.boolean() }, maxAttempts: 3, correlationId: (i) => `order:${i.orderId}` })
    .step('ship', { args: ($) => ({ ok: $.result('approve', 'ok') }), run: ({ ok }) => (ok ? 'shipped' : 'kept') })
    .returns('ship');
  const t = createTestEngine();
  const paused = await t.run(r, { orderId: 'o1' });
  console.log(paused.status, JSON.stringify((paused as any).interrupts));
  await expect(t.engine.resume({ correlationId: 'order:o1' }, { ok: 'x' })).rejects.toThrow();
  const done = await t.engine.resume(paused.executionId, { ok: true });
  console.log(done.status, (done as any).value, done.trace.map((e) => e.type).join(','));
});
