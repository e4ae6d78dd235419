/**
 * What P16 and its worker processes share: the child config, the 3-step reactor, the raw BullMQ
 * flow, the protocol floor's writes, and the per-process count of the commands ioredis
 * connections send.
 *
 * @module
 */
import type { FlowJob } from 'bullmq';
import { Redis } from 'ioredis';
import { reactor, type AnyReactorDefinition } from '../../src/index.js';
import type { ReactorEvent } from '../../src/ports/events.js';
import type { ExecutionRecord } from '../../src/ports/store.js';
import { INFRA_ATTEMPTS, INFRA_BACKOFF_MS, KEEP_COMPLETED_MS, KEEP_FINISHED_COUNT } from '../../src/queue/policy.js';
import { scripts } from '../../src/storage/redis/scripts.js';

/** The JSON config of a P16 child. */
export interface P16ChildConfig {
  readonly url: string;
  /** Key prefix of the ts-reactor runtimes, and the BullMQ prefix of the raw flows' queue. */
  readonly prefix: string;
  /** The plain BullMQ queue every job of the raw flows goes to. */
  readonly rawQueue: string;
  /** The plain BullMQ queue of the protocol floor's jobs. */
  readonly floorQueue: string;
  /** Concurrency of the child's worker, on both sides. */
  readonly concurrency: number;
}

/** The subject: three steps, each reading the one before. */
export function threeSteps(): AnyReactorDefinition {
  return reactor('p16-three-steps')
    .step('a', { run: () => 1 })
    .step('b', { args: ($) => ({ a: $.result('a') }), run: ({ a }) => a + 1 })
    .step('c', { args: ($) => ({ b: $.result('b') }), run: ({ b }) => b + 1 })
    .returns('c');
}

/** The job options of the raw flows' jobs: ts-reactor's own (attempts, backoff, retention). */
export const RAW_JOB_OPTIONS = {
  attempts: INFRA_ATTEMPTS,
  backoff: { type: 'exponential', delay: INFRA_BACKOFF_MS },
  removeOnComplete: { age: Math.ceil(KEEP_COMPLETED_MS / 1000), count: KEEP_FINISHED_COUNT },
} as const;

/** One raw 3-job flow: `a`, then `b` (its parent), then `c` (the root), each on `queue`. */
export function rawFlow(queue: string): FlowJob {
  const job = (name: string, children: FlowJob[]): FlowJob => ({
    name,
    queueName: queue,
    opts: RAW_JOB_OPTIONS,
    children,
  });
  return job('c', [job('b', [job('a', [])])]);
}

/** One write of a floor job: the events streamed right before it, then the record. */
export interface FloorWrite {
  readonly events: readonly ReactorEvent[];
  readonly record: ExecutionRecord;
}

/**
 * The writes of a protocol floor job, one after another, copied from a finished execution of the
 * subject (`final`, its trace complete): with every step persisted (`checkpointIntervalMs` 0) a
 * record saying `running` at each step's start (its trace as long as the subject's was then, the
 * steps begun so far), then the final record; with an interval, the final record only. Each
 * carries the events emitted since the write before (the first job's `run.queued` was streamed at
 * the start).
 */
export function floorWrites(final: ExecutionRecord, checkpointIntervalMs: number): readonly FloorWrite[] {
  const trace = final.trace ?? [];
  const cuts = checkpointIntervalMs === 0 ? trace.flatMap((e, i) => (e.type === 'step.started' ? [i + 1] : [])) : [];
  const writes: FloorWrite[] = [];
  let from = 1;
  for (const cut of cuts) {
    const begun = new Set(trace.slice(0, cut).flatMap((e) => (e.type === 'step.started' ? [e.step] : [])));
    const steps = Object.fromEntries(Object.entries(final.steps).filter(([name]) => begun.has(name)));
    const { value: _value, ...rest } = final;
    writes.push({
      events: trace.slice(from, cut),
      record: { ...rest, status: 'running', steps, trace: trace.slice(0, cut) },
    });
    from = cut;
  }
  writes.push({ events: trace.slice(from), record: final });
  return writes;
}

/** The record a floor job finds: `final` as it was when its execution was queued. */
export function floorPending(final: ExecutionRecord, executionId: string): ExecutionRecord {
  const { value: _value, ...rest } = final;
  return {
    ...rest,
    id: executionId,
    rootId: executionId,
    status: 'pending',
    steps: {},
    trace: (final.trace ?? []).slice(0, 1),
  };
}

/** Commands sent by the ioredis connections of one process. */
export interface SentCounts {
  /** Every command written, by name (`evalsha` apart: see `scripts`). */
  readonly commands: Record<string, number>;
  /** EVALSHA (and EVAL) by script name: `rx:<name>` for ts-reactor's, `bullmq:<name>` for BullMQ's. */
  readonly scripts: Record<string, number>;
  /** Batches: the commands one connection sent in one event-loop tick (what one socket write carries at best). */
  batches: number;
  total: number;
}

const ourScripts = new Map<string, string>(Object.values(scripts).map((s) => [s.sha, `rx:${s.name}`]));

/** The name of a script by its SHA-1: ts-reactor's, or one a connection defined (BullMQ's commands). */
function scriptName(connection: Redis, sha: string): string {
  const ours = ourScripts.get(sha);
  if (ours !== undefined) return ours;
  const defined = (connection as unknown as { scriptsSet?: Record<string, { sha: string }> }).scriptsSet ?? {};
  for (const [name, script] of Object.entries(defined)) {
    if (script.sha === sha) {
      ourScripts.set(sha, `bullmq:${name}`);
      return `bullmq:${name}`;
    }
  }
  return `unknown:${sha.slice(0, 8)}`;
}

let counts: SentCounts = { commands: {}, scripts: {}, batches: 0, total: 0 };
const pending = new WeakSet<Redis>();

/**
 * Counts every command this process's ioredis connections send, from now on (the prototype's
 * `sendCommand` wrapped; a connection's own wrapper, like ts-reactor's write coalescing, calls it).
 */
export function countSentCommands(): void {
  const original = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<Redis['sendCommand']>) {
    const [command] = args;
    const name = command.name.toLowerCase();
    counts.total++;
    counts.commands[name] = (counts.commands[name] ?? 0) + 1;
    if (name === 'evalsha' || name === 'eval') {
      const script = name === 'eval' ? 'eval' : scriptName(this, String(command.args[0]));
      counts.scripts[script] = (counts.scripts[script] ?? 0) + 1;
    }
    if (!pending.has(this)) {
      pending.add(this);
      counts.batches++;
      process.nextTick(() => pending.delete(this));
    }
    return original.apply(this, args);
  };
}

/** The counts since the last reset, and a reset. */
export function takeSentCounts(): SentCounts {
  const taken = counts;
  counts = { commands: {}, scripts: {}, batches: 0, total: 0 };
  return taken;
}
