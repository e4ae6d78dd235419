/**
 * Issue 5 acceptance for fan-out maps: a map of 200 elements fanned out over 3 real worker
 * processes (BullMQ over a throwaway redis-server), one element failing atomically. Completed
 * elements are undone highest index first, then the earlier step; no element runs twice and no
 * element is undone twice — proven by counters the workers write to Redis.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import { buildFanOut, failsAt } from '../fanout/scenario.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { fanOutKeys, FANOUT_REACTOR, type FanOutWorkerConfig } from './fanout-protocol.js';

const WORKER = fileURLToPath(new URL('./fanout-worker-process.ts', import.meta.url));
const SIZE = 200;
const FAIL_AT = 137;
const BATCH = 16;

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
  '200 elements over 3 worker processes, element 137 fails atomically: every completed element undone highest first, then a; none runs or is undone twice',
  { timeout: 400_000 },
  async () => {
    const prefix = 'fanacc';
    const config: Omit<FanOutWorkerConfig, 'url'> = { prefix, concurrency: 4, batchSize: BATCH };
    const workers: JsonChild[] = Array.from({ length: 3 }, () =>
      spawnJsonChild(WORKER, { ...config, url: server.url }, children),
    );
    await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
    for (const w of workers) w.child.stdin!.write('go\n');

    // This process only starts the run: its hooks never run here.
    const noop = (): undefined => undefined;
    const reactor = buildFanOut(
      { element: noop, compensate: noop, undo: noop, a: noop, undoA: noop, b: noop },
      { name: FANOUT_REACTOR, batchSize: BATCH },
    );
    const runtime = createRedisRuntime({ url: server.url, prefix, reactors: [reactor] });
    try {
      const started = await runtime.engine.start(reactor, { fails: failsAt(SIZE, FAIL_AT) });
      const result = await runtime.engine.wait(started.executionId, { timeoutMs: 180_000, pollMs: 50 });
      expect(result).toMatchObject({ status: 'failed', failedStep: `items[${FAIL_AT}]` });

      const keys = fanOutKeys(prefix);
      const runs = Object.entries(await observer.hgetall(keys.runs)).map(([i, n]) => [Number(i), Number(n)] as const);
      const undos = Object.entries(await observer.hgetall(keys.undos)).map(([i, n]) => [Number(i), Number(n)] as const);
      const log = await observer.lrange(keys.log, 0, -1);
      const ran = runs.map(([i]) => i).sort((a, b) => a - b);
      const runPids = new Set(Object.values(await observer.hgetall(keys.runPid)));
      const undoPids = new Set(Object.values(await observer.hgetall(keys.undoPid)));
      const at = (type: string, nth = 0): number => result.trace.filter((e) => e.type === type)[nth]?.at ?? Number.NaN;
      const phases = `elements ${at('map.collected') - at('map.parked')} ms, undos ${at('run.failed') - at('map.parked', 1)} ms`;
      console.info(
        `[fanout] ${SIZE} elements, batch ${BATCH}, 3 processes: ${ran.length} ran (on ${runPids.size} processes), ${undos.length} undone (on ${undoPids.size} processes); ${phases}`,
      );

      // No element ran twice, none was undone twice.
      expect(runs.filter(([, n]) => n !== 1)).toEqual([]);
      expect(undos.filter(([, n]) => n !== 1)).toEqual([]);
      // The failed element ran and the stop took effect: the rest never ran (dispatched ones settled
      // as not started, possibly some below the failed index whose jobs started after the stop).
      expect(ran).toContain(FAIL_AT);
      expect(ran.length).toBeLessThan(SIZE);
      const collected = result.trace.find((e) => e.type === 'map.collected');
      expect(collected).toMatchObject({ completed: ran.length - 1, failed: 1, notStarted: SIZE - ran.length });
      // Every completed element (each that ran, but the failed one) undone exactly once, highest index first, then a.
      const completed = ran.filter((i) => i !== FAIL_AT);
      const expected = ['compensate 137', ...completed.reverse().map((i) => `undo ${i}`), 'undo a'];
      expect(log).toEqual(['run a', ...expected]);
      expect(result?.rollbackFailures).toEqual([]);
      // The work was spread over the processes, the undos too.
      expect(runPids.size).toBeGreaterThanOrEqual(2);
      expect(undoPids.size).toBeGreaterThanOrEqual(2);
    } finally {
      await runtime.close();
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited));
    }
  },
);
