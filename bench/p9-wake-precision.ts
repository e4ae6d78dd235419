/**
 * P9: wake precision. 1,000 executions of a reactor that sleeps 2 s (`.sleep('nap', { for: 2_000 })`,
 * then one step) are started from this process (its runtime runs no worker) and processed by two
 * worker processes (`startWorker({ concurrency: 32 })` each): in a worker a sleeping execution
 * parks on a delayed BullMQ job due at its wake time (docs/time.md#sleeps). Figure, per execution:
 * the `at` of its `step.woke` event minus the `wakeAt` it recorded when the sleep started, both
 * on the engine clock (`Date.now()` of the worker process that saw it; one machine, one system
 * clock). p50 and p99 over the 1,000 against p50 ≤ 20 ms, p99 ≤ 200 ms. The same for
 * `run.completed` (the step after the sleep has run and the record is written) is printed too.
 *
 * Anchor, measured in the same run against the same throwaway server and the same two child
 * processes: 1,000 plain BullMQ jobs added from this process with `delay: 2000` to another queue,
 * processed by a plain BullMQ `Worker` with the same concurrency in each child; figure: the
 * processor's start (`Date.now()`) minus the job's `timestamp + delay`. The children run both
 * workers all along (the idle one waits on Redis); the subject's round runs first, then the
 * anchor's, after an untimed warm-up of both. Both sides go at the same pace: batches of 50 every
 * 50 ms (1,000 per second), so their due times are spread over about a second alike.
 *
 * The verdict is measured on a server with Redis's default configuration. A BullMQ worker waits
 * for its next delayed job in a blocking command with a timeout, and Redis checks such timeouts
 * when its event loop wakes, which an idle server does `hz` times a second (default 10): a delayed
 * job, ts-reactor's or plain, starts up to 100 ms late on such a server. So the whole measurement
 * (warm-up, subject, anchor) is repeated on a second server started with `--hz 100`, and its
 * figures are printed beside the verdict's (`server` field, `anchor.hz_100`).
 *
 * Every wait has a timeout: executions or jobs that never show up are counted in a `failure`
 * line and the verdict fails; nothing hangs.
 *
 * `P9_EXECUTIONS` (environment, default 1,000) sets the size of each measured round, for
 * investigations; the verdict of `npm run bench` uses the default.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { createRedisRuntime, type RedisRuntime } from '../src/bullmq.js';
import type { AnyReactorDefinition } from '../src/index.js';
import { startRedisServer, type RedisServerHandle } from '../test/support/redis-server.js';
import { spawnChildren, type BenchChild, type ChildLine } from './support/children.js';
import { NAP_MS, napper, type P9ChildConfig, type P9Line } from './support/p9-shared.js';
import { emit, round, type Verdict } from './support/runner.js';

const EXECUTIONS = Number(process.env.P9_EXECUTIONS ?? 1_000);
const WARMUP = 100;
const PROCESSES = 2;
const CONCURRENCY = 32;
const BATCH = 50;
/** One batch every 50 ms: 1,000 starts (and wakes) per second on both sides. */
const PACE_MS = 50;
const TARGET_P50_MS = 20;
const TARGET_P99_MS = 200;
const PREFIX = 'p9';
const ANCHOR_QUEUE = 'p9-anchor';
/** The `hz` of the second server: Redis checks blocking-command timeouts (BullMQ's delayed-job wait) on its event loop, woken every 1000/hz ms when idle. */
const FAST_HZ = 100;
/** How long a round may take past the last wake time before what is missing counts as lost. */
const ROUND_GRACE_MS = 20_000;
/** Starting or adding one round's work. */
const ENQUEUE_TIMEOUT_MS = 30_000;
const CLOSE_TIMEOUT_MS = 5_000;
const CHILD = fileURLToPath(new URL('./support/p9-worker.ts', import.meta.url));

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** `promise`, or a rejection after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`P9: ${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls `batch` with batches of {@link BATCH} that add up to `count`, batch i due {@link PACE_MS} × i
 * after the first (at once when the previous one took longer), so both sides spread their due
 * times alike.
 */
async function paced(count: number, batch: (n: number) => Promise<void>): Promise<void> {
  const t0 = Date.now();
  for (let i = 0, b = 0; i < count; i += BATCH, b++) {
    const wait = t0 + b * PACE_MS - Date.now();
    if (wait > 0) await sleep(wait);
    await batch(Math.min(BATCH, count - i));
  }
}

function isLine(line: ChildLine): line is ChildLine & P9Line {
  return typeof line.p9 === 'string' && typeof line.id === 'string' && typeof line.late === 'number';
}

/** What a round saw, by kind of line, for its ids. */
interface Observed {
  readonly lines: Map<P9Line['p9'], Map<string, P9Line>>;
  /** Resolves once every id has a line of each of `kinds`, or at the deadline (whatever arrived by then). */
  readonly settled: (deadline: number) => Promise<void>;
  readonly stop: () => void;
}

/** Listens on every child for the lines of `kinds` about the ids `ids` holds (filled while starting). */
function observe(children: readonly BenchChild[], ids: Set<string>, kinds: readonly P9Line['p9'][]): Observed {
  const lines = new Map(kinds.map((k) => [k, new Map<string, P9Line>()]));
  let wake: (() => void) | undefined;
  let expected = Infinity;
  const complete = () => [...lines.values()].every((m) => m.size >= expected);
  const stops = children.map((child) =>
    child.listen((line) => {
      if (!isLine(line)) return false;
      const seen = lines.get(line.p9);
      if (!seen) return false;
      // A line can arrive before its start call has returned: keep it, and drop foreign ids at the end.
      seen.set(line.id, { p9: line.p9, id: line.id, late: line.late, due: line.due });
      if (complete()) wake?.();
      return true;
    }),
  );
  return {
    lines,
    settled: (deadline) => {
      expected = ids.size;
      for (const seen of lines.values()) for (const id of seen.keys()) if (!ids.has(id)) seen.delete(id);
      if (complete()) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
    stop: () => {
      for (const stop of stops) stop();
    },
  };
}

/** Lateness of one kind of line, with what went missing. */
interface Figures {
  readonly count: number;
  readonly missing: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly min: number;
  /** Last due time − first, ms: how spread out the wakes were. */
  readonly dueWindow: number;
  /** Wakes observed before their due time (should be 0). */
  readonly early: number;
}

function figures(seen: ReadonlyMap<string, P9Line>, expected: number): Figures {
  const late = [...seen.values()].map((l) => l.late);
  const due = [...seen.values()].map((l) => l.due);
  const pick = (p: number) => (late.length === 0 ? Number.NaN : percentile(late, p));
  return {
    count: late.length,
    missing: expected - late.length,
    p50: pick(50),
    p99: pick(99),
    max: pick(100),
    min: pick(0),
    dueWindow: due.length === 0 ? Number.NaN : Math.max(...due) - Math.min(...due),
    early: late.filter((l) => l < 0).length,
  };
}

function printable(f: Figures): Record<string, number | null> {
  const n = (v: number) => (Number.isNaN(v) ? null : round(v, 1));
  return {
    count: f.count,
    missing: f.missing,
    p50_ms: n(f.p50),
    p99_ms: n(f.p99),
    max_ms: n(f.max),
    min_ms: n(f.min),
    early: f.early,
    due_window_ms: n(f.dueWindow),
  };
}

/** Starts `count` executions in batches; resolves to the wake and completion lateness. */
async function subjectRound(
  runtime: RedisRuntime,
  children: readonly BenchChild[],
  definition: AnyReactorDefinition,
  count: number,
): Promise<{ woke: Figures; done: Figures; enqueueMs: number }> {
  const ids = new Set<string>();
  const observed = observe(children, ids, ['woke', 'done']);
  try {
    const t0 = Date.now();
    await within(
      (async () => {
        await paced(count, async (n) => {
          const batch = await Promise.all(Array.from({ length: n }, () => runtime.engine.start(definition, {})));
          for (const s of batch) {
            if (s.status !== 'queued') throw new Error(`P9: engine.start returned ${s.status}`);
            ids.add(s.executionId);
          }
        });
      })(),
      ENQUEUE_TIMEOUT_MS,
      'starting the executions',
    );
    const enqueueMs = Date.now() - t0;
    await observed.settled(Date.now() + NAP_MS + ROUND_GRACE_MS);
    return {
      woke: figures(observed.lines.get('woke')!, count),
      done: figures(observed.lines.get('done')!, count),
      enqueueMs,
    };
  } finally {
    observed.stop();
  }
}

/** Adds `count` delayed jobs in batches; resolves to their lateness. */
async function anchorRound(
  queue: Queue,
  children: readonly BenchChild[],
  count: number,
): Promise<{ job: Figures; enqueueMs: number }> {
  const ids = new Set<string>();
  const observed = observe(children, ids, ['job']);
  try {
    const t0 = Date.now();
    await within(
      (async () => {
        await paced(count, async (n) => {
          const batch = await Promise.all(
            Array.from({ length: n }, () =>
              queue.add('nap', {}, { delay: NAP_MS, removeOnComplete: true, removeOnFail: true }),
            ),
          );
          for (const job of batch) ids.add(String(job.id));
        });
      })(),
      ENQUEUE_TIMEOUT_MS,
      'adding the anchor jobs',
    );
    const enqueueMs = Date.now() - t0;
    await observed.settled(Date.now() + NAP_MS + ROUND_GRACE_MS);
    return { job: figures(observed.lines.get('job')!, count), enqueueMs };
  } finally {
    observed.stop();
  }
}

function failed(value: number, error: unknown, anchor: Record<string, unknown>): Verdict {
  emit({ bench: 'P9', figure: 'failure', error: error instanceof Error ? error.message : String(error) });
  return {
    bench: 'P9',
    metric: 'wake_lateness_p50_ms',
    value,
    target: `p50 <= ${TARGET_P50_MS} ms and p99 <= ${TARGET_P99_MS} ms, every execution woken`,
    anchor,
    pass: false,
  };
}

/** One side-by-side measurement (warm-up, the subject's round, the anchor's) on its own server. */
interface Measurement {
  readonly subject: { woke: Figures; done: Figures; enqueueMs: number };
  readonly anchor: { job: Figures; enqueueMs: number };
}

/**
 * Starts a server (with `hz` when given, else Redis's default of 10), two worker processes and
 * this process's runtime and queue; warms up, measures the subject, then the anchor; stops it all.
 */
async function measureOn(hz: number | undefined): Promise<Measurement> {
  let server: RedisServerHandle | undefined;
  let children: BenchChild[] = [];
  let runtime: RedisRuntime | undefined;
  let queue: Queue | undefined;
  try {
    server = await startRedisServer(hz === undefined ? {} : { extraArgs: ['--hz', String(hz)] });
    const config: P9ChildConfig = {
      url: server.url,
      prefix: PREFIX,
      anchorQueue: ANCHOR_QUEUE,
      concurrency: CONCURRENCY,
    };
    children = await spawnChildren(
      CHILD,
      Array.from({ length: PROCESSES }, () => config),
    );
    const definition = napper();
    runtime = createRedisRuntime({ url: server.url, prefix: PREFIX, reactors: [definition] });
    queue = new Queue(ANCHOR_QUEUE, { connection: { url: server.url }, prefix: PREFIX });
    await within(queue.waitUntilReady(), ENQUEUE_TIMEOUT_MS, 'connecting the anchor queue');

    // Warm-up, both at once (not measured): JIT, connections, scripts loaded.
    const [warmSubject, warmAnchor] = await Promise.all([
      subjectRound(runtime, children, definition, WARMUP),
      anchorRound(queue, children, WARMUP),
    ]);
    if (warmSubject.woke.missing > 0 || warmAnchor.job.missing > 0)
      throw new Error(`P9: warm-up lost ${warmSubject.woke.missing} wakes and ${warmAnchor.job.missing} anchor jobs`);

    const subject = await subjectRound(runtime, children, definition, EXECUTIONS);
    const anchor = await anchorRound(queue, children, EXECUTIONS);
    return { subject, anchor };
  } finally {
    await Promise.all(children.map((c) => c.kill()));
    await within(runtime?.close() ?? Promise.resolve(), CLOSE_TIMEOUT_MS, 'closing the runtime').catch(() => undefined);
    await within(queue?.close() ?? Promise.resolve(), CLOSE_TIMEOUT_MS, 'closing the anchor queue').catch(
      () => undefined,
    );
    await server?.dispose();
  }
}

function emitMeasurement(m: Measurement, server: string): void {
  emit({
    bench: 'P9',
    figure: 'subject_wake_lateness',
    server,
    note: 'step.woke at − wakeAt, engine clock (Date.now() of the worker process)',
    executions: EXECUTIONS,
    start_ms: m.subject.enqueueMs,
    ...printable(m.subject.woke),
  });
  emit({
    bench: 'P9',
    figure: 'subject_completed_lateness',
    server,
    note: 'run.completed at − wakeAt: the step after the sleep has run and the record is written',
    ...printable(m.subject.done),
  });
  emit({
    bench: 'P9',
    figure: 'anchor_job_lateness',
    server,
    note: 'plain BullMQ delayed jobs (delay 2000): processor start − (job.timestamp + delay)',
    jobs: EXECUTIONS,
    add_ms: m.anchor.enqueueMs,
    ...printable(m.anchor.job),
  });
}

/** Runs P9 and returns its verdict. */
export async function runP9(): Promise<Verdict> {
  let main: Measurement | undefined;
  try {
    main = await measureOn(undefined);
    emitMeasurement(main, 'hz 10 (default)');
    const fast = await measureOn(FAST_HZ);
    emitMeasurement(fast, `hz ${FAST_HZ}`);
    const s = main.subject.woke;
    const a = main.anchor.job;
    const ratio = (x: number, y: number) => (y > 0 ? round(x / y, 2) : null);
    const anchorObject = {
      bullmq_delayed_p50_ms: round(a.p50, 1),
      bullmq_delayed_p99_ms: round(a.p99, 1),
      bullmq_delayed_max_ms: round(a.max, 1),
      subject_p99_ms: round(s.p99, 1),
      subject_max_ms: round(s.max, 1),
      p50_over_anchor: ratio(s.p50, a.p50),
      p99_over_anchor: ratio(s.p99, a.p99),
      [`hz_${FAST_HZ}`]: {
        subject_p50_ms: round(fast.subject.woke.p50, 1),
        subject_p99_ms: round(fast.subject.woke.p99, 1),
        subject_max_ms: round(fast.subject.woke.max, 1),
        bullmq_delayed_p50_ms: round(fast.anchor.job.p50, 1),
        bullmq_delayed_p99_ms: round(fast.anchor.job.p99, 1),
        bullmq_delayed_max_ms: round(fast.anchor.job.max, 1),
      },
      executions: EXECUTIONS,
      sleep_ms: NAP_MS,
      processes: PROCESSES,
      concurrency_per_process: CONCURRENCY,
      missing: s.missing,
      anchor_missing: a.missing,
    };
    const lost = [main, fast].flatMap((m) => [m.subject.woke.missing, m.anchor.job.missing]);
    if (lost.some((n) => n > 0))
      return failed(
        round(s.p50, 1),
        new Error(
          `not seen within ${NAP_MS + ROUND_GRACE_MS} ms: ${s.missing} executions and ${a.missing} anchor jobs (default hz), ${fast.subject.woke.missing} and ${fast.anchor.job.missing} (hz ${FAST_HZ})`,
        ),
        anchorObject,
      );
    return {
      bench: 'P9',
      metric: 'wake_lateness_p50_ms',
      value: round(s.p50, 1),
      target: `p50 <= ${TARGET_P50_MS} ms and p99 <= ${TARGET_P99_MS} ms (step.woke at − wakeAt, ${EXECUTIONS} executions sleeping ${NAP_MS} ms, Redis with its default hz 10)`,
      anchor: anchorObject,
      pass: s.p50 <= TARGET_P50_MS && s.p99 <= TARGET_P99_MS,
    };
  } catch (error) {
    const value = main ? round(main.subject.woke.p50, 1) : Number.NaN;
    return failed(value, error, { executions: EXECUTIONS, sleep_ms: NAP_MS });
  }
}
