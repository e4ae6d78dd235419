/**
 * P5: wake-on-release latency. A holder execution takes a reactor-level lock and waits in its
 * step on a gate the benchmark controls; a waiter execution on the same key parks (persisted,
 * fallback job delayed by the default 5 s, registered on the key's wait list). Once the waiter is
 * fully parked (registered on the wait list and off its liveness lock), the gate opens: the
 * holder finishes and releases the key, and the release wakes the waiter. Figure: time from the
 * holder's `coordination.released` (emitted once the release script has returned) to the first
 * line of the waiter's step body, both `performance.now()` in this process — the worker runs
 * here (`startWorker({ concurrency: 4 })`), over the same Redis/BullMQ path as any worker.
 * ≥ 200 samples; p50 and p99 against p50 ≤ 5 ms, p99 ≤ 50 ms.
 *
 * Anchors: the reference gem's snooze (5 s + 0–5 s jitter, a constant here), and, measured in
 * the same run, what a parked execution waits when no wake comes. Any release of the key wakes
 * the runtime's parked executions (its coordinator hears of the release and promotes the key's
 * wait list), so the anchor's waiter runs on a second runtime with the wake-ups switched off: the
 * same store and coordinator state, its own queue and worker, no wait list, and a coordinator
 * without its notification fast paths (`requiredOnly`). The lock is held directly through the
 * bench's coordinator and released with an ordinary release; only the park fallback job (default
 * 5 s after parking) resumes the waiter.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { createRedisRuntime } from '../src/bullmq.js';
import { reactor, type AnyReactorDefinition, type Engine } from '../src/index.js';
import type { Backend as PortBundle } from '../src/ports/backend.js';
import type { Coordinator } from '../src/ports/coordinator.js';
import { createPostgresRuntime } from '../src/postgres.js';
import { createPostgresBackend } from '../src/queue/postgres-backend.js';
import { createRedisBullmqBackend } from '../src/queue/redis-backend.js';
import { createRuntime } from '../src/runtime/create-runtime.js';
import { createRedisBackend, RedisKeys } from '../src/storage/redis/index.js';
import { startPostgresServer } from '../test/support/postgres-server.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { requiredOnly } from '../test/support/required-only.js';
import { emit, round, type Verdict } from './support/runner.js';

const SAMPLES = 240;
const WARMUP = 20;
const FALLBACK_SAMPLES = 2;
const TARGET_P50_MS = 5;
const TARGET_P99_MS = 50;
const PARK_FALLBACK_MS = 5_000;
const REFERENCE_SNOOZE_MS = 5_000;
const REFERENCE_JITTER_MS = 5_000;
const PREFIX = 'p5';
const KEY = 'p5-key';
const SAMPLE_TIMEOUT_MS = 20_000;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** A promise with its resolver, rejecting after a timeout. */
function deferred<T>(
  what: string,
  timeoutMs = SAMPLE_TIMEOUT_MS,
): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`P5: ${what} did not happen within ${timeoutMs} ms`)), timeoutMs);
    resolve = (value) => {
      clearTimeout(timer);
      res(value);
    };
  });
  return { promise, resolve };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Hooks {
  /** Per waiter execution id: resolved when its step body starts. */
  readonly stepStarted: Map<string, (t: number) => void>;
  /**
   * The current sample's holder (one at a time): told when its step holds the key, then waits on
   * the gate. Set before its start, since a worker may run the step before `start` returns.
   */
  holder: { readonly started: (t: number) => void; readonly gate: Promise<void> } | undefined;
}

function definitions(hooks: Hooks): { holder: AnyReactorDefinition; waiter: AnyReactorDefinition } {
  const holder = reactor('p5-holder')
    .withLock({ key: () => KEY, ttl: '30s', wait: 0 })
    .step('hold', {
      run: async () => {
        const hold = hooks.holder;
        hold?.started(performance.now());
        await hold?.gate;
        return 1;
      },
    })
    .returns('hold');
  const waiter = reactor('p5-waiter')
    .withLock({ key: () => KEY, ttl: '30s', wait: 0 })
    .step('work', {
      run: (_args, ctx) => {
        hooks.stepStarted.get(ctx.executionId)?.(performance.now());
        return 1;
      },
    })
    .returns('work');
  return { holder, waiter };
}

