/**
 * Limits from arguments and several limits of a kind across real worker processes on one
 * throwaway redis-server: a step with a tiered semaphore (`tier === 'pro' ? 3 : 1`) and a
 * per-project semaphore, and a step with two rate limits (per user 2 and per project 5 in 4 s). Every
 * worker is a separate Node process (`limits-worker-process.ts`); this process only starts
 * executions and reads what the step bodies recorded in Redis.
 */
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import type { RunResult } from '../../src/index.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import {
  buildLimitReactors,
  limitKeys,
  PROJECT_RATE,
  PROJECT_SEMAPHORE,
  USER_RATE,
  type LimitsWorkerConfig,
} from './limits-protocol.js';

const WORKER = fileURLToPath(new URL('./limits-worker-process.ts', import.meta.url));
const PROCESSES = 4;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const children = new Set<ChildProcess>();
const closers: (() => Promise<unknown>)[] = [];
const never = (): Promise<void> => Promise.reject(new Error('the test process runs no steps'));
const reactors = buildLimitReactors({ tier: never, rate: never });

let server: RedisServerHandle;
let observer: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  observer = new Redis(server.url);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await observer?.quit();
  await server?.dispose();
});

async function scenario(prefix: string): Promise<{ runtime: RedisRuntime; guard: string; workers: JsonChild[] }> {
  const runtime = createRedisRuntime({ url: server.url, prefix, reactors: Object.values(reactors) });
  closers.push(() => runtime.close());
  const guard = `${prefix}-guard`;
  const config: Omit<LimitsWorkerConfig, 'url'> = {
    prefix,
    guard,
    concurrency: 4,
    background: { parkFallbackMs: 500 },
    waitForGo: true,
  };
  const workers = Array.from({ length: PROCESSES }, () =>
    spawnJsonChild(WORKER, { ...config, url: server.url }, children),
  );
  await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
  return { runtime, guard, workers };
}

async function settle(runtime: RedisRuntime, ids: readonly string[], timeoutMs: number): Promise<RunResult[]> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const results = await Promise.all(ids.map((id) => runtime.engine.result(id)));
    const done = results.filter((r) => r !== undefined && ['completed', 'failed', 'halted'].includes(r.status));
    if (done.length === ids.length || performance.now() > deadline) return results.filter((r) => r !== undefined);
    await sleep(200);
  }
}

async function stop(workers: readonly JsonChild[]): Promise<void> {
  for (const w of workers) w.child.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
}

const statusCounts = (results: readonly RunResult[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
};

describe('a semaphore limit from the arguments, with a second semaphore per project', () => {
  test(
    `limit ({ tier }) => tier === 'pro' ? 3 : 1 across ${PROCESSES} worker processes: never more than 3 inside for a pro user, 1 for a free one, ${PROJECT_SEMAPHORE} per project`,
    { timeout: 300_000 },
    async () => {
      const s = await scenario('lim1');
      const inputs = [
        ...Array.from({ length: 16 }, () => ({ user: 'ann', project: 'p1', tier: 'pro' as const })),
        ...Array.from({ length: 8 }, () => ({ user: 'bob', project: 'p1', tier: 'free' as const })),
        ...Array.from({ length: 12 }, () => ({ user: 'cyd', project: 'p2', tier: 'pro' as const })),
        ...Array.from({ length: 6 }, () => ({ user: 'dee', project: 'p2', tier: 'free' as const })),
      ];
      const started = await Promise.all(inputs.map((input) => s.runtime.engine.start(reactors.tiered, input)));
      const began = performance.now();
      for (const w of s.workers) w.child.stdin!.write('go\n');
      const results = await settle(
        s.runtime,
        started.map((r) => r.executionId),
        90_000,
      );
      const max = Object.fromEntries(
        Object.entries(await observer.hgetall(limitKeys(s.guard).max)).map(([k, v]) => [k, Number(v)]),
      );
      const parks = results.reduce((n, r) => n + r.trace.filter((e) => e.type === 'run.parked').length, 0);
      console.info(
        `[limits] tiered semaphores in ${Math.round(performance.now() - began)} ms: ${JSON.stringify(statusCounts(results))}; max inside ${JSON.stringify(max)}; parks ${parks}`,
      );

      expect(statusCounts(results)).toEqual({ completed: inputs.length });
      expect(max['lim:user:ann']).toBeLessThanOrEqual(3);
      expect(max['lim:user:cyd']).toBeLessThanOrEqual(3);
      expect(max['lim:user:bob']).toBe(1);
      expect(max['lim:user:dee']).toBe(1);
      expect(max['lim:project:p1']).toBeLessThanOrEqual(PROJECT_SEMAPHORE);
      expect(max['lim:project:p2']).toBeLessThanOrEqual(PROJECT_SEMAPHORE);
      // The pro limit is in force (more than one inside at once), and the limits were contended.
      expect(Math.max(max['lim:user:ann'] ?? 0, max['lim:user:cyd'] ?? 0)).toBeGreaterThan(1);
      expect(parks).toBeGreaterThan(0);
      await stop(s.workers);
    },
  );
});

/** The largest number of starts in any window [t, t + periodMs) of the sorted times. */
function mostInAnyWindow(times: readonly number[], periodMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + periodMs) j++;
    most = Math.max(most, j - i);
  }
  return most;
}

