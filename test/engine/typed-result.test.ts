/**
 * The typed result by id: `engine.start` resolves with a result that also reads and waits for
 * its own execution (`result()`, `wait()`), and `engine.result(id, reactor)` /
 * `engine.wait(id, reactor)` refuse a record of another reactor with
 * `ExecutionReactorMismatchError` — on the embedded engine, the test engine and the Redis runtime.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime } from '../../src/bullmq.js';
import {
  createEmbeddedEngine,
  ExecutionNotFoundError,
  errorFromJSON,
  errorToJSON,
  ExecutionReactorMismatchError,
  reactor,
  type Engine,
} from '../../src/index.js';
import { createTestEngine } from '../../src/testing/index.js';
import { useRedisServer } from '../support/use-redis-server.js';

const order = reactor('typed-order')
  .input({ orderId: z.string() })
  .step('charge', { args: ($) => ({ id: $.input('orderId') }), run: ({ id }) => ({ chargeId: `ch-${id}` }) })
  .returns('charge');
const other = reactor('typed-other')
  .step('noop', { run: () => 1 })
  .returns('noop');

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

/** The same checks on any engine whose background work runs without help (`settle` drives it otherwise). */
async function checkTypedResult(engine: Engine, settle: () => Promise<void> = async () => undefined): Promise<void> {
  const started = await engine.start(order, { orderId: 'o-1' });
  expect(started.status).toBe('queued');
  // The handle's methods are not part of the plain result.
  expect(Object.keys(started)).not.toContain('wait');
  expect(JSON.parse(JSON.stringify(started))).not.toHaveProperty('result');
  await settle();
  const done = await started.wait({ timeoutMs: 20_000 });
  expect(done).toMatchObject({ status: 'completed', value: { chargeId: 'ch-o-1' } });
  expect(await started.result()).toMatchObject({ status: 'completed', value: { chargeId: 'ch-o-1' } });
  expect(await engine.result(started.executionId, order)).toMatchObject({ status: 'completed' });
  expect(await engine.wait(started.executionId, order, { timeoutMs: 1_000 })).toMatchObject({ status: 'completed' });

  const mismatch = await engine.result(started.executionId, other).catch((e: unknown) => e);
  expect(mismatch).toBeInstanceOf(ExecutionReactorMismatchError);
  expect(mismatch).toMatchObject({
    code: 'execution_reactor_mismatch',
    details: { executionId: started.executionId, expected: 'typed-other', actual: 'typed-order' },
  });
  const revived = errorFromJSON(JSON.parse(JSON.stringify(errorToJSON(mismatch))));
  expect(revived).toBeInstanceOf(ExecutionReactorMismatchError);
  await expect(engine.wait(started.executionId, other)).rejects.toBeInstanceOf(ExecutionReactorMismatchError);

  // Unknown ids: result answers undefined, wait rejects, with or without the reactor.
  expect(await engine.result('no-such-id', order)).toBeUndefined();
  await expect(engine.wait('no-such-id', order)).rejects.toBeInstanceOf(ExecutionNotFoundError);
  // A second argument that is not a reactor is refused before anything is read.
  await expect(engine.result(started.executionId, {} as never)).rejects.toBeInstanceOf(TypeError);

  // An invalid input writes no record: the handle reads none.
  const invalid = await engine.start(order, { orderId: 7 } as never);
  expect(invalid.status).toBe('failed');
  expect(await invalid.result()).toBeUndefined();

  // startMany: each result is a handle of its own entry's execution, as start's.
  const many = await engine.startMany([
    { reactor: order, input: { orderId: 'o-2' } },
    { reactor: other, input: {} },
    { reactor: order, input: { orderId: 8 } as never },
  ]);
  expect(many.map((m) => m.status)).toEqual(['queued', 'queued', 'failed']);
  expect(Object.keys(many[0])).not.toContain('wait');
  expect(JSON.parse(JSON.stringify(many[0]))).not.toHaveProperty('result');
  await settle();
  expect(await many[0].wait({ timeoutMs: 20_000 })).toMatchObject({
    status: 'completed',
    value: { chargeId: 'ch-o-2' },
  });
  expect(await many[1].wait({ timeoutMs: 20_000 })).toMatchObject({
    executionId: many[1].executionId,
    status: 'completed',
    value: 1,
  });
  expect(await many[0].result()).toMatchObject({ executionId: many[0].executionId, status: 'completed' });
  expect(await many[2].result()).toBeUndefined();
}

describe('a typed result by id', () => {
  test('on the embedded engine', async () => {
    const engine = createEmbeddedEngine({ reactors: [order, other] });
    closers.push(() => engine.close());
    await checkTypedResult(engine);
  });

  test('on the test engine', async () => {
    const t = createTestEngine({ reactors: [order, other] });
    closers.push(() => t.close());
    await checkTypedResult(t.engine, () => t.drain());
  });

  test('on the Redis runtime', async () => {
    const runtime = createRedisRuntime({ url: server.url, prefix: 'typed', reactors: [order, other] });
    closers.push(() => runtime.close());
    runtime.startWorker({ concurrency: 2 });
    await checkTypedResult(runtime.engine);
  });
});