/** What P5 runs on: a runtime with a worker in this process, and the bench's own view of the backend. */
interface P5Setup {
  readonly engine: Engine;
  /** The backend's coordinator, for the liveness check and the direct hold of the anchor. */
  readonly coordinator: Coordinator;
  /** Whether anyone is registered on the key's wait list. */
  waitListed(): Promise<boolean>;
  /** The anchor's runtime, on which no release wakes a parked execution (see {@link unnotified}). */
  readonly unnotified: Unnotified;
  close(): Promise<void>;
}

/** Starts the backend's throwaway server and builds the runtime (worker at concurrency 4) and the bench's view. */
type P5Backend = (definitions: readonly AnyReactorDefinition[]) => Promise<P5Setup>;

const WAIT_LIST_KEY = `lock:${KEY}`;
/** The anchor runtime's queue: its jobs are taken by its own worker only. */
const NO_WAKE_QUEUE = 'p5-no-wake';

/** A runtime that hears of no release: its own worker, no wait list, a coordinator without fast paths. */
interface Unnotified {
  readonly engine: Engine;
  close(): Promise<void>;
}

/**
 * The anchor's runtime over `bundle` (same store and coordinator state as the measured runtime,
 * queue {@link NO_WAKE_QUEUE}): without a wait list its parks are registered nowhere a release
 * looks, and without the coordinator's fast paths it hears no notification, so only its fallback
 * job resumes a parked execution. Its worker runs at concurrency 4, as the measured one.
 */
function unnotified(bundle: PortBundle, definitions: readonly AnyReactorDefinition[]): Unnotified {
  const runtime = createRuntime(
    { ...bundle, waitList: undefined, coordinator: requiredOnly(bundle.coordinator) },
    { reactors: definitions, background: { parkFallbackMs: PARK_FALLBACK_MS } },
  );
  runtime.startWorker({ concurrency: 4 });
  return { engine: runtime.engine, close: () => runtime.close() };
}

const redisBackend: P5Backend = async (definitions) => {
  const server = await startRedisServer();
  const runtime = createRedisRuntime({
    url: server.url,
    prefix: PREFIX,
    reactors: definitions,
    background: { parkFallbackMs: PARK_FALLBACK_MS },
  });
  runtime.startWorker({ concurrency: 4 });
  const backend = createRedisBackend({ url: server.url, prefix: PREFIX }); // the bench's own view: wait list, liveness locks, a direct hold
  const waitListKey = new RedisKeys(PREFIX).waitList(WAIT_LIST_KEY);
  const anchor = unnotified(
    createRedisBullmqBackend({ url: server.url, prefix: PREFIX, queueName: NO_WAKE_QUEUE }),
    definitions,
  );
  return {
    engine: runtime.engine,
    coordinator: backend.coordinator,
    waitListed: async () => (await backend.redis.zcard(waitListKey)) > 0,
    unnotified: anchor,
    close: async () => {
      await anchor.close().catch(() => undefined);
      await runtime.close().catch(() => undefined);
      await backend.close().catch(() => undefined);
      await server.dispose();
    },
  };
};

const postgresBackend: P5Backend = async (definitions) => {
  const server = await startPostgresServer();
  const runtime = createPostgresRuntime({
    connection: server.url,
    migrate: true,
    reactors: definitions,
    background: { parkFallbackMs: PARK_FALLBACK_MS },
  });
  try {
    await runtime.ready();
  } catch (error) {
    await runtime.close().catch(() => undefined);
    await server.dispose();
    throw error;
  }
  runtime.startWorker({ concurrency: 4 });
  const backend = createPostgresBackend({ connection: server.url }); // the bench's own view
  const anchor = unnotified(createPostgresBackend({ connection: server.url, queueName: NO_WAKE_QUEUE }), definitions);
  return {
    engine: runtime.engine,
    coordinator: backend.coordinator,
    waitListed: async () => (await backend.waitList!.list(WAIT_LIST_KEY)).length > 0,
    unnotified: anchor,
    close: async () => {
      await anchor.close().catch(() => undefined);
      await runtime.close().catch(() => undefined);
      await backend.close().catch(() => undefined);
      await server.dispose();
    },
  };
};

