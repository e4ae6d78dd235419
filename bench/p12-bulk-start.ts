/**
 * P12: bulk start. 1,000 background starts of a one-step reactor on one throwaway Redis, with
 * no worker running: one `engine.startMany` of 1,000 entries against 1,000 `engine.start` calls
 * awaited one after another, same runtime, same run (rounds alternate, after one untimed warm-up
 * round of each). Figures per side: starts per second, the commands this process's ioredis
 * connections sent and the socket writes they went out in (per execution), and for the bulk
 * side the number of ioredis pipelines (one socket write each) that carried the job adds
 * (BullMQ `addBulk`).
 * Anchor, in the same rounds: a plain BullMQ `Queue` on the same server, 1,000 `add` calls awaited
 * one after another against one `addBulk` of 1,000, with ts-reactor's job options.
 * Verdict: sequential time ÷ bulk time (median of per-round ratios), target ≥ 5.
 *
 * This file imports `bullmq` for the anchor only.
 *
 * @module
 */
import { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { createRedisRuntime } from '../src/bullmq.js';
import { reactor } from '../src/index.js';
import { INFRA_ATTEMPTS, INFRA_BACKOFF_MS } from '../src/queue/policy.js';
import { bullmqKeepJobs, DEFAULT_JOB_RETENTION } from '../src/queue/job-retention.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { emit, median, round, type Verdict } from './support/runner.js';

const STARTS = 1_000;
const WARMUP_ROUNDS = 1;
const ROUNDS = 5;
const TARGET = 5;

/** What this process's connections did: commands sent, socket flushes, ioredis pipelines sent. */
const counters = { commands: 0, writes: 0, pipelines: 0 };
const seenPipelines = new WeakSet<object>();
const originalSend = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<Redis['sendCommand']>) {
  counters.commands++;
  const stream = args[1] as { isPipeline?: boolean } | undefined; // an ioredis pipeline passes its own
  if (stream?.isPipeline && !seenPipelines.has(stream)) {
    seenPipelines.add(stream);
    counters.pipelines++;
  }
  return originalSend.apply(this, args);
};
/** A socket's flushes to the kernel: one `_write` or `_writev` each (corked writes go out together). */
type Flush = (this: Socket, ...args: unknown[]) => void;
const sockets = Socket.prototype as unknown as { _write: Flush; _writev: Flush };
for (const method of ['_write', '_writev'] as const) {
  const original = sockets[method];
  sockets[method] = function (this: Socket, ...args: unknown[]) {
    counters.writes++;
    original.apply(this, args);
  };
}

interface SideFigures {
  readonly ms: number;
  readonly commands: number;
  readonly writes: number;
  readonly pipelines: number;
}

async function timed(run: () => Promise<void>): Promise<SideFigures> {
  const before = { ...counters };
  const began = performance.now();
  await run();
  return {
    ms: performance.now() - began,
    commands: counters.commands - before.commands,
    writes: counters.writes - before.writes,
    pipelines: counters.pipelines - before.pipelines,
  };
}

function perExecution(figures: SideFigures): Record<string, number> {
  return {
    starts_per_s: round((STARTS * 1000) / figures.ms, 0),
    commands_sent_per_execution: round(figures.commands / STARTS, 2),
    socket_writes_per_execution: round(figures.writes / STARTS, 3),
  };
}

/** Runs P12 and returns its verdict. */
export async function runP12(): Promise<Verdict> {
  const server = await startRedisServer();
  const order = reactor('p12-order')
    .input({ n: z.number().int() })
    .step('work', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => n })
    .returns('work');
  const runtime = createRedisRuntime({ url: server.url, prefix: 'p12', reactors: [order] });
  const queue = new Queue('p12-raw', { connection: { url: server.url }, prefix: 'p12' });
  queue.on('error', () => undefined);
  const opts = {
    attempts: INFRA_ATTEMPTS,
    backoff: { type: 'exponential', delay: INFRA_BACKOFF_MS },
    removeOnComplete: bullmqKeepJobs(DEFAULT_JOB_RETENTION.completed),
  };
  let rawJob = 0;
  try {
    const rawSequential = async (): Promise<void> => {
      for (let n = 0; n < STARTS; n++) await queue.add('raw', { n }, { ...opts, jobId: `raw-${++rawJob}` });
    };
    const rawBulk = async (): Promise<void> => {
      await queue.addBulk(
        Array.from({ length: STARTS }, (_, n) => ({
          name: 'raw',
          data: { n },
          opts: { ...opts, jobId: `raw-${++rawJob}` },
        })),
      );
    };
    const sequential = async (): Promise<void> => {
      for (let n = 0; n < STARTS; n++) {
        const result = await runtime.engine.start(order, { n });
        if (result.status !== 'queued') throw new Error(`P12: a start ended ${result.status}`);
      }
    };
    const bulk = async (): Promise<void> => {
      const results = await runtime.engine.startMany(
        Array.from({ length: STARTS }, (_, n) => ({ reactor: order, input: { n } })),
      );
      if (results.some((r) => r.status !== 'queued')) throw new Error('P12: a bulk entry was not queued');
    };
    const ratios: number[] = [];
    const rawRatios: number[] = [];
    const sides = { sequential: [] as SideFigures[], bulk: [] as SideFigures[] };
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      const seq = await timed(sequential);
      const many = await timed(bulk);
      const rawSeq = await timed(rawSequential);
      const rawMany = await timed(rawBulk);
      if (r < WARMUP_ROUNDS) continue;
      rawRatios.push(rawSeq.ms / rawMany.ms);
      sides.sequential.push(seq);
      sides.bulk.push(many);
      ratios.push(seq.ms / many.ms);
      emit({
        bench: 'P12',
        figure: 'round',
        round: r - WARMUP_ROUNDS + 1,
        sequential_ms: round(seq.ms, 1),
        bulk_ms: round(many.ms, 1),
        ratio: round(seq.ms / many.ms, 2),
        bulk_enqueue_pipelines: many.pipelines,
        raw_bullmq_sequential_ms: round(rawSeq.ms, 1),
        raw_bullmq_bulk_ms: round(rawMany.ms, 1),
        raw_bullmq_ratio: round(rawSeq.ms / rawMany.ms, 2),
      });
    }
    const middle = (list: readonly SideFigures[]): SideFigures => {
      const ms = median(list.map((f) => f.ms));
      return list.find((f) => f.ms === ms) ?? list[0]!;
    };
    const seq = middle(sides.sequential);
    const many = middle(sides.bulk);
    emit({ bench: 'P12', figure: 'sequential', ...perExecution(seq) });
    emit({ bench: 'P12', figure: 'bulk', ...perExecution(many), enqueue_pipelines: many.pipelines });
    const ratio = median(ratios);
    return {
      bench: 'P12',
      metric: 'bulk_start_speedup_vs_sequential',
      value: round(ratio, 2),
      target: `>= ${TARGET}`,
      anchor: {
        sequential_starts_per_s: round((STARTS * 1000) / median(sides.sequential.map((f) => f.ms)), 0),
        bulk_starts_per_s: round((STARTS * 1000) / median(sides.bulk.map((f) => f.ms)), 0),
        bulk_enqueue_pipelines: many.pipelines,
        raw_bullmq_add_bulk_speedup: round(median(rawRatios), 2),
        starts_per_round: STARTS,
        rounds: ROUNDS,
      },
      pass: ratio >= TARGET,
    };
  } finally {
    await queue.close().catch(() => undefined);
    await runtime.close().catch(() => undefined);
    await server.dispose();
  }
}
