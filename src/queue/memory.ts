/**
 * The embedded queue: jobs run in this process on a concurrency-limited pool, with the same
 * observable behaviour as the BullMQ adapter — ids deduplicated, delays, priorities (no priority
 * first, then lower numbers first, first come first served within one), `promote`, a few
 * attempts for a rejecting processor with a backoff, terminal failure for a malformed payload,
 * graceful `stop`. Every delay (a job's `delayMs`, a backoff) goes through the injected
 * {@link Clock}, so a test on a `ManualClock` drives them with `advance`. Nothing here is
 * durable: a process that exits loses its queued jobs (the store still has the executions).
 *
 * @module
 */
import { ReactorError } from '../errors.js';
import { systemClock, type Clock } from '../ports/clock.js';
import {
  JOB_PRIORITY_MAX,
  type EnqueueEntry,
  type EnqueueOptions,
  type ExecutionJob,
  type JobConsumer,
  type JobPlace,
  type JobProcessor,
  type JobQueue,
} from '../ports/queue.js';
import type { WaitList } from '../ports/wait-list.js';
import type { QueueInspector, QueueJobView, QueueSnapshot } from '../ports/queue-inspector.js';
import { encodeJob } from './payload.js';
import { INFRA_ATTEMPTS, INFRA_BACKOFF_MS, KEEP_FINISHED_COUNT } from './policy.js';

/** A failed delivery, as reported to {@link MemoryQueueOptions.onFailed}. */
export interface JobFailure {
  readonly jobId: string;
  readonly error: unknown;
  /** True when the job will not be delivered again (malformed payload, or attempts used up). */
  readonly final: boolean;
}

/** Options of {@link createMemoryQueue}. */
export interface MemoryQueueOptions {
  /** The time source of delays and backoffs; default the system clock. */
  readonly clock?: Clock;
  /** Called when a delivery fails. */
  readonly onFailed?: (failure: JobFailure) => void;
}

/** The producing side of the embedded queue. */
export interface MemoryJobQueue extends JobQueue, QueueInspector {
  /** {@link JobQueue.discard}, always there on this queue. */
  discard(jobId: string): Promise<boolean>;
  /** Resolves once no job is ready, delayed or running (jobs enqueued meanwhile are waited for too). */
  drain(): Promise<void>;
  /**
   * Resolves once no job is ready or running (delayed jobs wait for their time on the clock), or
   * once the clock reaches `until`. What a test engine's in-process reader awaits before it lets
   * virtual time pass.
   */
  settled(until?: number): Promise<void>;
  /** How many jobs are in each live state now. */
  counts(): { readonly ready: number; readonly delayed: number; readonly running: number };
}

/** The embedded queue's three parts, sharing one in-process state. */
export interface MemoryQueue {
  readonly queue: MemoryJobQueue;
  readonly consumer: JobConsumer;
  readonly waitList: MemoryWaitList;
  /** Same as `queue.drain()`. */
  drain(): Promise<void>;
}

type EntryState = 'delayed' | 'ready' | 'running';

interface Entry {
  readonly id: string;
  readonly payload: ExecutionJob;
  state: EntryState;
  /** Deliveries started so far. */
  starts: number;
  /** Deliveries that rejected so far. */
  failures: number;
  /** Cancels the pending delay while `state` is `delayed`. */
  timer: AbortController | undefined;
  /** Its place among ready jobs: 0 without a priority (first), else the priority (lower first). */
  readonly rank: number;
  /** When it was added, became due (delayed), and its current delivery started (clock ms). */
  readonly addedAt: number;
  dueAt: number | undefined;
  startedAt: number | undefined;
}