/** Runs P5 on Redis and returns its verdict. */
export function runP5(): Promise<Verdict> {
  return runP5On('P5', redisBackend);
}

/** Runs P5 on PostgreSQL (the coordinator's LISTEN/NOTIFY wake-ups) and returns its verdict. */
export function runP5Postgres(): Promise<Verdict> {
  return runP5On('P5-pg', postgresBackend);
}

async function runP5On(bench: string, open: P5Backend): Promise<Verdict> {
  const hooks: Hooks = { stepStarted: new Map(), holder: undefined };
  const { holder, waiter } = definitions(hooks);
  const setup = await open([holder, waiter]);
  try {
    const engine = setup.engine;
    const released = new Map<string, (t: number) => void>();
    const parked = new Map<string, () => void>();
    const completed = new Map<string, () => void>();
    const parks = new Map<string, number>();
    for (const e of [engine, setup.unnotified.engine])
      e.subscribe((event) => {
        if (event.type === 'coordination.released') released.get(event.executionId)?.(performance.now());
        else if (event.type === 'run.parked') {
          parks.set(event.executionId, (parks.get(event.executionId) ?? 0) + 1);
          parked.get(event.executionId)?.();
        } else if (event.type === 'run.completed') completed.get(event.executionId)?.();
      });
    const coordinator = setup.coordinator;

    /** Waits until the waiter is fully parked: on the wait list (`listed`), and its parking job off the execution. */
    const fullyParked = async (executionId: string, listed: boolean): Promise<void> => {
      const deadline = performance.now() + SAMPLE_TIMEOUT_MS;
      for (;;) {
        const done = !listed || (await setup.waitListed());
        const live = await coordinator.lockState(`execution:${executionId}`);
        if (done && live === undefined) return;
        if (performance.now() > deadline) throw new Error('P5: the waiter did not finish parking');
        await sleep(1);
      }
    };

    /** Starts a waiter on `on` and waits until it is fully parked; returns its id and the promise of its step start. */
    const parkWaiter = async (
      on: Engine = engine,
    ): Promise<{ id: string; stepStart: Promise<number>; done: Promise<void> }> => {
      const w = await on.start(waiter, {});
      if (w.status !== 'queued') throw new Error(`P5: waiter start returned ${w.status}`);
      const start = deferred<number>('the waiter step start');
      const park = deferred<void>('the waiter park');
      const done = deferred<void>('the waiter completion');
      hooks.stepStarted.set(w.executionId, start.resolve);
      parked.set(w.executionId, park.resolve);
      completed.set(w.executionId, () => done.resolve());
      await park.promise;
      await fullyParked(w.executionId, on === engine);
      return { id: w.executionId, stepStart: start.promise, done: done.promise };
    };

    /**
     * Rethrows a sample's timeout with what the backend holds then (the key's lock, each
     * execution's liveness lock, status, parks and last events), to tell a stall's cause.
     */
    const stalled = async (error: unknown, ids: readonly string[]): Promise<never> => {
      const executions = await Promise.all(
        ids.map(async (id) => {
          const result = await engine.result(id).catch(() => undefined);
          return {
            id,
            status: result?.status,
            parks: parks.get(id) ?? 0,
            live: await coordinator.lockState(`execution:${id}`).catch(() => 'unknown'),
            last: result?.trace.slice(-6).map((e) => e.type),
          };
        }),
      );
      const key = await coordinator.lockState(KEY).catch(() => 'unknown');
      const listed = await setup.waitListed().catch(() => 'unknown');
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${message}; then: ${JSON.stringify({ key, waitListed: listed, executions })}`);
    };

    const sample = async (): Promise<{ fromRelease: number; fromGate: number; reparked: boolean }> => {
      const holding = deferred<number>('the holder step start');
      const release = deferred<number>('the holder release');
      const holderDone = deferred<void>('the holder completion');
      let openGate!: () => void;
      hooks.holder = { started: holding.resolve, gate: new Promise<void>((resolve) => (openGate = resolve)) };
      const h = await engine.start(holder, {});
      if (h.status !== 'queued') throw new Error(`P5: holder start returned ${h.status}`);
      released.set(h.executionId, release.resolve);
      completed.set(h.executionId, () => holderDone.resolve());
      await holding.promise.catch((error: unknown) => stalled(error, [h.executionId]));
      const w = await parkWaiter();
      const gateAt = performance.now();
      openGate();
      const [releasedAt, startedAt] = await Promise.all([release.promise, w.stepStart]).catch((error: unknown) =>
        stalled(error, [h.executionId, w.id]),
      );
      await Promise.all([holderDone.promise, w.done]).catch((error: unknown) => stalled(error, [h.executionId, w.id]));
      hooks.holder = undefined;
      for (const id of [h.executionId, w.id]) {
        hooks.stepStarted.delete(id);
        released.delete(id);
        parked.delete(id);
        completed.delete(id);
      }
      const reparked = (parks.get(w.id) ?? 0) > 1;
      parks.delete(w.id);
      return { fromRelease: startedAt - releasedAt, fromGate: startedAt - gateAt, reparked };
    };

    for (let i = 0; i < WARMUP; i++) await sample();
    const fromRelease: number[] = [];
    const fromGate: number[] = [];
    let reparked = 0;
    for (let i = 0; i < SAMPLES; i++) {
      const s = await sample();
      fromRelease.push(s.fromRelease);
      fromGate.push(s.fromGate);
      if (s.reparked) reparked++;
    }
    const p50 = percentile(fromRelease, 50);
    const p99 = percentile(fromRelease, 99);
    emit({
      bench,
      figure: 'release_to_step_start_ms',
      samples: SAMPLES,
      p50: round(p50, 3),
      p90: round(percentile(fromRelease, 90), 3),
      p99: round(p99, 3),
      max: round(Math.max(...fromRelease), 3),
      min: round(Math.min(...fromRelease), 3),
      reparked,
    });
    emit({
      bench,
      figure: 'gate_to_step_start_ms',
      note: 'includes the holder step completion, its checkpoint and the release script',
      p50: round(percentile(fromGate, 50), 3),
      p99: round(percentile(fromGate, 99), 3),
    });

    // Anchor: no wake — the waiter parks on the runtime that hears of no release; only its fallback job resumes it.
    const fallback: number[] = [];
    for (let i = 0; i < FALLBACK_SAMPLES; i++) {
      const owner = `p5-direct-${i}`;
      const held = await coordinator.lockAcquire({
        key: KEY,
        holder: { owner, executionId: owner, reactor: 'p5-direct' },
        ttlMs: 60_000,
      });
      if (!held.acquired) throw new Error('P5: the direct hold was refused');
      const w = await parkWaiter(setup.unnotified.engine);
      const parkedAt = performance.now();
      await coordinator.lockRelease(KEY, owner);
      const releasedAt = performance.now();
      const startedAt = await w.stepStart;
      // Its fallback job is due PARK_FALLBACK_MS after the park: a start well before that was a wake-up, not the fallback.
      if (startedAt - parkedAt < 0.9 * PARK_FALLBACK_MS)
        throw new Error(
          `P5: the no-wake waiter started ${round(startedAt - parkedAt, 1)} ms after parking: it was woken`,
        );
      fallback.push(startedAt - releasedAt);
      await w.done;
    }
    emit({
      bench,
      figure: 'no_wake_fallback_ms',
      note: 'the waiter parked on a runtime without wake-ups (no wait list, no notifications): only its fallback job resumes it',
      samples: fallback.map((v) => round(v, 1)),
      park_fallback_ms: PARK_FALLBACK_MS,
    });

    return {
      bench,
      metric: 'release_to_parked_step_start_p50_ms',
      value: round(p50, 3),
      target: `p50 <= ${TARGET_P50_MS} ms, p99 <= ${TARGET_P99_MS} ms`,
      anchor: {
        reference_snooze_ms: REFERENCE_SNOOZE_MS,
        reference_jitter_ms: `0-${REFERENCE_JITTER_MS}`,
        no_wake_fallback_ms: round(fallback.reduce((a, b) => a + b, 0) / fallback.length, 1),
        park_fallback_ms: PARK_FALLBACK_MS,
        samples: SAMPLES,
      },
      p99_ms: round(p99, 3),
      pass: p50 <= TARGET_P50_MS && p99 <= TARGET_P99_MS,
    } as Verdict;
  } finally {
    await setup.close();
  }
}
