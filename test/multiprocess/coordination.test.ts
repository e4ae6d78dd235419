/**
 * Coordination across real processes (issue 3, acceptance "Multi-process" and "kill -9";
 * quality bars R1/R2 in small). Each worker is a separate Node process
 * (`node --import tsx worker-process.ts`) with its own Redis connections, contending on one
 * key of one throwaway redis-server. A guard counter in Redis, incremented on entry to the
 * critical section and decremented on exit, measures how many runs were inside at once.
 */
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEngine, reactor, type Engine } from '../../src/index.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import {
  guardKeys,
  holdKeys,
  type GuardEntry,
  type HoldingLine,
  type WorkerConfig,
  type WorkerResult,
} from './protocol.js';

const WORKER = fileURLToPath(new URL('./worker-process.ts', import.meta.url));
const PREFIX = 'mp';
const PROCESSES = 4;
const RUNS_PER_PROCESS = 40;
const CONCURRENCY = 8;

type Worker = JsonChild;

const children = new Set<ChildProcess>();

function spawnWorker(config: Omit<WorkerConfig, 'url' | 'prefix'>): Worker {
  return spawnJsonChild(WORKER, { ...config, url: server.url, prefix: PREFIX }, children);
}

let server: RedisServerHandle;
let backend: RedisBackend;
let observer: Redis;
let engine: Engine;
let seq = 0;
const unique = (name: string): string => `${name}:${Date.now()}:${++seq}`;

beforeAll(async () => {
  server = await startRedisServer();
  backend = createRedisBackend({ url: server.url, prefix: PREFIX });
  observer = new Redis(server.url);
  engine = createEngine({ store: backend.store, coordinator: backend.coordinator });
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await backend?.close();
  await observer?.quit();
  await server?.dispose();
});

interface Contention {
  readonly results: WorkerResult[];
  readonly entries: GuardEntry[];
  readonly max: number;
  readonly total: number;
  readonly current: number;
  /** How often consecutive entries came from different processes. */
  readonly switches: number;
}

/** Starts the workers, lets them all go at once, and collects their results and the guard log. */
async function contend(config: Omit<WorkerConfig, 'url' | 'prefix' | 'guard'>): Promise<Contention> {
  const guard = unique(`guard:${config.mode}`);
  const workers = Array.from({ length: PROCESSES }, () =>
    spawnWorker({ ...config, guard, runs: RUNS_PER_PROCESS, concurrency: CONCURRENCY }),
  );
  await Promise.all(workers.map((w) => w.line((v) => v.ready === true)));
  for (const w of workers) w.child.stdin!.write('go\n');
  const results = await Promise.all(workers.map((w) => w.line<WorkerResult>((v) => typeof v.completed === 'number')));
  const exits = await Promise.all(workers.map((w) => w.exited));
  expect(exits.map((e) => e.code)).toEqual(workers.map(() => 0));
  const keys = guardKeys(guard);
  const entries = (await observer.lrange(keys.log, 0, -1)).map((s) => JSON.parse(s) as GuardEntry);
  let switches = 0;
  for (let i = 1; i < entries.length; i++) if (entries[i]!.pid !== entries[i - 1]!.pid) switches++;
  return {
    results,
    entries,
    max: Number(await observer.get(keys.max)),
    total: Number(await observer.get(keys.total)),
    current: Number(await observer.get(keys.cur)),
    switches,
  };
}

function expectAllCompleted(c: Contention): void {
  for (const r of c.results)
    expect(r, `process ${r.pid}: ${r.errors.join('; ')}`).toMatchObject({
      completed: RUNS_PER_PROCESS,
      failed: 0,
      other: 0,
    });
  expect(c.total).toBe(PROCESSES * RUNS_PER_PROCESS);
  expect(c.entries).toHaveLength(PROCESSES * RUNS_PER_PROCESS);
  expect(c.current).toBe(0);
  // Real cross-process contention happened: all processes entered, interleaved with each other.
  expect(new Set(c.entries.map((e) => e.pid)).size).toBe(PROCESSES);
  expect(c.switches).toBeGreaterThanOrEqual(PROCESSES);
}

