/**
 * The engine: runs reactors in this process over the ports it is given (the embedded memory
 * backend by default).
 *
 * @module
 */
import type { Logger } from '../dsl/context.js';
import { validateContract } from '../dsl/contract.js';
import type { AnyReactorDefinition, InputOf, OutputOf, StepsOf } from '../dsl/definition.js';
import { compileWindows, type RateWindowOptions } from '../dsl/coordination.js';
import { ErrorCode, ExecutionNotFoundError, ReactorError, RecordTooLargeError } from '../errors.js';
import { EventHub, type EventListener, type Middleware } from './model/events.js';
import { silentLogger } from './model/logger.js';
import { createInstrument } from './model/instrument.js';
import { eventLogger } from './model/event-logger.js';
import { randomIds, systemClock, type Clock, type Ids } from './ports/clock.js';
import {
  handOffToWorker,
  processJob,
  startBackground,
  wake,
  type BackgroundDeps,
  type BackgroundOptions,
} from './jobs/background.js';
import { admitWork, execute, fromRecord, invalidInput, type CoordinationDeps } from './execution/execute.js';
import { cancelExecution, retrySource, undoExecution, type OperationsDeps } from './execution/operations.js';
import type { Coordinator } from './ports/coordinator.js';
import type { ExecutionJob, JobDelivery, JobQueue, WaitList } from './ports/queue.js';
import type { FanOutLedger } from './ports/fanout.js';
import type { JobLeases } from './ports/job-lease.js';
import { composeJobLeases } from './jobs/job-lease.js';
import {
  RECORD_VERSION,
  type ExecutionRecord,
  type ExecutionStatus,
  type Store,
  type TraceContext,
} from './ports/store.js';
import { registerTree } from './model/async/registry.js';
import { wakeReaders } from './jobs/async/park.js';
import { asyncBackground } from './jobs/async-port.js';
import { UnitSignals, type AsyncPort } from './run/async/port.js';
import type { RunResult } from './model/results.js';
import type { StepInvoker } from '../dsl/step.js';
import { invokeStep } from './run/invoke.js';
import { RunState, type Admit, type JobBinding } from './run/run-state.js';
import { hasInterruptClaims } from './ports/interrupt-claims.js';
import { resumeExecution, type ResumeDeps } from './api/interrupt/resume.js';
import { linkRetry } from './api/retry-link.js';
import { CancelTargets } from './execution/cancels.js';
import { createSweeper, type SweepReport } from './jobs/sweep.js';
import { InlineLease, markUnleased, type InlineLeaseDeps } from './execution/inline-lease.js';

/** Options of {@link createEngine}. */
export interface EngineOptions {
  /** Where execution records live. Required: pass `new MemoryStore()` for the embedded default. */
  readonly store: Store;
  /** Where coordination state lives. Required when a reactor declares coordination. */
  readonly coordinator?: Coordinator;
  /** Named rate limits, shared by every reactor that declares `withRateLimit({ name })`. */
  readonly rateLimits?: Readonly<Record<string, readonly RateWindowOptions[]>>;
  /** Where background jobs go (BullMQ from `ts-reactor/bullmq`, or the embedded queue). */
  readonly queue?: JobQueue;
  /** Wait lists of parked executions (wake-on-release). */
  readonly waitList?: WaitList;
  /** Ledgers of fan-out maps (`map(..., { fanOut })` in workers); the embedded engine and `createRedisRuntime` pass one. */
  readonly fanOut?: FanOutLedger;
  /**
   * A worker's liveness lease together with its record read and its terminal write, in one
   * round trip each (`createRedisRuntime` passes the Redis backend's). It must take and release
   * the `coordinator`'s locks. Default: composed from `store` and `coordinator` calls.
   */
  readonly jobLeases?: JobLeases;
  /** Background-execution tunables. */
  readonly background?: BackgroundOptions;
  /** Reactors this engine can process jobs for (reactors started through it register themselves). */
  readonly reactors?: readonly AnyReactorDefinition[];
  readonly clock?: Clock;
  readonly ids?: Ids;
  /** Steps of one run running at once, unless the reactor says otherwise. Default 8. */
  readonly maxConcurrency?: number;
  /** Subscribers to the event stream. */
  readonly middleware?: readonly Middleware[];
  /** A pino-compatible logger. Default: silent. */
  readonly logger?: Logger;
  /**
   * With a `logger`: also log every event as a structured line (`event`, `executionId`,
   * `reactor`, `step`, `key` …; levels in docs/observability.md). Default true; false keeps
   * only the engine's own warnings and errors.
   */
  readonly logEvents?: boolean;
  /**
   * Intermediate checkpoints (after a step) are written at most this often; the run's start,
   * parks, yields and its end are always written. 0 writes after every step. Default 100 ms.
   * A worker that dies loses at most this much progress: those steps run again (at-least-once).
   */
  readonly checkpointIntervalMs?: number;
  /**
   * Resolves once this process's background pool has no job ready or running, or the clock
   * reached `until`. An in-process reader of an async unit awaits it (until its deadline) before
   * it lets the clock pass, so on a manual clock virtual time moves only while the pool waits
   * too (`createTestEngine` passes its pool's).
   */
  readonly backgroundSettled?: (until: number) => Promise<void>;
}

