import { expect, test } from 'vitest';
import { createEmbeddedEngine, reactor } from '../../src/index.js';

test('in a worker, brief contention is waited out on the release notification: the key is handed over without parking', async () => {
  const engine = createEmbeddedEngine({ background: { parkFallbackMs: 60_000 } }); // workerWaitMs: default 250 ms
  const r = reactor('short')
    .withLock({ key: () => 'hand-over' })
    .step('s', { run: () => new Promise((resolve) => setTimeout(resolve, 20)) })
    .build();
  const started = await Promise.all([engine.start(r, {}), engine.start(r, {}), engine.start(r, {})]);
  const results = await Promise.all(started.map((s) => engine.wait(s.executionId, { timeoutMs: 5_000 })));
  expect(results.map((x) => x?.status)).toEqual(['completed', 'completed', 'completed']);
  for (const x of results) expect(x?.trace.some((e) => e.type === 'run.parked')).toBe(false);
  await engine.close();
});

test('with workerWaitMs 0 the same contention parks, and the release wakes it', async () => {
  const engine = createEmbeddedEngine({ background: { parkFallbackMs: 60_000, workerWaitMs: 0 } });
  const r = reactor('short')
    .withLock({ key: () => 'park-now' })
    .step('s', { run: () => new Promise((resolve) => setTimeout(resolve, 20)) })
    .build();
  const started = await Promise.all([engine.start(r, {}), engine.start(r, {})]);
  const results = await Promise.all(started.map((s) => engine.wait(s.executionId, { timeoutMs: 5_000 })));
  expect(results.map((x) => x?.status)).toEqual(['completed', 'completed']);
  expect(results.some((x) => x?.trace.some((e) => e.type === 'run.parked'))).toBe(true);
  await engine.close();
});
