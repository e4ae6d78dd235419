/**
 * P16: durable mode. The uncontended 3-step reactor with `checkpointIntervalMs: 0` (every step
 * on the record before the next one runs, each attempt's start marked before its body) processed
 * by two worker processes (`startWorker({ concurrency: 16 })` each) on a `redis-server` with
 * `appendonly yes` and `appendfsync always`, against raw BullMQ 3-job flows (`FlowProducer`:
 * `a` under `b` under `c`, each processor reading its child's value) processed by a plain BullMQ
 * `Worker` with the same concurrency in the same two processes, on the same server, in the same
 * run. The same pair is then measured with the default checkpoint interval (100 ms).
 *
 * A third contender, the protocol floor (not a target), is a plain BullMQ worker (same job
 * options, same concurrency, same processes) whose processor makes only the writes the subject's
 * worker makes for one execution in that mode, copied from a finished execution of the subject
 * (./support/p16-shared.ts `floorWrites`): the lease with the record read, then each record under
 * the lease with the events streamed before it, the last with the lease's release — no engine, no
 * step. Its ratio to the raw flows (`floor_ratio`) is what these writes allow at zero engine cost.
 *
 * Each round enqueues its executions / flows from this process with no worker running (batches
 * of 100: `engine.start` calls at once, `FlowProducer.addBulk`), then starts the workers and times
 * from the first delivery to the last completion. Rounds alternate the sides (and which goes
 * first). Figure: executions/s ÷ flows/s, the median of the rounds' ratios; target ≥ 1.0.
 *
 * Per execution, on both sides, for the enqueue and the processing phase apart:
 * - the commands Redis ran and the scripts among them (`INFO commandstats` deltas: commands a
 *   script runs are counted too);
 * - the fsyncs Redis made: `perf stat` counting the server's `fdatasync`/`fsync` system calls
 *   (kernel tracepoints; Redis 7.0's `INFO persistence` has no fsync counter), and the bytes its
 *   append-only file grew (`aof_current_size`);
 * - the commands the worker processes (and, for the enqueue, this process) sent, by command and
 *   by script name (EVALSHA SHAs mapped to ts-reactor's scripts and BullMQ's commands), and the
 *   batches they went in (one connection, one event-loop tick).
 *
 * `P16_EXECUTIONS` (environment, default 300) sets the executions (and flows) per round.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FlowProducer, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createRedisRuntime, type RedisRuntime } from '../src/bullmq.js';
import type { AnyReactorDefinition } from '../src/index.js';
import type { ExecutionRecord } from '../src/ports/store.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { spawnChildren, type BenchChild } from './support/children.js';
import {
  countSentCommands,
  floorPending,
  RAW_JOB_OPTIONS,
  rawFlow,
  takeSentCounts,
  threeSteps,
  type P16ChildConfig,
  type SentCounts,
} from './support/p16-shared.js';
import { emit, median, round, type Verdict } from './support/runner.js';

const PROCESSES = 2;
const CONCURRENCY = 16;
const EXECUTIONS = Number(process.env.P16_EXECUTIONS ?? 300);
const WARMUP_ROUNDS = 1;
const ROUNDS = 3;
const TARGET = 1.0;
const PREFIX = 'p16';
const RAW_QUEUE = 'p16-raw';
const FLOOR_QUEUE = 'p16-floor';
const ENQUEUE_BATCH = 100;
const ROUND_TIMEOUT_MS = 60_000;
const POLL_MS = 25;
const PERF_ATTACH_MS = 150;
const MODES = [
  { mode: 'durable', checkpointIntervalMs: 0 },
  { mode: 'default', checkpointIntervalMs: 100 },
] as const;
type Mode = (typeof MODES)[number]['mode'];
type Side = 'subject' | 'raw' | 'floor';
const SIDES: readonly Side[] = ['subject', 'raw', 'floor'];

const WORKER_FILE = fileURLToPath(new URL('./support/p16-worker.ts', import.meta.url));

/** `INFO commandstats` as calls per command. */
type CommandCalls = Map<string, number>;

function parseCommandStats(info: string): CommandCalls {
  const calls: CommandCalls = new Map();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1]!, Number(match[2]));
  return calls;
}

