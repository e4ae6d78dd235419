/**
 * A stored time past what a `Date` holds (an execution's `startAt`, a job's due time, an event's
 * time), written before starts were bounded or by hand: the dashboard's executions list, its
 * execution page, `/queue` and the JSON API render it clamped instead of failing (decision 114).
 */
import { afterAll, expect, test } from 'vitest';
import { createEngine, MemoryCoordinator, MemoryStore, reactor } from '../../src/index.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { createDashboard } from '../../src/web/index.js';
import { isoTime } from '../../src/ops/time.js';
import { when } from '../../src/cli/ops-format.js';

const memory = createMemoryQueue();
afterAll(() => memory.queue.close?.());

test('an execution and a job due at 1e300: the executions list, the execution page, /queue and the API answer 200', async () => {
  const store = new MemoryStore();
  const far = reactor('far')
    .step('s', { run: () => 1 })
    .build();
  const engine = createEngine({ store, coordinator: new MemoryCoordinator(), queue: memory.queue, reactors: [far] });
  const now = Date.now();
  await store.save({
    v: 1,
    id: 'far-1',
    rootId: 'far-1',
    reactor: 'far',
    status: 'pending',
    input: {},
    steps: {},
    rollbackFailures: [],
    background: { jobs: 1, contention: 0, startAt: 1e300, retryAt: 1e300 },
    trace: [
      {
        type: 'run.queued',
        reactor: 'far',
        executionId: 'far-1',
        rootExecutionId: 'far-1',
        jobId: 'far-1:1',
        delayMs: 1e300,
        reason: 'start',
        at: 1e300,
      } as never,
    ],
    createdAt: now,
    updatedAt: now,
  });
  await memory.queue.enqueue({ v: 1, executionId: 'far-1', reactor: 'far' }, { jobId: 'far-1:1', delayMs: 1e300 });
  const app = createDashboard({ engine, queue: memory.queue, refreshSeconds: 0 });
  for (const path of ['/executions', '/executions/far-1', '/queue', '/api/executions', '/api/queue']) {
    const response = await app.request(path);
    expect(response.status, path).toBe(200);
  }
  const list = await (await app.request('/executions')).text();
  expect(list).toContain('starts at +275760-09-13T00:00:00.000Z');
  expect(await (await app.request('/queue')).text()).toContain('due +275760-09-13 00:00:00.000 UTC');
});

test('isoTime clamps to the range a Date holds; the CLI formats the same way', () => {
  expect(isoTime(1e300)).toBe('+275760-09-13T00:00:00.000Z');
  expect(isoTime(-1e300)).toBe('-271821-04-20T00:00:00.000Z');
  expect(isoTime(Number.NaN)).toBe('—');
  expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
  expect(when(Number.POSITIVE_INFINITY)).toBe('+275760-09-13 00:00');
});
