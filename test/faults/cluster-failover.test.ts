/**
 * Failovers of a Redis Cluster (3 masters, one replica each) in the middle of a run: executions
 * of a reactor whose middle step holds a lock per key, on two worker runtimes in this process.
 * The failed-over master serves the queue's slot and the lock keys, and about a third of the
 * execution records.
 *
 * - A manual `CLUSTER FAILOVER` (graceful: the replica catches up with its master before it
 *   takes over) loses nothing: every execution completes, no two bodies of one key overlap and
 *   the fencing tokens of each key keep increasing across the failover.
 * - A SIGKILLed master: its replica is promoted within seconds (`cluster-node-timeout` 1 s), and
 *   every execution ends, none left running. Replication is asynchronous, so what the master
 *   acknowledged in its last moments may be missing on the replica: a lock taken just before the
 *   kill may be taken again by another holder while the first still runs, a checkpoint may be
 *   lost (its step runs again), a queued job may be lost (the recovery sweep re-enqueues its
 *   execution). The test asserts only what is promised: no execution stays running, each one
 *   that ends unsuccessfully names its cause, and the fencing tokens of one key's holders keep
 *   increasing — successive holders in order, and holders that did overlap with different tokens.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { reactor } from '../../src/dsl/reactor.js';
import { TERMINAL_STATUSES } from '../../src/ports/store.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import type { RedisClusterHandle } from '../support/redis-cluster.js';
import { useRedisCluster } from '../support/use-redis-cluster.js';
import { codeOf, sleepUnlessAborted } from './fixtures/signals.js';

/** Executions started before the fault, spread evenly over the lock keys. */
const EXECUTIONS = 90;
/** Executions started once the fault is over: their locks are taken from the new master. */
const AFTER_FAULT = 9;
const KEYS = 3;
/** How long one locked body takes: long enough that a key's queue of holders outlasts a failover. */
const STEP_MS = 50;
/** Bodies of every key finished before the fault is injected: the fault lands mid-run. */
const BEFORE_FAULT_PER_KEY = 4;
/** Bound of the whole settle phase, generous for a loaded machine; nothing may still run after it. */
const SETTLE_MS = 90_000;

const cluster = useRedisCluster({ replicasPerMaster: 1 });
const runtimes: RedisRuntime[] = [];

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close({ timeoutMs: 5_000 }).catch(() => undefined)));
});

/** One run of the locked body: which key, the fencing token it held, and when it was inside. */
interface Span {
  readonly key: string;
  readonly executionId: string;
  readonly token: bigint;
  readonly enter: number;
  readonly exit: number;
}

/** How an execution ended, as this test follows it. */
type Outcome = { readonly status: string; readonly cause?: string };

const TERMINAL: ReadonlySet<string> = TERMINAL_STATUSES;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function lockedReactor(spans: Span[]) {
  return reactor('fault-failover')
    .input({ key: z.string() })
    .step('a', { run: () => 1 })
    .step('b', {
      waitFor: ['a'],
      lock: { key: ({ key }) => `fo:${key}`, ttl: '10s' },
      run: async ({ key }, ctx) => {
        const token = BigInt(ctx.fencingToken() ?? '0');
        const enter = performance.now();
        try {
          await sleepUnlessAborted(STEP_MS, ctx.signal);
          return 2;
        } finally {
          spans.push({ key, executionId: ctx.executionId, token, enter, exit: performance.now() });
        }
      },
    })
    .step('c', { waitFor: ['b'], run: () => 3 })
    .background('all')
    .returns('c');
}

/** `count` user keys whose locks (and fence counters) live on the master on `port`. */
async function keysOn(handle: RedisClusterHandle, prefix: string, port: number, count: number): Promise<string[]> {
  const layout = new RedisKeys(prefix, 'cluster');
  const found: string[] = [];
  for (let i = 0; found.length < count; i++) {
    if (i > 500) throw new Error(`no ${count} lock keys on master ${port} among 500`);
    if ((await handle.masterOf(layout.lock(`fo:k${i}`))) === port) found.push(`k${i}`);
  }
  return found;
}