describe(`multi-process: ${PROCESSES} processes × ${RUNS_PER_PROCESS} runs, ${CONCURRENCY} at a time each`, () => {
  test('lock: never more than one run inside, every run completes, fencing tokens increase in entry order, the key is free at the end', async () => {
    const key = unique('mp-lock');
    const c = await contend({ mode: 'lock', key, waitMs: 120_000 });
    console.info(
      `[multiprocess] lock: max inside ${c.max}, entries ${c.entries.length}, process switches ${c.switches}`,
    );
    expectAllCompleted(c);
    expect(c.max).toBe(1);
    expect(c.entries.filter((e) => e.inside !== 1)).toEqual([]);
    const tokens = c.entries.map((e) => BigInt(e.token ?? '0'));
    expect(tokens.every((t) => t > 0n)).toBe(true);
    for (let i = 1; i < tokens.length; i++)
      expect(tokens[i]! > tokens[i - 1]!, `token at entry ${i} does not exceed the previous one`).toBe(true);
    expect(await backend.coordinator.lockState(key)).toBeUndefined();
  }, 300_000);

  test('semaphore N=3: never more than three runs inside, three reached, every run completes, no slot left taken', async () => {
    const key = unique('mp-sem');
    const c = await contend({ mode: 'semaphore', key, limit: 3, waitMs: 120_000 });
    console.info(
      `[multiprocess] semaphore: max inside ${c.max}, entries ${c.entries.length}, process switches ${c.switches}`,
    );
    expectAllCompleted(c);
    expect(c.max).toBe(3);
    expect(c.entries.filter((e) => e.inside > 3)).toEqual([]);
    expect((await backend.coordinator.semaphoreState(key, 3)).holders).toHaveLength(0);
  }, 300_000);

  test('ordered lock: one run inside at a time, in position order, every run completes, the key drains', async () => {
    const key = unique('mp-ord');
    const c = await contend({ mode: 'ordered', key, waitMs: 120_000 });
    console.info(
      `[multiprocess] ordered: max inside ${c.max}, entries ${c.entries.length}, process switches ${c.switches}`,
    );
    expectAllCompleted(c);
    expect(c.max).toBe(1);
    // Positions enter strictly in order; a new batch (after a drain) starts again at 1.
    const nonces = c.entries.map((e) => e.nonce);
    expect(nonces.every((n) => typeof n === 'number')).toBe(true);
    for (let i = 1; i < nonces.length; i++) {
      const ok = nonces[i] === nonces[i - 1]! + 1 || nonces[i] === 1;
      expect(ok, `entry ${i}: position ${nonces[i]} after ${nonces[i - 1]}`).toBe(true);
    }
    expect(await backend.coordinator.orderedState(key)).toMatchObject({ drained: true, inFlight: undefined });
  }, 300_000);
});

describe('kill -9 of a process holding a lock, a semaphore slot and an ordered turn', () => {
  const TTL = 3_000; // renewed every second: the live child has 2 s of slack on a loaded machine
  const SLACK = 1_000;

  test(`each becomes usable again within TTL (or poison timeout) + ${SLACK} ms of the kill, with no operator action; the new lock token exceeds the dead holder's`, async () => {
    const base = unique('mp-kill');
    const keys = holdKeys(base);
    const worker = spawnWorker({ mode: 'hold', key: base, guard: 'unused', ttlMs: TTL, waitMs: 10_000 });
    const holding = await worker.line<HoldingLine>((v) => 'holding' in v);
    expect(holding, worker.stderr()).toMatchObject({ holding: true });

    // While the child lives, its keep-alive holds all three beyond their TTL.
    await new Promise((resolve) => setTimeout(resolve, TTL + 500));
    const lock = await backend.coordinator.lockState(keys.lock);
    expect(lock?.holder.owner).toBe(holding.executionId);
    expect(lock?.token).toBe(holding.token);
    const deadToken = BigInt(lock!.token);
    expect((await backend.coordinator.semaphoreState(keys.semaphore, 1)).holders.map((h) => h.holder.owner)).toEqual([
      holding.executionId,
    ]);
    expect(await backend.coordinator.orderedState(keys.ordered)).toMatchObject({ inFlight: 1, lastCompleted: 0 });

    const killedAt = performance.now();
    worker.child.kill('SIGKILL');
    expect((await worker.exited).signal).toBe('SIGKILL');

    // Fresh runs in this process, one per primitive, each waiting at most TTL + SLACK.
    const wait = TTL + SLACK;
    const lockRun = reactor('after-kill-lock')
      .withLock({ key: () => keys.lock, ttl: TTL, wait })
      .step('s', { run: (_a, ctx) => ({ at: performance.now(), token: ctx.fencingToken(keys.lock) }) })
      .returns('s');
    const semRun = reactor('after-kill-sem')
      .withSemaphore({ key: () => keys.semaphore, limit: 1, ttl: TTL, wait })
      .step('s', { run: () => ({ at: performance.now(), token: undefined as string | undefined }) })
      .returns('s');
    const ordRun = reactor('after-kill-ord')
      .withOrderedLock({ key: () => keys.ordered, poisonTimeout: TTL, wait })
      .step('s', { run: () => ({ at: performance.now(), token: undefined as string | undefined }) })
      .returns('s');
    const timed = async (r: typeof lockRun | typeof semRun | typeof ordRun) => {
      const result = await engine.run(r, {});
      return { result, doneAfterKill: performance.now() - killedAt };
    };
    const [l, s, o] = await Promise.all([timed(lockRun), timed(semRun), timed(ordRun)]);
    const figures = { lock: l.doneAfterKill, semaphore: s.doneAfterKill, ordered: o.doneAfterKill };
    console.info(
      `[multiprocess] recovery after kill -9 (ms, TTL ${TTL}): ${JSON.stringify(Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v)])))}`,
    );

    for (const [name, x] of [
      ['lock', l],
      ['semaphore', s],
      ['ordered', o],
    ] as const) {
      expect(x.result.status, `${name}: ${x.result.status === 'failed' ? x.result.error.message : ''}`).toBe(
        'completed',
      );
      expect(
        x.doneAfterKill,
        `${name} usable again ${Math.round(x.doneAfterKill)} ms after the kill`,
      ).toBeLessThanOrEqual(TTL + SLACK);
    }
    if (l.result.status !== 'completed') return;
    expect(l.result.value.token).toBeDefined();
    expect(BigInt(l.result.value.token!) > deadToken).toBe(true);

    // Nothing is left held, and the ordered key moved past the dead position and drained.
    expect(await backend.coordinator.lockState(keys.lock)).toBeUndefined();
    expect((await backend.coordinator.semaphoreState(keys.semaphore, 1)).holders).toHaveLength(0);
    expect(await backend.coordinator.orderedState(keys.ordered)).toMatchObject({ drained: true });
  }, 300_000);
});