/** Options the engine passes itself (a retry links the new execution to the old one). */
interface Internal {
  readonly retryOf?: string;
  /** The retried execution's trace: the new execution's first span links to it. */
  readonly retryTrace?: TraceContext;
}

/** A run that passed validation and, with a key, won its idempotency claim. */
interface Accepted {
  readonly executionId: string;
  readonly input: Record<string, unknown>;
  readonly key: string | undefined;
  readonly retryOf: string | undefined;
  /** Span links of the new execution (a retry: the retried execution's trace). */
  readonly links: readonly TraceContext[] | undefined;
}

/** Options of one run. */
export interface RunOptions {
  /** At most one execution per reactor and key; a repeat returns the original result (`replay: true`). */
  readonly idempotencyKey?: string;
}

/** Runs reactors. */
export interface Engine {
  /**
   * Runs a reactor in this process and returns its result. Outcomes are returned, never thrown.
   *
   * @example
   * ```ts
   * const result = await engine.run(checkout, { orderId: 'o-1', amount: 42 });
   * if (result.status === 'completed') console.log(result.value);
   * ```
   */
  run<R extends AnyReactorDefinition>(
    reactor: R,
    input: InputOf<R>,
    options?: RunOptions,
  ): Promise<RunResult<OutputOf<R>, StepsOf<R>>>;
  /**
   * Accepts a run for background execution: validates the input, persists a pending record and
   * enqueues its first job. Resolves at once with `queued` (or `failed` for an invalid input).
   */
  start<R extends AnyReactorDefinition>(
    reactor: R,
    input: InputOf<R>,
    options?: RunOptions,
  ): Promise<RunResult<OutputOf<R>, StepsOf<R>>>;
  /** Processes one job (what a worker calls). A malformed payload must be rejected before (see `ts-reactor/bullmq`). */
  process(job: ExecutionJob, delivery: JobDelivery): Promise<void>;
  /** The current result of an execution from its record (`queued`, `parked`, `running` or terminal); undefined when unknown. */
  result(executionId: string): Promise<RunResult | undefined>;
  /**
   * Polls the record until the execution is terminal or paused (or `timeoutMs` passes, then
   * returns the current state). Rejects with {@link ExecutionNotFoundError}
   * (`execution_not_found`) as soon as a poll finds no record: the id was never started, its
   * record expired, or a Redis without persistence lost it in a restart. ({@link Engine.result}
   * answers `undefined` in that case instead.)
   *
   * @example
   * ```ts
   * const queued = await engine.start(checkout, { orderId: 'o-1' });
   * const done = await engine.wait(queued.executionId, { timeoutMs: 10_000 });
   * ```
   */
  wait(executionId: string, options?: { readonly timeoutMs?: number; readonly pollMs?: number }): Promise<RunResult>;
  /**
   * Cancels an execution that has not finished: queued or parked ones are rolled back at once;
   * one running inline here stops at its next step boundary and rolls back; one running in
   * another worker gets a cancel request it acts on at its next liveness check (see `wait`).
   */
  cancel(executionId: string, options?: { readonly reason?: string }): Promise<RunResult>;
  /** Undoes a completed execution on demand (every undo, newest first); it ends `cancelled`. */
  undo(executionId: string, options?: { readonly reason?: string }): Promise<RunResult>;
  /** Runs a failed, halted, cancelled or aborted execution again as a new execution linked to it (`retryOf`), in the background when a queue is configured. */
  retry(executionId: string): Promise<RunResult>;
  /**
   * Resumes an execution paused at an interrupt, by execution id or by the interrupt's
   * correlation id, with a payload validated against the interrupt's schema. It continues in
   * this process (and resolves with its outcome), or in a worker (`queued`) when the interrupt
   * says `resume: 'background'` or the reactor's own lock / semaphore is busy. Refusals throw:
   * `ResumePayloadError` (invalid payload, counted toward `maxAttempts`), `ResumeRefusedError`
   * (already resumed, not paused, unknown correlation id), `InterruptTimeoutError`.
   *
   * @example
   * ```ts
   * const result = await engine.resume({ correlationId: 'order:o-1' }, { approved: true });
   * ```
   */
  resume(
    target: string | { readonly correlationId: string },
    payload: unknown,
    options?: { readonly step?: string },
  ): Promise<RunResult>;
  /** Adds reactors this engine can process jobs for. */
  register(...reactors: readonly AnyReactorDefinition[]): void;
  /** Subscribes to every event of every run; returns the unsubscribe function. */
  subscribe(listener: EventListener): () => void;
  /**
   * Resolves once the work this engine started without awaiting it has settled: the wake-ups of
   * parked executions after a release, and of an async unit's readers after its end. Call it
   * after stopping workers and before closing connections (`createRedisRuntime().close()` does).
   */
  idle(): Promise<void>;
  /**
   * Runs one recovery sweep now (workers run one on a timer, every `background.sweepIntervalMs`):
   * executions no lease and no job carry any more are re-enqueued, and inline runs whose process
   * stopped are resumed on a worker or ended `aborted` (docs/background.md, "Recovery"). One
   * worker at a time sweeps, about once per interval: `ran` is false when the sweep lock is held
   * (a sweep in progress, or one that began less than 0.8 × the interval ago, in any worker), or
   * when this engine has no queue or coordinator.
   */
  sweep(): Promise<SweepReport>;
  /**
   * Starts this engine's sweep timer (`createWorker` does, for every worker); the returned
   * function stops it. Any number of workers of one engine share one timer.
   */
  startSweeps(): () => void;
  /** The store this engine writes to. */
  readonly store: Store;
  /** Runs a step definition directly, coordinated (see `StepDefinition.invoke`). */
  invokeStep: StepInvoker['invokeStep'];
}