/** Two worker runtimes on the cluster; the first also starts and follows the executions. */
function workerRuntimes(handle: RedisClusterHandle, prefix: string, spans: Span[]): RedisRuntime[] {
  const created = [0, 1].map(() =>
    createRedisRuntime({
      cluster: { nodes: handle.nodes },
      prefix,
      reactors: [lockedReactor(spans)],
      background: { livenessTtlMs: 5_000, sweepIntervalMs: 2_000 },
      stall: { lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
    }),
  );
  runtimes.push(...created);
  return created;
}

async function untilTrue(what: string, check: () => boolean | Promise<boolean>, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} within ${deadlineMs} ms`);
    await sleep(50);
  }
}

/** The cause an unsuccessful execution names: its error's code, else its class name. */
function causeOf(error: unknown): string {
  return codeOf(error) ?? (error instanceof Error ? error.name : String(error));
}

/** Follows every execution until it ends (or its record is gone) or the settle bound passes. */
async function settle(runtime: RedisRuntime, ids: readonly string[]): Promise<Map<string, Outcome>> {
  const outcomes = new Map<string, Outcome>();
  const end = Date.now() + SETTLE_MS;
  while (outcomes.size < ids.length && Date.now() < end) {
    for (const id of ids.filter((x) => !outcomes.has(x))) {
      const result = await runtime.engine.result(id).catch(() => 'unreadable' as const);
      if (result === 'unreadable') continue;
      if (result === undefined) outcomes.set(id, { status: 'lost' });
      else if (TERMINAL.has(result.status))
        outcomes.set(id, {
          status: result.status,
          ...(result.status === 'failed' ? { cause: causeOf(result.error) } : {}),
        });
    }
    await sleep(200);
  }
  return outcomes;
}

/** Pairs of one key's bodies that were inside at the same time. */
function overlapping(spans: readonly Span[]): [Span, Span][] {
  const pairs: [Span, Span][] = [];
  for (const a of spans)
    for (const b of spans) if (a.key === b.key && a.enter < b.enter && b.enter < a.exit) pairs.push([a, b]);
  return pairs;
}

/** Pairs of one key's bodies where the later one (entered after the earlier exited) had no greater token. */
function tokenRegressions(spans: readonly Span[]): [Span, Span][] {
  const pairs: [Span, Span][] = [];
  for (const a of spans)
    for (const b of spans) if (a.key === b.key && a.exit <= b.enter && b.token <= a.token) pairs.push([a, b]);
  return pairs;
}

/** Counts outcomes by status. */
function tally(outcomes: ReadonlyMap<string, Outcome>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { status } of outcomes.values()) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** What one run found. */
interface Run {
  readonly spans: Span[];
  readonly outcomes: Map<string, Outcome>;
  /** When each execution's start was acknowledged (`performance.now()`). */
  readonly acked: Map<string, number>;
  /** Bodies finished when the fault began. */
  readonly doneAtFault: number;
  readonly faultAt: number;
  readonly settledAt: number;
}

async function start(runtime: RedisRuntime, spans: Span[], keys: readonly string[], count: number) {
  const definition = lockedReactor(spans);
  const started = await runtime.engine.startMany(
    Array.from({ length: count }, (_, i) => ({ reactor: definition, input: { key: keys[i % keys.length]! } })),
  );
  const at = performance.now();
  return started.map((s) => [s.executionId, at] as const);
}

const finishedPerKey = (spans: readonly Span[], keys: readonly string[]): number =>
  Math.min(...keys.map((key) => spans.filter((s) => s.key === key).length));

/**
 * One run: start the executions, let `BEFORE_FAULT_PER_KEY` bodies of every key finish, inject
 * `fault` on the master of the queue's slot and the lock keys, start `AFTER_FAULT` more, and
 * follow every execution.
 */
async function runWithFault(
  prefix: string,
  fault: (handle: RedisClusterHandle, master: number) => Promise<void>,
): Promise<Run> {
  const handle = cluster.handle;
  const master = await handle.masterOf(`{${prefix}}`); // the queue's slot
  const keys = await keysOn(handle, prefix, master, KEYS);
  const spans: Span[] = [];
  const [starter, other] = workerRuntimes(handle, prefix, spans);
  const acked = new Map(await start(starter!, spans, keys, EXECUTIONS));
  starter!.startWorker({ concurrency: 8 });
  other!.startWorker({ concurrency: 8 });
  await untilTrue(
    `${BEFORE_FAULT_PER_KEY} locked bodies of every key did not finish`,
    () => finishedPerKey(spans, keys) >= BEFORE_FAULT_PER_KEY,
    60_000,
  );
  const doneAtFault = spans.length;
  const faultAt = performance.now();
  await fault(handle, master);
  const settledAt = performance.now();
  for (const [id, at] of await start(starter!, spans, keys, AFTER_FAULT)) acked.set(id, at);
  const outcomes = await settle(starter!, [...acked.keys()]);
  return { spans, outcomes, acked, doneAtFault, faultAt, settledAt };
}

const TOTAL = EXECUTIONS + AFTER_FAULT;

describe('a Redis Cluster failover in the middle of a run', () => {
  test('a manual CLUSTER FAILOVER of the lock keys’ master: all complete, no overlap, tokens keep increasing', async () => {
    const began = performance.now();
    const run = await runWithFault('fo-a', async (handle, master) => {
      const [replica] = await handle.replicasOf(master);
      await handle.failover(replica!);
      expect(await handle.masterOf('{fo-a}')).toBe(replica);
    });
    const { spans, outcomes, doneAtFault, faultAt, settledAt } = run;
    console.info(
      `[failover] graceful: ${JSON.stringify(tally(outcomes))}, ${spans.length} bodies (${doneAtFault} before), failover ${(settledAt - faultAt).toFixed(0)} ms, total ${((performance.now() - began) / 1000).toFixed(1)} s`,
    );
    expect(doneAtFault).toBeLessThan(EXECUTIONS); // the failover came mid-run
    expect(tally(outcomes)).toEqual({ completed: TOTAL });
    expect(spans.length).toBe(TOTAL); // no body ran twice: no checkpoint was lost
    expect(overlapping(spans)).toEqual([]);
    // Holders before the failover and holders that took the lock from the new master: the tokens
    // of every key increase from one holder to the next, across it.
    expect(tokenRegressions(spans)).toEqual([]);
    for (const key of new Set(spans.map((s) => s.key))) {
      const ofKey = spans.filter((s) => s.key === key);
      expect(ofKey.some((s) => s.exit < faultAt)).toBe(true);
      expect(ofKey.some((s) => s.enter > settledAt)).toBe(true);
    }
  }, 150_000);

  test('a SIGKILLed master: its replica takes over, every execution ends with a named cause, tokens keep increasing', async () => {
    const began = performance.now();
    const run = await runWithFault('fo-b', async (handle, master) => {
      const [replica] = await handle.replicasOf(master);
      await handle.kill(master);
      await handle.waitForMaster(replica!);
    });
    const { spans, outcomes, acked, doneAtFault, faultAt, settledAt } = run;
    const overlaps = overlapping(spans);
    const failures = [...outcomes.values()].filter((o) => o.status !== 'completed');
    console.info(
      `[failover] master killed: ${JSON.stringify(tally(outcomes))}, ${spans.length} bodies (${doneAtFault} before, ${spans.length - TOTAL} re-runs), ${overlaps.length} overlaps, promoted in ${(settledAt - faultAt).toFixed(0)} ms, causes ${JSON.stringify([...new Set(failures.map((f) => f.cause))])}, total ${((performance.now() - began) / 1000).toFixed(1)} s`,
    );
    expect(doneAtFault).toBeLessThan(EXECUTIONS); // the kill came mid-run
    expect(outcomes.size).toBe(TOTAL); // none left running
    for (const o of failures) if (o.status === 'failed') expect(o.cause).toMatch(/^[a-z_]+$|Error$/);
    // Only a start acknowledged in the last moment before the kill may have lost its record.
    const lostEarly = [...outcomes].filter(([id, o]) => o.status === 'lost' && acked.get(id)! < faultAt - 1_000);
    expect(lostEarly).toEqual([]);
    // Successive holders of a key have increasing tokens; holders that overlapped (a lock lost
    // with the master) have different ones, so a fenced downstream write rejects the older.
    expect(tokenRegressions(spans)).toEqual([]);
    for (const [a, b] of overlaps) expect(b.token).not.toBe(a.token);
  }, 150_000);
});