function callsDelta(before: CommandCalls, after: CommandCalls): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [name, calls] of after) {
    const d = calls - (before.get(name) ?? 0);
    if (d > 0) delta[name] = d;
  }
  return delta;
}

function aofSize(info: string): number {
  return Number(/^aof_current_size:(\d+)/m.exec(info)?.[1] ?? 0);
}

/** Counts the server's fsync-family system calls while it runs (`perf stat` on two tracepoints). */
class FsyncCounter {
  readonly #perf: ReturnType<typeof spawn>;
  #output = '';
  readonly #exited: Promise<void>;

  constructor(pid: number) {
    this.#perf = spawn(
      'perf',
      ['stat', '-x', ',', '-e', 'syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync', '-p', String(pid)],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.#perf.stderr?.on('data', (chunk: Buffer) => (this.#output += chunk.toString()));
    this.#exited = new Promise((resolve) => {
      this.#perf.once('exit', () => resolve());
      this.#perf.once('error', () => resolve());
    });
  }

  static async start(pid: number): Promise<FsyncCounter> {
    const counter = new FsyncCounter(pid);
    await new Promise((resolve) => setTimeout(resolve, PERF_ATTACH_MS));
    return counter;
  }

  /** Stops counting; the number of calls, or undefined when perf could not count them. */
  async stop(): Promise<number | undefined> {
    this.#perf.kill('SIGINT');
    await this.#exited;
    let total = 0;
    let seen = 0;
    for (const line of this.#output.split('\n')) {
      const [count, , event] = line.split(',');
      if (!event?.startsWith('syscalls:sys_enter_f')) continue;
      if (!/^\d+$/.test(count ?? '')) return undefined;
      total += Number(count);
      seen++;
    }
    return seen === 2 ? total : undefined;
  }
}

/** What one phase (enqueue or processing) of one round cost. */
interface PhaseCost {
  readonly server: Record<string, number>;
  readonly fsyncs: number | undefined;
  readonly aofBytes: number;
  readonly sent: SentCounts;
}

interface RoundResult {
  readonly perSecond: number;
  readonly enqueue: PhaseCost;
  readonly processing: PhaseCost;
}

function addInto(target: Record<string, number>, source: Readonly<Record<string, number>>): void {
  for (const [k, v] of Object.entries(source)) target[k] = (target[k] ?? 0) + v;
}

function mergeSent(all: readonly SentCounts[]): SentCounts {
  const merged: SentCounts = { commands: {}, scripts: {}, batches: 0, total: 0 };
  for (const s of all) {
    addInto(merged.commands, s.commands);
    addInto(merged.scripts, s.scripts);
    merged.batches += s.batches;
    merged.total += s.total;
  }
  return merged;
}

interface HarnessParts {
  readonly stats: Redis;
  readonly redisPid: number;
  readonly children: readonly BenchChild[];
  readonly runtime: RedisRuntime;
  readonly definition: AnyReactorDefinition;
  readonly flows: FlowProducer;
  readonly floorQueue: Queue;
}

class Harness {
  readonly stats: Redis;
  readonly redisPid: number;
  readonly children: readonly BenchChild[];
  readonly runtime: RedisRuntime;
  readonly definition: AnyReactorDefinition;
  readonly flows: FlowProducer;
  readonly floorQueue: Queue;
  /** The last execution the subject ran, by checkpoint interval: what the floor copies. */
  readonly #lastSubject = new Map<number, string>();
  #floorSeq = 0;

  constructor(parts: HarnessParts) {
    this.stats = parts.stats;
    this.redisPid = parts.redisPid;
    this.children = parts.children;
    this.runtime = parts.runtime;
    this.definition = parts.definition;
    this.flows = parts.flows;
    this.floorQueue = parts.floorQueue;
  }