/** Creates the embedded queue, consumer and wait list. */
export function createMemoryQueue(options: MemoryQueueOptions = {}): MemoryQueue {
  const clock = options.clock ?? systemClock;
  const onFailed = options.onFailed;
  /** Live jobs (delayed, ready or running), by id. */
  const live = new Map<string, Entry>();
  /** Ids of finished jobs, oldest first, kept so that re-enqueuing one is still a no-op. */
  const finished = new Set<string>();
  const readyLine: Entry[] = [];
  const inFlight = new Set<Promise<void>>();
  let idleWaiters: (() => void)[] = [];
  let quietWaiters: { readonly resolve: () => void; readonly until: number | undefined; stop?: () => void }[] = [];
  let processor: JobProcessor | undefined;
  let concurrency = 0;
  let running = 0;
  let pumpQueued = false;
  let closed = false;

  const schedulePump = (): void => {
    if (pumpQueued) return;
    pumpQueued = true;
    queueMicrotask(() => {
      pumpQueued = false;
      pump();
    });
  };

  const pump = (): void => {
    while (processor && running < concurrency) {
      const entry = readyLine.shift();
      if (!entry) break;
      if (entry.state === 'ready' && live.get(entry.id) === entry) start(entry, processor);
    }
    settleIdle();
  };

  const quiet = (): boolean => ![...live.values()].some((entry) => entry.state !== 'delayed');

  /** Resolves the `settled` waiters that are due: all of them when nothing is ready or running, else those whose `until` has come. */
  const releaseQuiet = (): void => {
    if (quietWaiters.length === 0) return;
    const isQuiet = quiet();
    const now = clock.now();
    const due = quietWaiters.filter((w) => isQuiet || (w.until !== undefined && w.until <= now));
    quietWaiters = quietWaiters.filter((w) => !due.includes(w));
    for (const w of due) {
      w.stop?.();
      w.resolve();
    }
  };

  const settleIdle = (): void => {
    releaseQuiet();
    if (live.size > 0 || idleWaiters.length === 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const makeReady = (entry: Entry): void => {
    entry.state = 'ready';
    entry.timer = undefined;
    entry.dueAt = undefined;
    lineUp(readyLine, entry);
    schedulePump();
  };

  const delay = (entry: Entry, ms: number): void => {
    const timer = new AbortController();
    entry.state = 'delayed';
    entry.timer = timer;
    entry.dueAt = clock.now() + ms;
    void clock.sleep(ms, timer.signal).then(() => {
      // Promoted, or dropped by `close`, while it slept: the timer was replaced or aborted.
      if (entry.timer === timer && !timer.signal.aborted) makeReady(entry);
    });
  };

  const finish = (entry: Entry): void => {
    live.delete(entry.id);
    finished.add(entry.id);
    if (finished.size > KEEP_FINISHED_COUNT) {
      const oldest = finished.values().next();
      if (!oldest.done) finished.delete(oldest.value);
    }
  };

  const start = (entry: Entry, run: JobProcessor): void => {
    entry.state = 'running';
    entry.starts += 1;
    entry.startedAt = clock.now();
    running += 1;
    const delivery = { jobId: entry.id, delivery: entry.starts };
    const task = (async () => {
      try {
        await run(entry.payload, delivery);
        finish(entry);
      } catch (error) {
        entry.failures += 1;
        const final = isMalformed(error) || entry.failures >= INFRA_ATTEMPTS;
        if (final) finish(entry);
        else delay(entry, INFRA_BACKOFF_MS * 2 ** (entry.failures - 1));
        onFailed?.({ jobId: entry.id, error, final });
      } finally {
        running -= 1;
        schedulePump();
      }
    })();
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  };

  /** Adds one job (a known id is a no-op); its options checked by `check` and its payload encoded first. */
  const add = (payload: ExecutionJob, { jobId, delayMs = 0, priority = 0 }: EnqueueOptions): void => {
    if (live.has(jobId) || finished.has(jobId)) return;
    const entry: Entry = {
      id: jobId,
      payload,
      state: 'ready',
      starts: 0,
      failures: 0,
      timer: undefined,
      rank: priority,
      addedAt: clock.now(),
      dueAt: undefined,
      startedAt: undefined,
    };
    live.set(jobId, entry);
    if (delayMs > 0) delay(entry, delayMs);
    else makeReady(entry);
  };

  const queue: MemoryJobQueue = {
    async enqueue(job: ExecutionJob, enqueueOptions: EnqueueOptions): Promise<void> {
      if (closed) throw new Error('the job queue is closed');
      check(enqueueOptions);
      add(Object.freeze(encodeJob(job)), enqueueOptions);
    },

    async enqueueMany(entries: readonly EnqueueEntry[]): Promise<void> {
      if (closed) throw new Error('the job queue is closed');
      // Every entry is checked, its payload included, before any is added: a bad one adds nothing.
      const payloads = entries.map(({ job, options }) => {
        check(options);
        return Object.freeze(encodeJob(job));
      });
      entries.forEach(({ options }, at) => add(payloads[at]!, options));
    },

    async promote(jobId: string): Promise<boolean> {
      const entry = live.get(jobId);
      if (!entry || entry.state !== 'delayed') return false;
      const timer = entry.timer;
      makeReady(entry);
      timer?.abort();
      return true;
    },

    async discard(jobId: string): Promise<boolean> {
      const entry = live.get(jobId);
      if (!entry || entry.state === 'running') return false;
      const timer = entry.timer;
      entry.timer = undefined;
      timer?.abort();
      finish(entry); // its id stays known: enqueuing it again is a no-op
      settleIdle();
      return true;
    },

    async jobStates(jobIds: readonly string[]): Promise<readonly JobPlace[]> {
      return jobIds.map((jobId) => {
        const entry = live.get(jobId);
        if (entry) return entry.state === 'running' ? 'active' : entry.starts > 0 ? 'returned' : 'queued';
        return finished.has(jobId) ? 'finished' : 'missing';
      });
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      // Delayed jobs will never run in this process: drop them and cancel their timers.
      for (const entry of [...live.values()]) {
        if (entry.state !== 'delayed') continue;
        live.delete(entry.id);
        const timer = entry.timer;
        entry.timer = undefined;
        timer?.abort();
      }
      settleIdle();
    },

    drain(): Promise<void> {
      if (live.size === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },

    settled(until?: number): Promise<void> {
      if (quiet() || (until !== undefined && clock.now() >= until)) return Promise.resolve();
      return new Promise((resolve) => {
        const waiter: (typeof quietWaiters)[number] = { resolve, until };
        // The clock passing `until` releases it too (a manual clock fires this as time is advanced).
        if (until !== undefined) waiter.stop = clock.every(Math.max(1, until - clock.now()), releaseQuiet);
        quietWaiters.push(waiter);
      });
    },

    counts() {
      let ready = 0;
      let delayed = 0;
      for (const entry of live.values()) {
        if (entry.state === 'ready') ready += 1;
        else if (entry.state === 'delayed') delayed += 1;
      }
      return { ready, delayed, running };
    },

    async inspectQueue(inspectOptions = {}): Promise<QueueSnapshot> {
      return snapshotOf(
        [...live.values()],
        finished.size,
        inspectOptions.limit ?? 20,
        processor === undefined ? 0 : concurrency,
        clock.now(),
      );
    },
  };

  const consumer: JobConsumer = {
    start(run: JobProcessor, startOptions: { readonly concurrency: number }): void {
      if (processor) throw new Error('the consumer is already started');
      if (!Number.isSafeInteger(startOptions.concurrency) || startOptions.concurrency < 1) {
        throw new RangeError(`concurrency must be a positive integer; got ${String(startOptions.concurrency)}`);
      }
      processor = run;
      concurrency = startOptions.concurrency;
      schedulePump();
    },

    async stop(): Promise<void> {
      // Take no more jobs; queued ones stay queued (a later `start` picks them up).
      processor = undefined;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };

  return { queue, consumer, waitList: new MemoryWaitList(), drain: () => queue.drain() };
}

/** The embedded queue as {@link QueueInspector} reports it: its live jobs, and its pool as the one worker. */
function snapshotOf(
  entries: readonly Entry[],
  finishedCount: number,
  limit: number,
  concurrency: number,
  now: number,
): QueueSnapshot {
  const view = (e: Entry): QueueJobView => ({
    jobId: e.id,
    executionId: e.payload.executionId,
    reactor: e.payload.reactor,
    addedAt: e.addedAt,
    ...(e.dueAt === undefined ? {} : { dueAt: e.dueAt }),
    ...(e.state === 'running' && e.startedAt !== undefined ? { startedAt: e.startedAt } : {}),
    deliveries: e.starts,
    ...(e.rank === 0 ? {} : { priority: e.rank }),
  });
  const of = (state: EntryState): Entry[] => entries.filter((e) => e.state === state);
  const waiting = of('ready').sort((a, b) => a.addedAt - b.addedAt);
  const delayed = of('delayed').sort((a, b) => (a.dueAt ?? 0) - (b.dueAt ?? 0));
  const active = of('running');
  return {
    name: 'embedded',
    counts: {
      waiting: waiting.filter((e) => e.rank === 0).length,
      prioritized: waiting.filter((e) => e.rank !== 0).length,
      delayed: delayed.length,
      active: active.length,
      finished: finishedCount,
    },
    ...(waiting[0] === undefined ? {} : { oldestWaitingAt: waiting[0].addedAt }),
    delayed: delayed.slice(0, limit).map(view),
    active: active.slice(0, limit).map(view),
    waiting: waiting.slice(0, limit).map(view),
    workers: concurrency === 0 ? [] : [{ name: `embedded pool (pid ${process.pid})`, concurrency }],
    at: now,
  };
}

/** Refuses an empty job id, a delay that is not a finite number ≥ 0, or a priority outside 1..{@link JOB_PRIORITY_MAX}. */
function check({ jobId, delayMs = 0, priority }: EnqueueOptions): void {
  if (jobId.length === 0) throw new RangeError('job id must not be empty');
  if (!Number.isFinite(delayMs) || delayMs < 0)
    throw new RangeError(`delayMs must be a finite number ≥ 0; got ${String(delayMs)}`);
  if (priority !== undefined && (!Number.isSafeInteger(priority) || priority < 1 || priority > JOB_PRIORITY_MAX))
    throw new RangeError(`priority must be an integer from 1 to ${JOB_PRIORITY_MAX}; got ${String(priority)}`);
}

/**
 * Puts `entry` into the ready line behind every entry of its rank or a lower one (BullMQ's
 * order: no priority first, then lower priorities first, first come first served within one).
 * The common case, a line of one rank, costs one comparison.
 */
function lineUp(line: Entry[], entry: Entry): void {
  let at = line.length;
  while (at > 0 && line[at - 1]!.rank > entry.rank) at -= 1;
  line.splice(at, 0, entry);
}

function isMalformed(error: unknown): boolean {
  return ReactorError.is(error) && error.code === 'job_malformed';
}

/** {@link WaitList} in this process: an insertion-ordered set of job ids per key. */
export class MemoryWaitList implements WaitList {
  readonly #lists = new Map<string, Set<string>>();

  async add(key: string, jobId: string): Promise<void> {
    const list = this.#lists.get(key);
    if (list) list.add(jobId);
    else this.#lists.set(key, new Set([jobId]));
  }

  async shift(key: string): Promise<string | undefined> {
    const list = this.#lists.get(key);
    if (!list) return undefined;
    const first = list.values().next();
    if (first.done) return undefined;
    this.#remove(key, list, first.value);
    return first.value;
  }

  async remove(key: string, jobId: string): Promise<void> {
    const list = this.#lists.get(key);
    if (list) this.#remove(key, list, jobId);
  }

  async list(key: string): Promise<readonly string[]> {
    return [...(this.#lists.get(key) ?? [])];
  }

  #remove(key: string, list: Set<string>, jobId: string): void {
    list.delete(jobId);
    if (list.size === 0) this.#lists.delete(key);
  }
}
