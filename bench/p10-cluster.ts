/**
 * P10: the Redis side on a local 3-master Redis Cluster vs one server, same machine, same
 * process, same run (rounds alternate between the two). Two figures on each:
 * - worker throughput: an uncontended 3-step reactor, N executions enqueued with no worker
 *   running, then one worker of concurrency 16 times the first delivery to the last completion;
 * - a locked step's latency: a 1-step reactor whose step takes a lock on a fresh key, run inline
 *   one after another; p50 of `engine.run`.
 * Also per execution, on each: the keys it leaves (SCAN of the runtime's prefix on every master,
 * BullMQ's own keys apart); the commands this process's ioredis connections sent (every
 * connection's `sendCommand`, BullMQ's included: the round trips, but for commands sent
 * together); and the commands Redis ran (INFO `total_commands_processed` summed over the
 * masters, the commands inside scripts included).
 * Verdict: cluster throughput ÷ single-server throughput (median of per-round ratios), target
 * ≥ 0.8. On one machine every node shares its cores, so the cluster pays its extra hops without
 * gaining machines.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../src/bullmq.js';
import { reactor, type AnyReactorDefinition } from '../src/index.js';
import { startRedisCluster } from '../test/support/redis-cluster.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { emit, median, round, type Verdict } from './support/runner.js';

const CONCURRENCY = 16;
const RUNS = 800;
const LOCKED_RUNS = 200;
const WARMUP_ROUNDS = 1;
const ROUNDS = 3;
const TARGET = 0.8;
const ENQUEUE_BATCH = 100;
const ROUND_TIMEOUT_MS = 60_000;

type Side = 'single' | 'cluster';

interface Target {
  readonly side: Side;
  readonly prefix: string;
  readonly runtime: RedisRuntime;
  /** One connection per master (the one server, or each master of the cluster). */
  readonly masters: readonly Redis[];
}

function definitions(side: Side) {
  const three = reactor(`p10-three-${side}`)
    .step('a', { run: () => 1 })
    .step('b', { args: ($) => ({ a: $.result('a') }), run: ({ a }) => a + 1 })
    .step('c', { args: ($) => ({ b: $.result('b') }), run: ({ b }) => b + 1 })
    .returns('c');
  const locked = reactor(`p10-locked-${side}`)
    .input({ key: z.string() })
    .step('work', { lock: { key: ({ key }) => key, ttl: '10s' }, run: () => 'ok' })
    .returns('work');
  return { three, locked };
}

/** Commands sent by every ioredis connection of this process (a cluster's go through its nodes' connections). */
let sent = 0;
const originalSend = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<Redis['sendCommand']>) {
  sent++;
  return originalSend.apply(this, args);
};

async function commands(masters: readonly Redis[]): Promise<number> {
  const infos = await Promise.all(masters.map((m) => m.info('stats')));
  return infos.reduce((sum, info) => sum + Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0), 0);
}

async function keysUnder(masters: readonly Redis[], prefix: string): Promise<number> {
  let count = 0;
  for (const master of masters) {
    let cursor = '0';
    do {
      const [next, batch] = await master.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      count += batch.filter((key) => !key.startsWith(`${prefix}:ts-reactor:`)).length; // BullMQ's keys on one server
    } while (cursor !== '0');
  }
  return count;
}

async function throughputRound(target: Target, definition: AnyReactorDefinition): Promise<number> {
  for (let i = 0; i < RUNS; i += ENQUEUE_BATCH)
    await target.runtime.engine.startMany(
      Array.from({ length: Math.min(ENQUEUE_BATCH, RUNS - i) }, () => ({ reactor: definition, input: {} })),
    );
  let first = 0;
  let last = 0;
  let done = 0;
  let timer: NodeJS.Timeout | undefined;
  const finished = new Promise<void>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`P10: a ${target.side} round did not finish`)), ROUND_TIMEOUT_MS);
    const unsubscribe = target.runtime.engine.subscribe((event) => {
      if (event.type === 'run.resumed' && first === 0) first = performance.now();
      if (event.type !== 'run.completed' && event.type !== 'run.failed') return;
      last = performance.now();
      if (++done === RUNS) {
        unsubscribe();
        resolve();
      }
    });
  });
  const worker = target.runtime.startWorker({ concurrency: CONCURRENCY });
  try {
    await finished;
  } finally {
    clearTimeout(timer);
    await worker.stop();
  }
  return (RUNS * 1000) / (last - first);
}

