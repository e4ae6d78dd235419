/**
 * Worker processes on a local 3-master Redis Cluster (docs/cluster.md): 1,000 executions with a
 * step lock over 50 keys across 3 worker processes — never two inside one key, none lost, parked
 * executions woken; a semaphore of 2 never exceeded; a rate limit that spreads the starts over
 * time; a fan-out map whose elements each ran once. Listing works across the slot groups.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Cluster } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { useRedisCluster } from '../support/use-redis-cluster.js';
import { clusterReactors, guardKeys, RATE_LIMIT, type ClusterWorkerConfig } from './cluster-protocol.js';

const WORKER = fileURLToPath(new URL('./cluster-worker-process.ts', import.meta.url));
const EXECUTIONS = 1_000;
const KEYS = 50;

const cluster = useRedisCluster();
const children = new Set<ChildProcess>();
let observer: Cluster;

beforeAll(() => {
  observer = new Cluster([...cluster.handle.nodes]);
});
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
});
afterAll(async () => {
  await observer.quit();
});

const noop = async (): Promise<void> => undefined;
const reactors = clusterReactors(noop, noop, noop);

async function workers(prefix: string, count: number): Promise<JsonChild[]> {
  const config: ClusterWorkerConfig = { nodes: cluster.handle.nodes, prefix, concurrency: 8 };
  const spawned = Array.from({ length: count }, () => spawnJsonChild(WORKER, config, children));
  await Promise.all(spawned.map((w) => w.line((v) => v.ready === true)));
  return spawned;
}

async function stop(spawned: readonly JsonChild[]): Promise<number> {
  for (const w of spawned) w.child.kill('SIGTERM');
  const lines = await Promise.all(spawned.map((w) => w.line<{ parks: number }>((v) => v.stopped === true)));
  return lines.reduce((sum, line) => sum + line.parks, 0);
}

async function statuses(runtime: RedisRuntime, ids: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const id of ids) {
    const result = await runtime.engine.wait(id, { timeoutMs: 120_000, pollMs: 100 });
    counts.set(result.status, (counts.get(result.status) ?? 0) + 1);
  }
  return counts;
}

test(
  `${EXECUTIONS} executions over 3 worker processes, a step lock over ${KEYS} keys: 0 overlaps, 0 lost; listing spans the slot groups`,
  { timeout: 300_000 },
  async () => {
    const prefix = 'cl-acc';
    const spawned = await workers(prefix, 3);
    const runtime = createRedisRuntime({
      cluster: { nodes: cluster.handle.nodes },
      prefix,
      reactors: Object.values(reactors),
    });
    const backend = createRedisBackend({ cluster: { nodes: cluster.handle.nodes }, prefix });
    const store = backend.store;
    try {
      const started = await runtime.engine.startMany(
        Array.from({ length: EXECUTIONS }, (_, i) => ({ reactor: reactors.locked, input: { key: `k${i % KEYS}` } })),
      );
      const ids = started.map((s) => s.executionId);
      const began = performance.now();
      for (const w of spawned) w.child.stdin!.write('go\n');
      const counts = await statuses(runtime, ids);
      const seconds = (performance.now() - began) / 1000;
      const parks = await stop(spawned);
      const overlaps = Number((await observer.get(guardKeys(prefix).overlaps)) ?? 0);
      console.info(
        `[cluster] ${EXECUTIONS} executions, ${KEYS} keys, 3 processes: ${JSON.stringify(Object.fromEntries(counts))} in ${seconds.toFixed(1)} s, ${parks} parks, ${overlaps} overlaps`,
      );
      expect(overlaps).toBe(0);
      expect(counts.get('completed')).toBe(EXECUTIONS);

      // Listing reads every slot group: every execution, newest first, paged without a gap or a repeat.
      const listed: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.list({
          reactor: 'cl-locked',
          limit: 200,
          ...(cursor === undefined ? {} : { cursor }),
        });
        listed.push(...page.records.map((r) => r.id));
        cursor = page.cursor;
      } while (cursor !== undefined);
      expect(new Set(listed).size).toBe(EXECUTIONS);
      expect([...listed].sort()).toEqual([...ids].sort());
      const completed = await store.list({ status: 'completed', limit: 5 });
      expect(completed.records).toHaveLength(5);
    } finally {
      await runtime.close();
      await backend.close();
    }
  },
);

test(
  'a semaphore of 2, a rate limit and a fan-out map on the cluster, over 2 worker processes',
  { timeout: 300_000 },
  async () => {
    const prefix = 'cl-mix';
    const spawned = await workers(prefix, 2);
    const runtime = createRedisRuntime({
      cluster: { nodes: cluster.handle.nodes },
      prefix,
      reactors: Object.values(reactors),
    });
    try {
      const limited = await Promise.all(
        Array.from({ length: 3 * RATE_LIMIT }, (_, n) => runtime.engine.start(reactors.limited, { n })),
      );
      const fanned = await runtime.engine.start(reactors.fanned, { items: Array.from({ length: 40 }, (_, i) => i) });
      for (const w of spawned) w.child.stdin!.write('go\n');
      const counts = await statuses(runtime, [...limited.map((s) => s.executionId), fanned.executionId]);
      await stop(spawned);
      const keys = guardKeys(prefix);
      expect(Object.fromEntries(counts)).toEqual({ completed: 3 * RATE_LIMIT + 1 });
      expect(Number((await observer.get(keys.overlaps)) ?? 0)).toBe(0);
      // 3 × the limit of starts cannot fit in less than 2 windows of 1 s.
      const starts = (await observer.lrange(keys.rateStarts, 0, -1)).map(Number).sort((a, b) => a - b);
      expect(starts).toHaveLength(3 * RATE_LIMIT);
      expect(starts[starts.length - 1]! - starts[0]!).toBeGreaterThanOrEqual(1_900);
      // Every element ran exactly once.
      const elements = Object.values(await observer.hgetall(keys.elements)).map(Number);
      expect(elements).toHaveLength(40);
      expect(elements.every((n) => n === 1)).toBe(true);
    } finally {
      await runtime.close();
    }
  },
);
