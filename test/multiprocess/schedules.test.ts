/**
 * Schedules on Redis across 3 worker processes (`schedule-worker-process.ts`) on one throwaway
 * redis-server: a schedule every second for 10 s starts exactly 10 executions, one per tick,
 * each with its tick's time.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import type { ScheduleEvent } from '../../src/schedules/index.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { scheduleInputs, tickReport } from './schedule-protocol.js';

const WORKER = fileURLToPath(new URL('./schedule-worker-process.ts', import.meta.url));
const PREFIX = 'sched';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const children = new Set<ChildProcess>();

let server: RedisServerHandle;
let runtime: RedisRuntime;

beforeAll(async () => {
  server = await startRedisServer();
  runtime = createRedisRuntime({ url: server.url, prefix: PREFIX, reactors: [tickReport], scheduleInputs });
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await runtime?.close();
  await server?.dispose();
});

type Line = { event: ScheduleEvent; pid: number };

describe('schedules on Redis, 3 worker processes', () => {
  test('every second for 10 s: exactly 10 executions, one per tick, each with its tick time', async () => {
    const workers: JsonChild[] = [0, 1, 2].map(() =>
      spawnJsonChild(WORKER, { url: server.url, prefix: PREFIX }, children),
    );
    await Promise.all(workers.map((w) => w.line((v) => v['ready'] === true)));
    const start = Math.ceil(Date.now() / 1000) * 1000 + 1_000;
    const ticks = Array.from({ length: 10 }, (_, i) => start + i * 1000);
    const info = await runtime.schedules.upsert({
      id: 'every-second',
      reactor: 'tick-report',
      every: '1s',
      inputFrom: 'tickTime',
      startAt: start,
      endAt: start + 10_000,
    });
    expect(info.nextRuns.map((d) => d.getTime())).toEqual(ticks.slice(0, 5));
    expect((await runtime.schedules.list()).map((s) => [s.id, s.everyMs])).toEqual([['every-second', 1000]]);

    await sleep(start + 10_000 - Date.now() + 1_500); // the last tick, and one more second in which none must come
    const events = (): Line[] => workers.flatMap((w) => w.lines<Line>((v) => typeof v['event'] === 'object'));
    const startedTicks = (): number =>
      new Set(
        events()
          .map((l) => l.event)
          .filter((e) => e.type === 'schedule.ticked' && !e.replay)
          .map((e) => (e as { tickAt: number }).tickAt),
      ).size;
    // A loaded machine may report the last ticks late: wait for ten, however long they take.
    await expect.poll(startedTicks, { timeout: 30_000 }).toBeGreaterThanOrEqual(10);
    const lines = events();
    const ticked = lines.map((l) => l.event).filter((e) => e.type === 'schedule.ticked');
    expect(lines.map((l) => l.event.type).filter((t) => t !== 'schedule.ticked')).toEqual([]);
    const started = ticked.filter((e) => !e.replay);
    expect(started.map((e) => e.tickAt).sort((a, b) => a - b)).toEqual(ticks);
    expect(new Set(started.map((e) => e.executionId)).size).toBe(10);
    for (const event of started) {
      const result = await runtime.engine.wait(event.executionId, { timeoutMs: 5_000 });
      expect(result.status === 'completed' && (result.value as { tick: string }).tick).toBe(
        new Date(event.tickAt).toISOString(),
      );
      expect((await runtime.engine.store.get(event.executionId))?.idempotencyKey).toBe(
        `schedule:every-second:${new Date(event.tickAt).toISOString()}`,
      );
    }
    const byWorker = new Set(lines.filter((l) => l.event.type === 'schedule.ticked').map((l) => l.pid));
    expect(byWorker.size).toBeGreaterThanOrEqual(1);

    expect(await runtime.schedules.remove('every-second')).toBe(true);
    expect(await runtime.schedules.list()).toEqual([]);
  }, 300_000);
});