async function lockedRound(target: Target, definition: AnyReactorDefinition, roundNo: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < LOCKED_RUNS; i++) {
    const began = performance.now();
    const result = await target.runtime.engine.run(definition, { key: `p10:${roundNo}:${i}` });
    times.push(performance.now() - began);
    if (result.status !== 'completed') throw new Error(`P10: a locked run ended ${result.status}`);
  }
  return median(times);
}

/** Runs P10 and returns its verdict. */
export async function runP10(): Promise<Verdict> {
  const server = await startRedisServer();
  const cluster = await startRedisCluster();
  const targets: Target[] = [];
  try {
    const defs = { single: definitions('single'), cluster: definitions('cluster') };
    targets.push({
      side: 'single',
      prefix: 'p10s',
      runtime: createRedisRuntime({ url: server.url, prefix: 'p10s', reactors: Object.values(defs.single) }),
      masters: [new Redis(server.url)],
    });
    targets.push({
      side: 'cluster',
      prefix: 'p10c',
      runtime: createRedisRuntime({
        cluster: { nodes: cluster.nodes },
        prefix: 'p10c',
        reactors: Object.values(defs.cluster),
      }),
      masters: cluster.nodes.map((node) => new Redis(node.port, node.host)),
    });
    const figures = {
      single: { tput: [] as number[], p50: [] as number[] },
      cluster: { tput: [] as number[], p50: [] as number[] },
    };
    const ratios: number[] = [];
    const perExecution = { single: { keys: 0, sent: 0, commands: 0 }, cluster: { keys: 0, sent: 0, commands: 0 } };
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      const tput: Partial<Record<Side, number>> = {};
      for (const target of targets) {
        const keysBefore = await keysUnder(target.masters, target.prefix);
        const commandsBefore = await commands(target.masters);
        const sentBefore = sent;
        tput[target.side] = await throughputRound(target, defs[target.side].three);
        const sentDuring = sent - sentBefore;
        const cost = {
          keys: ((await keysUnder(target.masters, target.prefix)) - keysBefore) / RUNS,
          sent: sentDuring / RUNS,
          commands: ((await commands(target.masters)) - commandsBefore) / RUNS,
        };
        const p50 = await lockedRound(target, defs[target.side].locked, r);
        if (r < WARMUP_ROUNDS) continue;
        perExecution[target.side] = cost;
        figures[target.side].tput.push(tput[target.side]!);
        figures[target.side].p50.push(p50);
      }
      if (r < WARMUP_ROUNDS) continue;
      const ratio = tput.cluster! / tput.single!;
      ratios.push(ratio);
      emit({
        bench: 'P10',
        figure: 'round',
        round: r - WARMUP_ROUNDS + 1,
        single_executions_per_s: round(tput.single!, 0),
        cluster_executions_per_s: round(tput.cluster!, 0),
        ratio: round(ratio, 3),
        single_locked_p50_ms: round(figures.single.p50.at(-1)!, 2),
        cluster_locked_p50_ms: round(figures.cluster.p50.at(-1)!, 2),
      });
    }
    for (const side of ['single', 'cluster'] as const)
      emit({
        bench: 'P10',
        figure: side,
        executions_per_s: round(median(figures[side].tput), 0),
        locked_step_p50_ms: round(median(figures[side].p50), 2),
        keys_per_execution: round(perExecution[side].keys, 2),
        commands_sent_per_execution: round(perExecution[side].sent, 1),
        redis_commands_per_execution: round(perExecution[side].commands, 1),
      });
    const ratio = median(ratios);
    return {
      bench: 'P10',
      metric: 'cluster_throughput_vs_single_server',
      value: round(ratio, 3),
      target: `>= ${TARGET}`,
      anchor: {
        single_executions_per_s: round(median(figures.single.tput), 0),
        cluster_executions_per_s: round(median(figures.cluster.tput), 0),
        locked_p50_ms_ratio: round(median(figures.cluster.p50) / median(figures.single.p50), 3),
        single_commands_sent_per_execution: round(perExecution.single.sent, 1),
        cluster_commands_sent_per_execution: round(perExecution.cluster.sent, 1),
        keys_per_execution: {
          single: round(perExecution.single.keys, 2),
          cluster: round(perExecution.cluster.keys, 2),
        },
        masters: cluster.nodes.length,
        concurrency: CONCURRENCY,
        executions_per_round: RUNS,
        rounds: ROUNDS,
        steps: 3,
      },
      pass: ratio >= TARGET,
    };
  } finally {
    for (const target of targets) {
      await target.runtime.close().catch(() => undefined);
      for (const master of target.masters) master.disconnect();
    }
    await cluster.dispose();
    await server.dispose();
  }
}