describe('two rate limits on one step', () => {
  test(
    `per user ${USER_RATE.limit} and per project ${PROJECT_RATE.limit} in ${USER_RATE.periodMs} ms across ${PROCESSES} worker processes: never exceeded in any sliding window`,
    { timeout: 300_000 },
    async () => {
      const s = await scenario('lim2');
      const inputs = [
        ...Array.from({ length: 8 }, (_, i) => ({ user: `u${i % 4}`, project: 'p1' })),
        // Users u2 to u5 start only in p1: eight starts its limit of 5 holds back in the first
        // window, whatever u0 and u1 spend in p2, unless a busy machine spreads them out.
        ...Array.from({ length: 4 }, (_, i) => ({ user: `u${4 + (i % 2)}`, project: 'p1' })),
        ...Array.from({ length: 12 }, (_, i) => ({ user: `u${i % 2}`, project: 'p2' })),
        ...Array.from({ length: 6 }, () => ({ user: 'solo', project: 'p3' })),
      ];
      const started = await Promise.all(inputs.map((input) => s.runtime.engine.start(reactors.rated, input)));
      const began = performance.now();
      for (const w of s.workers) w.child.stdin!.write('go\n');
      const results = await settle(
        s.runtime,
        started.map((r) => r.executionId),
        90_000,
      );
      const charges = (await observer.lrange(limitKeys(s.guard).charges, 0, -1)).map((line) => {
        const [user, project, userMs, projectMs] = line.split('|');
        return { user: user!, project: project!, userMs: Number(userMs || NaN), projectMs: Number(projectMs || NaN) };
      });
      const byProject = new Map<string, number[]>();
      for (const c of charges) byProject.set(c.project, [...(byProject.get(c.project) ?? []), c.projectMs]);
      // Users u0 and u1 start in two projects: their windows are per user, across projects.
      const perUser = new Map<string, number[]>();
      for (const c of charges) perUser.set(c.user, [...(perUser.get(c.user) ?? []), c.userMs]);
      const userMost = Object.fromEntries([...perUser].map(([u, t]) => [u, mostInAnyWindow(t, USER_RATE.periodMs)]));
      const projectMost = Object.fromEntries(
        [...byProject].map(([p, t]) => [p, mostInAnyWindow(t, PROJECT_RATE.periodMs)]),
      );
      const parked = results.flatMap((r) => r.trace.filter((e) => e.type === 'run.parked'));
      const parks = parked.length;
      const refusedBy = new Set(parked.map((e) => (e as { key: string }).key));
      console.info(
        `[limits] two rate limits in ${Math.round(performance.now() - began)} ms: ${JSON.stringify(statusCounts(results))}; most starts in a window per user ${JSON.stringify(userMost)}, per project ${JSON.stringify(projectMost)}; parks ${parks} on ${JSON.stringify([...refusedBy])}`,
      );

      expect(statusCounts(results)).toEqual({ completed: inputs.length });
      // One body start per execution, each found in both sliding logs at its charge time.
      expect(charges).toHaveLength(inputs.length);
      expect(charges.every((c) => Number.isFinite(c.userMs) && Number.isFinite(c.projectMs))).toBe(true);
      for (const most of Object.values(userMost)) expect(most).toBeLessThanOrEqual(USER_RATE.limit);
      for (const most of Object.values(projectMost)) expect(most).toBeLessThanOrEqual(PROJECT_RATE.limit);
      // The limits bound. Which windows fill depends on how fast a loaded machine hands out jobs (a
      // slow one spreads a project's starts over more than its period), so only this is sure: a user
      // window refused a start only once it was full. (A project window may refuse earlier: it is
      // charged first, and a charge its user window then refuses counts until it is refunded.)
      expect(parks).toBeGreaterThan(0);
      for (const key of refusedBy) {
        const [, kind, user] = key.split(':');
        if (kind === 'user') expect(userMost[user!], key).toBe(USER_RATE.limit);
      }
      await stop(s.workers);
    },
  );
});