/** Creates an engine. */
export function createEngine(options: EngineOptions): Engine {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;
  const logger = options.logger ?? silentLogger;
  const logged = options.logger !== undefined && options.logEvents !== false ? [eventLogger(logger)] : [];
  const hub = new EventHub([...(options.middleware ?? []), ...logged], logger);
  const instrument = createInstrument(options.middleware ?? [], logger);
  const maxConcurrency = options.maxConcurrency ?? 8;
  const inflight = new Map<string, { readonly abort: AbortController; readonly done: Promise<RunResult> }>();
  // Cancels announced by other processes reach this engine's inline runs and worker jobs (decision 053).
  const cancels = new CancelTargets(options.coordinator, {
    get: (executionId) => inflight.get(executionId)?.abort,
    ids: () => inflight.keys(),
  });
  const deps = {
    store: options.store,
    clock,
    hub,
    logger,
    maxConcurrency,
    checkpointIntervalMs: options.checkpointIntervalMs ?? 100,
    queue: options.queue,
    instrument,
  };
  const rateLimits = new Map(
    Object.entries(options.rateLimits ?? {}).map(([name, windows]) => [
      name,
      compileWindows({ reactor: `(rate limit ${name})` }, windows),
    ]),
  );
  // Every entry goes through registerTree, so a reactor found here has its asyncReactor children registered too.
  const registry = new Map<string, AnyReactorDefinition>();
  for (const r of options.reactors ?? []) registerTree(registry, r);
  const newState = (init: Parameters<BackgroundDeps['newState']>[0]): RunState => {
    let state: RunState | undefined = undefined;
    const admitFn: Admit = (specs, args, where) => admitWork(state!, coordination, specs, args, where);
    // Object.assign, not a spread of two objects: the spread built a slow dictionary-mode object per run (docs/decisions/030).
    state = new RunState(Object.assign({ admit: admitFn, async: asyncPort, onSettled }, deps, init));
    // A state of an execution whose job runs here writes under that job's lease (decision 064).
    const job = init.mode === 'worker' && liveJobs.size > 0 ? liveJobs.get(init.executionId) : undefined;
    if (job) state.bindJob(job);
    return state;
  };
  const liveJobs = new Map<string, JobBinding>();
  // Work this engine starts without awaiting it (wake-ups after a release or a unit's end): `idle()` waits for it,
  // so a runtime closes its connections only after the last of it (docs/decisions/048).
  const detached = new Set<Promise<void>>();
  const detach = (work: Promise<void>, onError: (error: unknown) => void): void => {
    const tracked: Promise<void> = work
      .catch((error: unknown) => {
        try {
          onError(error);
        } catch {
          // a throwing logger must not turn into an unobserved rejection
        }
      })
      .finally(() => detached.delete(tracked));
    detached.add(tracked);
  };
  const idle = async (): Promise<void> => {
    while (detached.size > 0) await Promise.all([...detached]);
  };
  const wakeOnRelease = (primitive: 'lock' | 'semaphore' | 'ordered_lock', key: string): void => {
    if (background)
      detach(wake(background, primitive, key), (error) =>
        logger.warn({ err: error, key }, 'wake-on-release failed; the fallback timer resumes the waiter'),
      );
  };
  const coordination: CoordinationDeps = {
    coordinator: options.coordinator,
    rateLimits,
    onReleased: wakeOnRelease,
    workerWaitMs: options.background?.workerWaitMs ?? 250,
  };
  // A key the coordinator freed on its own (a cross-process grant nobody here could take, decision 059) wakes like a release.
  options.coordinator?.onFreed?.(wakeOnRelease);
  const jobLeases =
    options.jobLeases ?? (options.coordinator ? composeJobLeases(options.store, options.coordinator) : undefined);
  const livenessTtlMs = options.background?.livenessTtlMs ?? 30_000;
  // The worker id (an engine with a queue takes it from `ids`, as always; without one nothing reads `ids` here).
  const engineId = options.queue ? ids.executionId() : crypto.randomUUID().slice(0, 18);
  const background: BackgroundDeps | undefined = options.queue
    ? {
        store: options.store,
        queue: options.queue,
        waitList: options.waitList,
        clock,
        coordination,
        cancels,
        workerId: engineId,
        fanOut: options.fanOut,
        jobLeases,
        newState,
        liveJobs,
        instrument,
        options: {
          contentionCap: 100,
          parkFallbackMs: 5_000,
          livenessTtlMs: 30_000,
          livenessWaitMs: 1_000,
          workerWaitMs: 250,
          asyncWaitMs: 30_000,
          asyncParkTimeoutMs: 3_600_000,
          sweepIntervalMs: options.coordinator?.processLocal === true ? 0 : 2 * livenessTtlMs,
          ...options.background,
        },
      }
    : undefined;
  // The recovery sweep (decision 066): only an engine that can enqueue and take liveness leases sweeps.
  const sweeper =
    background && options.coordinator && jobLeases
      ? createSweeper({
          store: options.store,
          queue: background.queue,
          coordinator: options.coordinator,
          jobLeases,
          clock,
          hub,
          logger,
          workerId: engineId,
          registry,
          livenessTtlMs: background.options.livenessTtlMs,
          intervalMs: background.options.sweepIntervalMs,
          alive: (executionId) => inflight.has(executionId),
        })
      : undefined;
  const inlineLeases: InlineLeaseDeps | undefined =
    options.coordinator && options.coordinator.processLocal !== true && options.store.processLocal !== true && jobLeases
      ? { coordinator: options.coordinator, leases: jobLeases, clock, ttlMs: livenessTtlMs, engineId, logger }
      : undefined;
  const signals = new UnitSignals();
  const asyncPort: AsyncPort = {
    background: background ? asyncBackground(background) : undefined,
    signals,
    waitMs: options.background?.asyncWaitMs ?? 30_000,
    parkTimeoutMs: options.background?.asyncParkTimeoutMs ?? 3_600_000,
    workerWaitMs: options.background?.workerWaitMs ?? 250,
    settled: options.backgroundSettled,
    register: (reactor) => registerTree(registry, reactor),
  };
  // A unit's or child's terminal record wakes its readers: here at once, elsewhere through the wait list.
  const onSettled = (record: ExecutionRecord): void => {
    if (record.parentId === undefined || record.element !== undefined) return; // fan-out elements have no readers
    signals.notify(record.id);
    if (background)
      detach(wakeReaders(background, record.id), (error) =>
        logger.warn(
          { err: error, unitId: record.id },
          'waking the readers of an async unit failed; their fallback job resumes them',
        ),
      );
  };
  const needQueue = (): BackgroundDeps =>
    background ??
    (() => {
      throw new ReactorError(
        'queue_missing',
        'background execution needs a queue: createEngine({ queue }) or createEmbeddedEngine()',
      );
    })();

  /**
   * Outcomes of idempotency claims in progress, by the claiming execution's id. An entry is
   * registered *before* its claim is sent, so a concurrent caller whose claim names that
   * execution always finds it, whatever the interleaving of awaits (docs/decisions/047).
   */
  const claiming = new Map<string, Promise<RunResult>>();

  /**
   * The prefix `run` and `start` share: registers the reactor, validates the input, claims the
   * idempotency key (a repeat answers as a replay), then runs `body` with the accepted execution.
   * A won claim also writes the execution's first record, with status `first` (decision 056).
   */
  const accept = async (
    reactor: AnyReactorDefinition,
    input: unknown,
    runOptions: RunOptions & Internal,
    first: ClaimStatus,
    body: (accepted: Accepted) => Promise<RunResult>,
  ): Promise<RunResult> => {
    registerTree(registry, reactor);
    const executionId = ids.executionId();
    const validated = await validateContract(reactor.contract, input ?? {});
    if (!validated.ok) return invalidInput(reactor, executionId, validated.issues);
    const key = runOptions.idempotencyKey;
    const accepted: Accepted = {
      executionId,
      input: validated.value,
      key,
      retryOf: runOptions.retryOf,
      links: runOptions.retryTrace === undefined ? undefined : [runOptions.retryTrace],
    };
    if (key === undefined) return body(accepted);
    let settle!: (outcome: Promise<RunResult>) => void;
    const outcome = new Promise<RunResult>((resolve) => (settle = resolve));
    outcome.catch(() => undefined); // a replay awaits it; without one, a failed body must not be an unobserved rejection
    claiming.set(executionId, outcome);
    try {
      const claim = await options.store
        .claimIdempotency(reactor.name, key, executionId, claimRecord(accepted, reactor.name, first, clock.now()))
        .catch((error: unknown) => {
          settle(Promise.reject(error)); // a replay that learnt this id (a reply lost after the claim) ends the same way
          if (error instanceof RecordTooLargeError) return error; // refused before claiming: an outcome, like a run without a key
          throw error;
        });
      if (claim instanceof RecordTooLargeError) return unstorable(reactor, executionId, claim);
      if (!claim.claimed) return await replay(claim.executionId);
      const result = body(accepted);
      settle(result);
      return await result;
    } finally {
      claiming.delete(executionId);
    }
  };

  const run = (
    reactor: AnyReactorDefinition,
    input: unknown,
    runOptions: RunOptions & Internal = {},
  ): Promise<RunResult> =>
    accept(
      reactor,
      input,
      runOptions,
      reactor.background === 'all' ? 'pending' : 'running',
      async ({ executionId, input: valid, key, retryOf, links }) => {
        if (reactor.background === 'all')
          return startBackground(needQueue(), reactor, executionId, valid, key, retryOf, links);
        const state = newState({
          executionId,
          rootExecutionId: executionId,
          reactor: reactor.name,
          contract: reactor.contract,
          input: valid,
          idempotencyKey: key,
          retryOf,
        });
        const abort = new AbortController();
        const handOff = reactor.background === undefined ? undefined : (s: RunState) => handOffToWorker(needQueue(), s);
        const scope = {
          kind: 'run',
          mode: 'inline',
          executionId,
          rootExecutionId: executionId,
          reactor: reactor.name,
          ...(links === undefined ? {} : { links }),
        } as const;
        const go = (): Promise<RunResult> =>
          instrument.traced(scope, (traceContext) => {
            if (traceContext) state.traceContext = traceContext;
            return execute(state, reactor, abort, handOff);
          });
        // With a store and a coordinator other processes share, the run holds its liveness lease (decision 066);
        // on a shared store without that, its records say it is unleased (no sweep takes it for a worker's).
        const promise = inlineLeases
          ? runLeased(inlineLeases, state, abort, go)
          : options.store.processLocal === true
            ? go()
            : (markUnleased(state, (record) => options.store.save(record)), go());
        inflight.set(executionId, { abort, done: promise });
        cancels.listen();
        try {
          return await promise;
        } finally {
          inflight.delete(executionId);
        }
      },
    );

  /**
   * The original execution's result for a repeated key: awaited while its claim is settling here,
   * else rebuilt from its record (the one its claim wrote, or a later one: decision 056).
   */
  const replay = async (executionId: string): Promise<RunResult> => {
    const live = claiming.get(executionId) ?? inflight.get(executionId)?.done;
    if (live) return { ...(await live), replay: true };
    const record = await options.store.get(executionId);
    if (!record)
      throw new ReactorError(
        ErrorCode.RecordNotFound,
        `idempotency key points at execution ${executionId}, whose record is gone (expired, deleted, or not written with the claim by this store)`,
        { details: { executionId } },
      );
    return fromRecord(record);
  };

  const start = async (
    reactor: AnyReactorDefinition,
    input: unknown,
    runOptions: RunOptions & Internal = {},
  ): Promise<RunResult> => {
    const deps = needQueue();
    return accept(reactor, input, runOptions, 'pending', ({ executionId, input: valid, key, retryOf, links }) =>
      startBackground(deps, reactor, executionId, valid, key, retryOf, links),
    );
  };

  const processOne = async (job: ExecutionJob, delivery: JobDelivery): Promise<void> => {
    const reactor = registry.get(job.reactor);
    if (!reactor)
      throw new ReactorError(
        'reactor_unknown',
        `no reactor named "${job.reactor}" is registered with this worker; pass it in createWorker({ reactors })`,
        { details: { reactor: job.reactor } },
      );
    await processJob(needQueue(), reactor, job, delivery);
  };

  const result = async (executionId: string): Promise<RunResult | undefined> => {
    const record = await options.store.get(executionId);
    return record ? { ...fromRecord(record), replay: false } : undefined;
  };

  const wait = async (
    executionId: string,
    waitOptions: { readonly timeoutMs?: number; readonly pollMs?: number } = {},
  ): Promise<RunResult> => {
    const deadline = clock.now() + (waitOptions.timeoutMs ?? 30_000);
    for (;;) {
      const current = await result(executionId);
      // No record: nothing will ever write one (never started, expired, or lost with a store that does not persist).
      if (!current) throw new ExecutionNotFoundError(executionId);
      if (['completed', 'failed', 'halted', 'cancelled', 'paused'].includes(current.status) || clock.now() >= deadline)
        return current;
      await clock.sleep(waitOptions.pollMs ?? 20);
    }
  };

  const ops: OperationsDeps = {
    store: options.store,
    coordination,
    waitList: options.waitList,
    queue: options.queue,
    registry,
    live: inflight,
    newState,
    fanOut: options.fanOut,
    instrument,
  };
  const retry = async (executionId: string): Promise<RunResult> => {
    const source = await retrySource(ops, executionId);
    const retried = await (background ? start : run)(source.reactor, source.input, {
      retryOf: executionId,
      ...(source.traceContext === undefined ? {} : { retryTrace: source.traceContext }),
    });
    await linkRetry({ store: options.store, hub, clock, logger }, executionId, retried.executionId);
    return retried;
  };

  const resumeDeps: ResumeDeps = {
    ...ops,
    clock,
    hub,
    live: inflight,
    claims: hasInterruptClaims(options.store) ? options.store : undefined,
  };
  return {
    resume: (target, payload, o = {}) => resumeExecution(resumeDeps, target, payload, o),
    run: run as Engine['run'],
    cancel: (id, o = {}) => cancelExecution(ops, id, o.reason ?? 'cancelled by an operator'),
    undo: (id, o = {}) => undoExecution(ops, id, o.reason ?? 'undone by an operator'),
    retry,
    start: start as Engine['start'],
    process: processOne,
    result,
    wait,
    register: (...reactors) => reactors.forEach((r) => registerTree(registry, r)),
    subscribe: (listener) => hub.subscribe(listener),
    idle,
    sweep: () =>
      sweeper?.sweep() ??
      Promise.resolve({
        ran: false,
        startedAt: clock.now(),
        finishedAt: clock.now(),
        checked: 0,
        requeued: 0,
        aborted: 0,
      }),
    startSweeps: () =>
      sweeper?.start((work) => detach(work, (error) => logger.warn({ err: error }, 'recovery sweep failed'))) ??
      (() => undefined),
    store: options.store,
    invokeStep: (step, args, o = {}) =>
      invokeStep(
        { coordinator: options.coordinator, rateLimits, onReleased: wakeOnRelease, clock, ids, hub, logger },
        step,
        args,
        o.ctx,
      ),
  };
}