  async #snapshot(): Promise<{ calls: CommandCalls; aof: number }> {
    const [commandstats, persistence] = await Promise.all([
      this.stats.info('commandstats'),
      this.stats.info('persistence'),
    ]);
    return { calls: parseCommandStats(commandstats), aof: aofSize(persistence) };
  }

  /** The finished record the floor of `checkpointIntervalMs` copies, and its id. */
  async #template(checkpointIntervalMs: number): Promise<{ readonly id: string; readonly final: ExecutionRecord }> {
    const id = this.#lastSubject.get(checkpointIntervalMs);
    const final = id === undefined ? undefined : await this.runtime.engine.store.get(id);
    if (id === undefined || final?.status !== 'completed')
      throw new Error('P16: no completed record for the floor to copy');
    return { id, final };
  }

  async #enqueue(side: Side, checkpointIntervalMs: number): Promise<PhaseCost> {
    const final = side === 'floor' ? (await this.#template(checkpointIntervalMs)).final : undefined;
    const before = await this.#snapshot();
    const fsyncs = await FsyncCounter.start(this.redisPid);
    takeSentCounts();
    for (let i = 0; i < EXECUTIONS; i += ENQUEUE_BATCH) {
      const size = Math.min(ENQUEUE_BATCH, EXECUTIONS - i);
      if (side === 'subject') {
        const batch = await Promise.all(
          Array.from({ length: size }, () => this.runtime.engine.start(this.definition, {})),
        );
        if (batch.some((r) => r.status !== 'queued')) throw new Error('P16: a start was not queued');
        this.#lastSubject.set(checkpointIntervalMs, batch[batch.length - 1]!.executionId);
      } else if (side === 'raw') {
        await this.flows.addBulk(Array.from({ length: size }, () => rawFlow(RAW_QUEUE)));
      } else {
        const ids = Array.from({ length: size }, () => `p16-floor-${++this.#floorSeq}`);
        await Promise.all(ids.map((id) => this.runtime.engine.store.save(floorPending(final!, id))));
        await this.floorQueue.addBulk(
          ids.map((executionId) => ({ name: 'floor', data: { executionId }, opts: RAW_JOB_OPTIONS })),
        );
      }
    }
    const sent = takeSentCounts();
    const fsyncCount = await fsyncs.stop();
    const after = await this.#snapshot();
    return {
      server: callsDelta(before.calls, after.calls),
      fsyncs: fsyncCount,
      aofBytes: after.aof - before.aof,
      sent,
    };
  }

  async #all(command: string, key: string): Promise<Record<string, unknown>[]> {
    for (const child of this.children) child.send(command);
    const lines = await Promise.all(this.children.map((c) => c.next((l) => key in l, ROUND_TIMEOUT_MS)));
    return lines.map((l) => l[key] as Record<string, unknown>);
  }

  async round(side: Side, checkpointIntervalMs: number): Promise<RoundResult> {
    const prepare =
      side === 'subject'
        ? `subject ${checkpointIntervalMs}`
        : side === 'raw'
          ? 'raw'
          : `floor ${checkpointIntervalMs} ${(await this.#template(checkpointIntervalMs)).id}`;
    await this.#all(prepare, 'prepared');
    try {
      const enqueue = await this.#enqueue(side, checkpointIntervalMs);
      const before = await this.#snapshot();
      const fsyncs = await FsyncCounter.start(this.redisPid);
      await this.#all('go', 'going');
      const deadline = Date.now() + ROUND_TIMEOUT_MS;
      let stats: { done: number; failed: number; first: number; last: number }[] = [];
      for (;;) {
        stats = (await this.#all('stats', 'stats')) as typeof stats;
        if (stats.reduce((sum, s) => sum + s.done, 0) >= EXECUTIONS) break;
        if (Date.now() > deadline) throw new Error(`P16: a ${side} round did not finish within ${ROUND_TIMEOUT_MS} ms`);
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      const sent = mergeSent((await this.#all('counts', 'counts')) as unknown as SentCounts[]);
      const fsyncCount = await fsyncs.stop();
      const after = await this.#snapshot();
      const failed = stats.reduce((sum, s) => sum + s.failed, 0);
      if (failed > 0) throw new Error(`P16: ${failed} ${side} executions failed`);
      const onParentClock = stats.map((s, i) => ({ ...s, child: this.children[i]! }));
      const starts = onParentClock.filter((s) => s.first > 0).map((s) => s.child.toParent(s.first));
      const ends = onParentClock.filter((s) => s.last > 0).map((s) => s.child.toParent(s.last));
      const wall = Math.max(...ends) - Math.min(...starts);
      return {
        perSecond: (EXECUTIONS * 1000) / wall,
        enqueue,
        processing: {
          server: callsDelta(before.calls, after.calls),
          fsyncs: fsyncCount,
          aofBytes: after.aof - before.aof,
          sent,
        },
      };
    } finally {
      await this.#all('stop', 'stopped');
    }
  }
}

/** Per-execution view of the phases of several rounds. */
function perExecution(results: readonly RoundResult[], phase: 'enqueue' | 'processing'): Record<string, unknown> {
  const n = results.length * EXECUTIONS;
  const per = (v: number): number => round(v / n, 3);
  const server: Record<string, number> = {};
  let fsyncs: number | undefined = 0;
  let aofBytes = 0;
  for (const r of results) {
    addInto(server, r[phase].server);
    fsyncs = fsyncs === undefined || r[phase].fsyncs === undefined ? undefined : fsyncs + r[phase].fsyncs;
    aofBytes += r[phase].aofBytes;
  }
  const sent = mergeSent(results.map((r) => r[phase].sent));
  const perMap = (m: Record<string, number>): Record<string, number> =>
    Object.fromEntries(
      Object.entries(m)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, per(v)]),
    );
  const serverTotal = Object.values(server).reduce((a, b) => a + b, 0);
  const scripts = (server.evalsha ?? 0) + (server.eval ?? 0);
  return {
    server_commands: per(serverTotal),
    server_scripts: per(scripts),
    fsyncs: fsyncs === undefined ? null : per(fsyncs),
    aof_bytes: per(aofBytes),
    sent_commands: per(sent.total),
    sent_batches: per(sent.batches),
    sent_scripts_by_name: perMap(sent.scripts),
    sent_by_command: perMap(sent.commands),
    server_by_command: perMap(server),
  };
}

function totals(results: readonly RoundResult[]): { commands: number; scripts: number; fsyncs: number | null } {
  const n = results.length * EXECUTIONS;
  let commands = 0;
  let scripts = 0;
  let fsyncs: number | null = 0;
  for (const r of results) {
    for (const phase of [r.enqueue, r.processing]) {
      commands += Object.values(phase.server).reduce((a, b) => a + b, 0);
      scripts += (phase.server.evalsha ?? 0) + (phase.server.eval ?? 0);
      fsyncs = fsyncs === null || phase.fsyncs === undefined ? null : fsyncs + phase.fsyncs;
    }
  }
  return {
    commands: round(commands / n, 2),
    scripts: round(scripts / n, 2),
    fsyncs: fsyncs === null ? null : round(fsyncs / n, 2),
  };
}

/** Runs P16 and returns its verdict. */
export async function runP16(): Promise<Verdict> {
  const server = await startRedisServer({ persistence: 'aof', extraArgs: ['--auto-aof-rewrite-percentage', '0'] });
  let children: BenchChild[] = [];
  let runtime: RedisRuntime | undefined;
  let flows: FlowProducer | undefined;
  let floorQueue: Queue | undefined;
  const stats = new Redis(server.url, { maxRetriesPerRequest: null });
  try {
    countSentCommands();
    const redisPid = Number(/^process_id:(\d+)/m.exec(await stats.info('server'))?.[1]);
    const definition = threeSteps();
    runtime = createRedisRuntime({ url: server.url, prefix: PREFIX, reactors: [definition] });
    await runtime.ready();
    flows = new FlowProducer({ connection: { url: server.url }, prefix: PREFIX });
    flows.on('error', () => undefined);
    floorQueue = new Queue(FLOOR_QUEUE, { connection: { url: server.url }, prefix: PREFIX });
    floorQueue.on('error', () => undefined);
    const config: P16ChildConfig = {
      url: server.url,
      prefix: PREFIX,
      rawQueue: RAW_QUEUE,
      floorQueue: FLOOR_QUEUE,
      concurrency: CONCURRENCY,
    };
    children = await spawnChildren(
      WORKER_FILE,
      Array.from({ length: PROCESSES }, () => config),
    );
    const harness = new Harness({ stats, redisPid, children, runtime, definition, flows, floorQueue });

    const results: Record<Mode, Record<Side, RoundResult[]>> = {
      durable: { subject: [], raw: [], floor: [] },
      default: { subject: [], raw: [], floor: [] },
    };
    const ratios: Record<Mode, number[]> = { durable: [], default: [] };
    const floorRatios: Record<Mode, number[]> = { durable: [], default: [] };
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      for (const { mode, checkpointIntervalMs } of MODES) {
        // The floor copies the subject's record, so it runs after it.
        const order: Side[] = r % 2 === 0 ? ['subject', 'raw', 'floor'] : ['raw', 'subject', 'floor'];
        const got: Partial<Record<Side, RoundResult>> = {};
        for (const side of order) got[side] = await harness.round(side, checkpointIntervalMs);
        if (r < WARMUP_ROUNDS) continue;
        const subject = got.subject!;
        const raw = got.raw!;
        const floor = got.floor!;
        results[mode].subject.push(subject);
        results[mode].raw.push(raw);
        results[mode].floor.push(floor);
        ratios[mode].push(subject.perSecond / raw.perSecond);
        floorRatios[mode].push(floor.perSecond / raw.perSecond);
        emit({
          bench: 'P16',
          figure: 'round',
          mode,
          round: r - WARMUP_ROUNDS + 1,
          executions_per_s: round(subject.perSecond, 0),
          raw_flows_per_s: round(raw.perSecond, 0),
          ratio: round(subject.perSecond / raw.perSecond, 3),
          floor_jobs_per_s: round(floor.perSecond, 0),
          floor_ratio: round(floor.perSecond / raw.perSecond, 3),
        });
      }
    }

    const summary: Record<string, unknown> = {};
    for (const { mode, checkpointIntervalMs } of MODES) {
      for (const side of SIDES) {
        emit({
          bench: 'P16',
          figure: 'per_execution',
          mode,
          side,
          checkpoint_interval_ms: side === 'raw' ? null : checkpointIntervalMs,
          per_s: round(median(results[mode][side].map((x) => x.perSecond)), 0),
          enqueue: perExecution(results[mode][side], 'enqueue'),
          processing: perExecution(results[mode][side], 'processing'),
        });
      }
      const subject = totals(results[mode].subject);
      const raw = totals(results[mode].raw);
      const floor = totals(results[mode].floor);
      const over = (a: number | null, b: number | null): number | null =>
        a === null || b === null || b === 0 ? null : round(a / b, 3);
      summary[mode] = {
        ratio: round(median(ratios[mode]), 3),
        executions_per_s: round(median(results[mode].subject.map((x) => x.perSecond)), 0),
        raw_flows_per_s: round(median(results[mode].raw.map((x) => x.perSecond)), 0),
        floor_ratio: round(median(floorRatios[mode]), 3),
        floor_jobs_per_s: round(median(results[mode].floor.map((x) => x.perSecond)), 0),
        per_execution: { subject, raw, floor },
        subject_over_raw: {
          commands: over(subject.commands, raw.commands),
          scripts: over(subject.scripts, raw.scripts),
          fsyncs: over(subject.fsyncs, raw.fsyncs),
        },
      };
      emit({ bench: 'P16', figure: 'summary', mode, ...(summary[mode] as Record<string, unknown>) });
    }
    const persistence = await stats.info('persistence');
    const field = (name: string): string | undefined =>
      new RegExp(`^${name}:(.*)$`, 'm').exec(persistence)?.[1]?.trim();
    emit({
      bench: 'P16',
      figure: 'server',
      appendfsync: ((await stats.config('GET', 'appendfsync')) as string[])[1],
      aof_rewrites: Number(field('aof_rewrites')),
      aof_last_write_status: field('aof_last_write_status'),
      aof_delayed_fsync: Number(field('aof_delayed_fsync')),
      fsync_count_source:
        'perf stat: syscalls:sys_enter_fdatasync + syscalls:sys_enter_fsync of the redis-server process',
    });

    const value = median(ratios.durable);
    return {
      bench: 'P16',
      metric: 'durable_throughput_vs_raw_bullmq_flows',
      value: round(value, 3),
      target: `>= ${TARGET}`,
      anchor: {
        ...summary,
        appendfsync: 'always',
        processes: PROCESSES,
        concurrency: CONCURRENCY,
        executions_per_round: EXECUTIONS,
        rounds: ROUNDS,
        steps: 3,
      },
      pass: value >= TARGET,
    };
  } finally {
    await Promise.all(children.map((c) => c.kill()));
    await runtime?.close().catch(() => undefined);
    await flows?.close().catch(() => undefined);
    await floorQueue?.close().catch(() => undefined);
    stats.disconnect();
    await server.dispose();
  }
}
