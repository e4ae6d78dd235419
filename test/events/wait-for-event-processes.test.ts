/**
 * `.waitForEvent` at size, on every backend: 1,000 executions wait for `payment.settled` with
 * distinct order ids; 1,000 events sent from another process (on memory, this process: nothing is
 * shared between processes there) resume each exactly its own execution, with its own amount, and
 * each event records exactly that execution as resumed.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { describeOnBackends } from '../support/backend-matrix.js';
import { spawnJsonChild } from '../support/json-child.js';
import { allReach, checkout, paymentSettled } from './wait-fixtures.js';

const SEND_CHILD = fileURLToPath(new URL('./send-child.ts', import.meta.url));
const WAITS = 1_000;

describeOnBackends('waitForEvent at size', (backend) => {
  const children = new Set<ChildProcess>();
  afterEach(() => {
    for (const child of children) child.kill('SIGKILL');
    children.clear();
  });

  test(`${WAITS} waits with distinct keys: ${WAITS} events from another process resume each exactly its own execution`, async () => {
    const runtime = backend.runtime({ reactors: [checkout] });
    runtime.startWorker({ concurrency: 16 });
    const { engine } = runtime;
    const orderIds = Array.from({ length: WAITS }, (_, i) => `o-${i}`);
    const ids: string[] = [];
    for (let i = 0; i < WAITS; i += 100) {
      const started = await engine.startMany(
        orderIds.slice(i, i + 100).map((orderId) => ({ reactor: checkout, input: { orderId } })),
      );
      ids.push(...started.map((s) => s.executionId));
    }
    await allReach(engine, ids, 'paused', 250_000); // a thousand executions on a loaded machine: within the test's bound
    if (backend.shared) {
      const sender = spawnJsonChild(
        SEND_CHILD,
        { backend: backend.name, address: backend.address(), namespace: runtime.namespace, orderIds },
        children,
      );
      await sender.line((v) => v.ready === true);
      sender.child.stdin?.write('go\n');
      expect(await sender.line<{ sent: number }>((v) => 'sent' in v)).toEqual({ sent: WAITS });
    } else {
      for (let i = 0; i < WAITS; i += 50)
        await engine.sendMany(
          orderIds.slice(i, i + 50).map((orderId, j) => ({
            event: paymentSettled,
            payload: { orderId, amount: i + j },
            options: { id: `pay-${orderId}` },
          })),
        );
    }
    await allReach(engine, ids, 'completed', 250_000);
    for (const [i, id] of ids.entries())
      expect((await engine.result(id))?.status === 'completed' && (await engine.result(id))).toMatchObject({
        value: `o-${i}:${i}`,
      });
    let cursor: string | undefined;
    const resumed = new Map<string, readonly string[]>();
    do {
      const page = await engine.listEvents({ name: 'payment.settled', limit: 500, ...(cursor ? { cursor } : {}) });
      for (const e of page.events) resumed.set(e.id, e.effects.resumed);
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(resumed.size).toBe(WAITS);
    for (const [i, id] of ids.entries()) expect(resumed.get(`pay-o-${i}`)).toEqual([id]);
  }, 600_000);
});
