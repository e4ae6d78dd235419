/**
 * A fan-out map of 100,000 elements on Redis (a throwaway redis-server) and BullMQ, over 3 real
 * worker processes: the element records are written and read a chunk at a time, the first batch
 * is enqueued in bulk, each element settles in constant time, and the parked run is woken once,
 * by the settlement that finishes the map (its fallback is out of reach). Under the default
 * record limit: the input is a count, the collected values are kept apart from the run's record
 * (a map of more than 1,000 elements, decision 076), and the reactor returns a reduction of the
 * map, not the map.
 *
 * `LARGE_FANOUT_ELEMENTS` sets another size (e.g. 10000) to measure.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { buildLargeFanOut, LARGE_FANOUT_MAX, type LargeFanOutWorkerConfig } from './large-fanout-protocol.js';

const WORKER = fileURLToPath(new URL('./large-fanout-worker-process.ts', import.meta.url));
const ELEMENTS = Math.min(LARGE_FANOUT_MAX, Number(process.env['LARGE_FANOUT_ELEMENTS'] ?? LARGE_FANOUT_MAX));
const BATCH = 1_000;
const PROCESSES = 3;

const children = new Set<ChildProcess>();
let server: RedisServerHandle;
let observer: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  observer = new Redis(server.url);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await observer?.quit();
  await server?.dispose();
});

test(
  `${ELEMENTS.toLocaleString('en-US')} elements, batch ${BATCH}, over ${PROCESSES} worker processes: every element settles once, the run wakes once and collects every value`,
  { timeout: 1_500_000 }, // about 40 s on 2 quiet cores; 9 minutes at a load average of 25
  async () => {
    const prefix = 'bigfan';
    const config: Omit<LargeFanOutWorkerConfig, 'url'> = {
      prefix,
      concurrency: 32,
      batchSize: BATCH,
    };
    const workers: JsonChild[] = Array.from({ length: PROCESSES }, () =>
      spawnJsonChild(WORKER, { ...config, url: server.url }, children),
    );
    const big = buildLargeFanOut(BATCH);
    const runtime = createRedisRuntime({
      url: server.url,
      prefix,
      reactors: [big],
    });
    try {
      await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
      const began = performance.now();
      const { executionId } = await runtime.engine.start(big, { n: ELEMENTS });
      const result = await runtime.engine.wait(executionId, { timeoutMs: 1_200_000, pollMs: 250 });
      const elapsed = Math.round(performance.now() - began);

      expect(result).toMatchObject({ status: 'completed', value: { count: ELEMENTS, sum: ELEMENTS * (ELEMENTS - 1) } });
      const at = (type: string): number => result.trace.find((e) => e.type === type)?.at ?? Number.NaN;
      console.info(
        `[large-fanout] ${ELEMENTS} elements, batch ${BATCH}, ${PROCESSES} processes: ${elapsed} ms in all, elements ${at('map.collected') - at('map.parked')} ms`,
      );
      // One park, and one wake after it: the settlement that finished the map (the trace keeps its
      // last 1,000 entries, so the first job's are partly cut by its 1,000 dispatch events).
      const types = result.trace.map((e) => e.type);
      expect(types.filter((t) => t === 'map.parked')).toHaveLength(1);
      expect(types.slice(types.indexOf('map.parked')).filter((t) => t === 'run.resumed')).toHaveLength(1);
      expect(result.trace.filter((e) => e.type === 'map.collected')).toEqual([
        expect.objectContaining({ completed: ELEMENTS, failed: 0, skipped: 0, notStarted: 0 }),
      ]);
      const m = result.steps['m']?.result as { values: number[]; successes: number[] };
      expect(m.values).toHaveLength(ELEMENTS);
      expect(m.values.every((v, i) => v === 2 * i)).toBe(true);
      const last = await runtime.engine.result(`${executionId}/m[${ELEMENTS - 1}]`);
      expect(last).toMatchObject({ status: 'completed', value: 2 * (ELEMENTS - 1) });
    } finally {
      await runtime.close();
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));
    }
  },
);
