/**
 * P8: memory of completed executions retained on Redis. 10,000 executions of a three-step
 * reactor run in-process over `createRedisBackend` (store and coordinator on one throwaway
 * server) with a short configured record TTL. Figures: Redis `used_memory` growth per retained
 * execution (bytes), keys per execution, and whether every byte of that state goes away on its
 * own once the TTL has passed — no sweeper, no flush.
 *
 * Verdict: `pass` when the database is back to its starting key count within the TTL plus a
 * grace of {@link EXPIRY_GRACE_MS} after the last write (Redis expires keys lazily and by
 * sampling, so an expired key may linger briefly). The bytes per execution are reported, with
 * the size of one serialized record beside them as the anchor.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { createEngine, reactor } from '../src/index.js';
import { createRedisBackend } from '../src/storage/redis/index.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { emit, round, type Verdict } from './support/runner.js';

const EXECUTIONS = 10_000;
const IN_FLIGHT = 64;
const RECORD_TTL_MS = 15_000;
const EXPIRY_GRACE_MS = 5_000;
const POLL_MS = 100;

const order = reactor('p8-order')
  .input({ orderId: z.string() })
  .step('reserve', {
    args: ($) => ({ orderId: $.input('orderId') }),
    run: ({ orderId }) => ({ reservation: `r-${orderId}` }),
  })
  .step('charge', {
    args: ($) => ({ reservation: $.result('reserve', 'reservation') }),
    run: ({ reservation }) => ({ chargeId: `c-${reservation}`, amount: 42 }),
  })
  .step('notify', { args: ($) => ({ charge: $.result('charge') }), run: () => true })
  .build();

async function memory(redis: Redis): Promise<{ readonly usedBytes: number; readonly keys: number }> {
  const info = await redis.info('memory');
  const used = /^used_memory:(\d+)/m.exec(info);
  return { usedBytes: Number(used?.[1] ?? 0), keys: await redis.dbsize() };
}

async function runAll(run: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < EXECUTIONS) await run(next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
}

/** Runs P8 and returns its verdict (figures are emitted on the way). */
export async function runP8(): Promise<Verdict> {
  const server = await startRedisServer();
  const probe = new Redis(server.url);
  const backend = createRedisBackend({ url: server.url, recordTtlMs: RECORD_TTL_MS });
  try {
    const engine = createEngine({ store: backend.store, coordinator: backend.coordinator });
    engine.register(order);
    const before = await memory(probe);
    let lastId = '';
    const started = performance.now();
    await runAll(async (i) => {
      const result = await engine.run(order, { orderId: `o-${i}` });
      if (result.status !== 'completed') throw new Error(`execution ${i} ended ${result.status}`);
      lastId = result.executionId;
    });
    const lastWrite = performance.now();
    const after = await memory(probe);
    const recordBytes = Buffer.byteLength(JSON.stringify(await backend.store.get(lastId)));
    const bytesPerExecution = (after.usedBytes - before.usedBytes) / EXECUTIONS;
    emit({
      bench: 'P8',
      phase: 'retained',
      executions: EXECUTIONS,
      seconds: round((lastWrite - started) / 1000, 2),
      bytesPerExecution: Math.round(bytesPerExecution),
      keysPerExecution: round((after.keys - before.keys) / EXECUTIONS, 3),
      recordBytes,
      recordTtlMs: RECORD_TTL_MS,
    });

    let keys = after.keys;
    while (keys > before.keys && performance.now() - lastWrite < RECORD_TTL_MS + EXPIRY_GRACE_MS) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      keys = await probe.dbsize();
    }
    const expiredAfterMs = performance.now() - lastWrite;
    const left = await memory(probe);
    const expired = left.keys <= before.keys;
    emit({
      bench: 'P8',
      phase: 'expired',
      keysLeft: left.keys - before.keys,
      bytesLeftPerExecution: Math.round((left.usedBytes - before.usedBytes) / EXECUTIONS),
      expiredAfterMs: Math.round(expiredAfterMs),
    });
    return {
      bench: 'P8',
      metric: 'bytes_per_retained_execution',
      value: Math.round(bytesPerExecution),
      target: `reported; all state expired within recordTtlMs (${RECORD_TTL_MS} ms) + ${EXPIRY_GRACE_MS} ms`,
      anchor: {
        serializedRecordBytes: recordBytes,
        keysPerExecution: round((after.keys - before.keys) / EXECUTIONS, 3),
        expiredAfterMs: Math.round(expiredAfterMs),
      },
      pass: expired,
    };
  } finally {
    await backend.close();
    probe.disconnect();
    await server.dispose();
  }
}
