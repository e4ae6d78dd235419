/**
 * Worker processes on a Redis Cluster with replicas when the master listed first in the nodes is
 * SIGKILLed mid-run (docs/decisions/113): 1,000 executions with a step lock over 50 keys across 3
 * worker processes, whose subscriber connections listen on that first-listed node. After its
 * replica is promoted:
 * - every worker's `/readyz` answers 200 again (the subscriptions confirmed on a live node);
 * - a release published after the promotion reaches every worker process by notification (a
 *   probe waits on a lock channel with a timeout of 10 minutes: a probe that ends was woken);
 * - a cancel announcement alone (no cancel marker, which a worker would otherwise read at its
 *   liveness check) reaches a running execution and aborts its step: it came by broadcast;
 * - every execution ends, and a second round of 1,000 started at least 5 s after the promotion
 *   ends too.
 * The hand-over gaps (one key's next section start − the previous one's end, where the next
 * execution's job was already taken when the previous section ended) of the first round before
 * the kill and of the second round, and how the in-process waits ended, are printed, not asserted.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterEach, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import { TERMINAL_STATUSES } from '../../src/ports/store.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { useRedisCluster } from '../support/use-redis-cluster.js';
import {
  failoverReactors,
  wallNow,
  type FailoverWorkerConfig,
  type Span,
  type WaitOutcome,
} from './cluster-failover-protocol.js';
import { offered } from '../support/fast-paths.js';

const WORKER = fileURLToPath(new URL('./cluster-failover-worker-process.ts', import.meta.url));
const EXECUTIONS = 1_000;
const KEYS = 50;
/** Locked sections finished (over all workers) before the kill: the kill lands mid-run. */
const BEFORE_KILL = 200;
/** Bound of each wait after the promotion (readiness, a probe, a cancel), generous for a loaded machine. */
const RECOVERY_MS = 60_000;
/** The second round starts at least this long after the promotion. */
const SETTLED_AFTER_MS = 5_000;

const cluster = useRedisCluster({ replicasPerMaster: 1 });
const children = new Set<ChildProcess>();

afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const TERMINAL: ReadonlySet<string> = TERMINAL_STATUSES;
const noop = async (): Promise<void> => undefined;
const reactors = failoverReactors(noop, noop);