/**
 * Runs an inline execution under its liveness lease (decision 066): taken before its first record
 * write, renewed while it runs, released by its terminal write or at its end. A lost lease stops
 * the run (its signal is aborted, nothing more is written); without a lease it runs marked unleased.
 */
async function runLeased(
  deps: InlineLeaseDeps,
  state: RunState,
  abort: AbortController,
  go: () => Promise<RunResult>,
): Promise<RunResult> {
  const lease = await InlineLease.take(deps, state.executionId);
  if (!lease) {
    markUnleased(state, (record) => state.store.save(record));
    return go();
  }
  lease.bind(state);
  const relay = (): void => abort.abort(lease.root.signal.reason);
  lease.root.signal.addEventListener('abort', relay, { once: true });
  try {
    return await go();
  } finally {
    lease.root.signal.removeEventListener('abort', relay);
    await lease.end();
  }
}

/** The status an execution's first record has: an inline run's `running`, a background start's `pending`. */
type ClaimStatus = Extract<ExecutionStatus, 'running' | 'pending'>;

/**
 * The record a won idempotency claim writes with the claim (decision 056): what a replay in
 * another engine reads until the execution's own first save replaces it.
 */
function claimRecord(accepted: Accepted, reactor: string, status: ClaimStatus, now: number): ExecutionRecord {
  const { executionId: id, input, key, retryOf } = accepted;
  return {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor,
    status,
    input,
    steps: {},
    rollbackFailures: [],
    ...(key === undefined ? {} : { idempotencyKey: key }),
    ...(retryOf === undefined ? {} : { retryOf }),
    createdAt: now,
    updatedAt: now,
  };
}

/** The result of a run whose first record is over the store's size limit: refused before its key was claimed (nothing persisted). */
function unstorable(reactor: AnyReactorDefinition, executionId: string, error: RecordTooLargeError): RunResult {
  return {
    status: 'failed',
    executionId,
    reactor: reactor.name,
    error,
    failedStep: undefined,
    validationErrors: [],
    trace: [],
    steps: {},
    rollbackFailures: [],
    replay: false,
  };
}

export { fromRecord } from './execution/execute.js';