async function until(what: string, check: () => boolean | Promise<boolean>, deadlineMs = RECOVERY_MS): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} within ${deadlineMs} ms`);
    await sleep(100);
  }
}

/** The failing checks of the last `/readyz` that did not answer 200, by URL (printed with the figures). */
const lastRefusal = new Map<string, string>();

async function readyz(url: string): Promise<number> {
  try {
    const response = await fetch(url);
    if (response.status !== 200) lastRefusal.set(url, await response.text());
    return response.status;
  } catch (error) {
    lastRefusal.set(url, String(error));
    return 0;
  }
}

/** Pub/sub clients connected to the node on `port` now (`CLIENT LIST TYPE pubsub`). */
async function subscribersOn(port: number): Promise<number> {
  const node = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
  try {
    await node.connect();
    const list = (await node.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
    return list.split('\n').filter((line) => line.trim() !== '').length;
  } finally {
    node.disconnect();
  }
}

const doneSoFar = (spawned: readonly JsonChild[]): number =>
  spawned.reduce((sum, w) => sum + Math.max(0, ...w.lines<{ done: number }>((v) => 'done' in v).map((l) => l.done)), 0);

/**
 * Hand-over gaps of `spans` whose earlier section ended in [from, to): one key's next section
 * start − the previous one's end, where the next execution's job was taken (`taken`) before the
 * previous section ended — it was waiting for the key.
 */
function gaps(spans: readonly Span[], taken: ReadonlyMap<string, number>, from: number, to: number): number[] {
  const byKey = new Map<string, Span[]>();
  for (const span of spans) byKey.set(span.key, [...(byKey.get(span.key) ?? []), span]);
  const found: number[] = [];
  for (const ofKey of byKey.values()) {
    ofKey.sort((a, b) => a.enter - b.enter);
    for (let i = 1; i < ofKey.length; i++) {
      const [previous, next] = [ofKey[i - 1]!, ofKey[i]!];
      const waiting = (taken.get(next.executionId) ?? Infinity) < previous.exit;
      if (waiting && previous.exit >= from && previous.exit < to) found.push(next.enter - previous.exit);
    }
  }
  return found.sort((a, b) => a - b);
}

const quantile = (sorted: readonly number[], q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

function figures(sorted: readonly number[]): string {
  return `${sorted.length} gaps, p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms, max ${(sorted.at(-1) ?? NaN).toFixed(1)} ms`;
}

function waitsBetween(waits: readonly WaitOutcome[], from: number, to: number): string {
  const within = waits.filter((w) => w.at >= from && w.at < to);
  return `${within.filter((w) => w.outcome === 'won').length} won in the process, ${within.filter((w) => w.outcome === 'parked').length} parked`;
}

test(
  `the first-listed master SIGKILLed mid-run (${EXECUTIONS} executions, ${KEYS} keys, 3 worker processes): readiness, wake-ups and cancels come back after the promotion`,
  { timeout: 400_000 },
  async () => {
    const handle = cluster.handle;
    const firstListed = handle.nodes[0]!.port;
    expect(await handle.masters()).toContain(firstListed);
    const [replica] = await handle.replicasOf(firstListed);
    const prefix = 'clfo';
    const config: FailoverWorkerConfig = { nodes: handle.nodes, prefix, concurrency: 8 };
    const spawned = Array.from({ length: 3 }, () => spawnJsonChild(WORKER, config, children));
    const urls = (await Promise.all(spawned.map((w) => w.line<{ readyz: string }>((v) => v.ready === true)))).map(
      (line) => line.readyz,
    );
    const runtime = createRedisRuntime({
      cluster: { nodes: handle.nodes },
      prefix,
      reactors: Object.values(reactors),
    });
    const backend = createRedisBackend({ cluster: { nodes: handle.nodes }, prefix });
    try {
      const startRound = async (): Promise<string[]> =>
        (
          await runtime.engine.startMany(
            Array.from({ length: EXECUTIONS }, (_, i) => ({
              reactor: reactors.locked,
              input: { key: `k${i % KEYS}` },
            })),
          )
        ).map((s) => s.executionId);
      const counts = new Map<string, number>();
      const finish = async (ids: readonly string[]): Promise<void> => {
        for (const id of ids) {
          const result = await runtime.engine.wait(id, { timeoutMs: 180_000, pollMs: 200 });
          counts.set(result.status, (counts.get(result.status) ?? 0) + 1);
        }
      };
      const first = await startRound();
      for (const w of spawned) w.child.stdin!.write('go\n');
      await until(`${BEFORE_KILL} sections did not finish`, () => doneSoFar(spawned) >= BEFORE_KILL);
      // Ready before the kill (a busy machine may take a moment to confirm every subscription).
      for (const url of urls)
        await until(`${url} was not ready before the kill`, async () => (await readyz(url)) === 200);
      // The workers' subscribers (wake-ups, cancels, probes) listen on the node about to be killed.
      expect(await subscribersOn(firstListed)).toBeGreaterThanOrEqual(spawned.length);

      const killedAt = wallNow();
      await handle.kill(firstListed);
      expect(doneSoFar(spawned)).toBeLessThan(EXECUTIONS); // the kill came mid-run
      await handle.waitForMaster(replica!);
      const promotedAt = wallNow();

      // Readiness: every worker's /readyz answers 200 again.
      for (const url of urls) await until(`${url} did not answer 200 again`, async () => (await readyz(url)) === 200);
      const readyAt = wallNow();

      // Wake-ups: a release published now reaches every worker process by notification.
      for (const w of spawned) w.child.stdin!.write('probe clfo-probe\n');
      await Promise.all(spawned.map((w) => w.line((v) => v.probing === 'clfo-probe', RECOVERY_MS)));
      const owner = { owner: 'clfo-test' };
      await until('a release did not wake every worker’s probe', async () => {
        if ((await backend.coordinator.lockAcquire({ key: 'clfo-probe', holder: owner, ttlMs: 10_000 })).acquired)
          await backend.coordinator.lockRelease('clfo-probe', 'clfo-test');
        const deadline = Date.now() + 2_000;
        while (Date.now() < deadline && !spawned.every((w) => w.lines((v) => v.probed === 'clfo-probe').length > 0))
          await sleep(50);
        return spawned.every((w) => w.lines((v) => v.probed === 'clfo-probe').length > 0);
      });

      // Cancels: an announcement alone (no marker to find at a liveness check) aborts a running step.
      const target = await runtime.engine.start(reactors.holding, {});
      const holders = spawned.map((w) => w.line((v) => v.held === target.executionId, RECOVERY_MS));
      await Promise.any(holders);
      await offered(backend.coordinator, 'cancels').announceCancel(target.executionId);
      const aborted = await Promise.any(
        spawned.map((w) => w.line<{ reason: string }>((v) => v.aborted === target.executionId, RECOVERY_MS)),
      );
      expect(aborted.reason).toBe('CancelledError');

      // Every execution of the first round ends; a second round, from 5 s after the promotion, too.
      await finish(first);
      await sleep(Math.max(0, promotedAt + SETTLED_AFTER_MS - wallNow()));
      const secondAt = wallNow();
      await finish(await startRound());
      expect([...counts.keys()].every((status) => TERMINAL.has(status))).toBe(true);
      expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(2 * EXECUTIONS);

      for (const w of spawned) w.child.kill('SIGTERM');
      const stopped = await Promise.all(
        spawned.map((w) =>
          w.line<{ spans: Span[]; taken: [string, number][]; waits: WaitOutcome[] }>((v) => v.stopped === true),
        ),
      );
      const spans = stopped.flatMap((s) => s.spans);
      const waits = stopped.flatMap((s) => s.waits);
      const taken = new Map<string, number>();
      for (const [id, at] of stopped.flatMap((s) => s.taken)) taken.set(id, Math.min(at, taken.get(id) ?? Infinity));
      console.info(
        [
          `[cluster-failover] ${JSON.stringify(Object.fromEntries(counts))}; promoted ${((promotedAt - killedAt) / 1000).toFixed(1)} s after the kill, /readyz 200 on every worker ${((readyAt - promotedAt) / 1000).toFixed(1)} s after the promotion`,
          `  round 1 before the kill: ${figures(gaps(spans, taken, 0, killedAt))}; waits ${waitsBetween(waits, 0, killedAt)}`,
          `  round 1 from the kill: ${figures(gaps(spans, taken, killedAt, secondAt))}; waits ${waitsBetween(waits, killedAt, secondAt)}`,
          `  round 2 (from ${((secondAt - promotedAt) / 1000).toFixed(1)} s after the promotion): ${figures(gaps(spans, taken, secondAt, Infinity))}; waits ${waitsBetween(waits, secondAt, Infinity)}`,
          `  last /readyz refusals after the kill: ${JSON.stringify([...lastRefusal.values()])}`,
        ].join('\n'),
      );
    } finally {
      await runtime.close();
      await backend.close();
    }
  },
);
