/**
 * Builders of the dependency bags `createEngine` wires together: each takes the engine's options
 * and the collaborators built before it, and applies the options' defaults. They build and start
 * nothing (the one side effect of wiring, the coordinator's `onFreed` hook, stays in `createEngine`).
 *
 * @module
 */
import { compileWindows } from '../../dsl/coordination.js';
import type { CancelTargets, InlineRuns } from '../execution/cancels.js';
import type { CoordinationDeps } from '../execution/execute.js';
import type { InlineLeaseDeps } from '../execution/inline-lease.js';
import type { OperationsDeps } from '../execution/operations.js';
import type { StateBase, StateFactory } from '../execution/state-factory.js';
import type { BackgroundDeps } from '../jobs/deps.js';
import { DetachedWork } from '../jobs/detached-work.js';
import { composeJobLeases } from '../jobs/job-lease.js';
import { createSweeper, type Sweeper } from '../jobs/sweep.js';
import { eventLogger } from '../model/event-logger.js';
import { EventHub } from '../model/events.js';
import { createInstrument } from '../model/instrument.js';
import { StreamPublisher } from '../model/stream-publisher.js';
import { silentLogger } from '../model/logger.js';
import { traceBoundOf } from '../model/trace-bound.js';
import { randomIds, systemClock, type Ids } from '../../ports/clock.js';
import type { JobLeases } from '../../ports/job-lease.js';
import type { InvokeDeps } from '../run/invoke.js';
import type { ResumeDeps } from './interrupt/resume.js';
import type { DeliverDeps } from '../execution/event-wait/deliver.js';
import type { EngineCore, InlineRunMap } from './parts.js';
import { ReactorRegistry } from './registry.js';
import type { EngineOptions } from './types.js';

/** This engine as a worker: its id (the owner of the leases it takes) and its job leases, if it has any. */
export interface WorkerParts {
  readonly workerId: string;
  readonly jobLeases: JobLeases | undefined;
}

/**
 * The engine's basics: clock, ids and logger (system clock, random ids, silent by default), the
 * event hub (the middleware, then — with a `logger`, unless `logEvents: false` — the event
 * logger), the instrument, the reactor registry, the empty tables of inline runs and detached work,
 * and the trace bound (default 1,000).
 *
 * @throws RangeError when `maxTraceEntries` is not an integer >= 10.
 */
export function engineCore(options: EngineOptions): EngineCore {
  const maxTraceEntries = traceBoundOf(options.maxTraceEntries); // first: a bad option builds nothing
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;
  const logger = options.logger ?? silentLogger;
  const logged = options.logger !== undefined && options.logEvents !== false ? [eventLogger(logger)] : [];
  const hub = new EventHub([...(options.middleware ?? []), ...logged], logger);
  const instrument = createInstrument(options.middleware ?? [], logger);
  const registry = new ReactorRegistry(options.reactors);
  const inflight: InlineRunMap = new Map();
  const stream = options.executionStream;
  const publisher = stream === undefined ? undefined : new StreamPublisher(stream, logger);
  if (publisher !== undefined) hub.subscribe(publisher.publish);
  return {
    stream,
    publisher,
    store: options.store,
    clock,
    ids,
    logger,
    hub,
    instrument,
    registry,
    inflight,
    detached: new DetachedWork(),
    maxTraceEntries,
  };
}

/** The inline runs a cancel announcement can reach: their root controllers, by execution id. */
export function inlineTargets(inflight: InlineRunMap): InlineRuns {
  return { get: (executionId) => inflight.get(executionId)?.abort, ids: () => inflight.keys() };
}

/** The engine's id: a worker id from `ids` with a queue (as always); without one nothing reads `ids` here. */
export function engineIdOf(options: EngineOptions, ids: Ids): string {
  return options.queue ? ids.executionId() : crypto.randomUUID().slice(0, 18);
}

/** What every run state of the engine shares (defaults: 8 steps at once, a checkpoint per 100 ms at most). */
export function stateBase(
  options: EngineOptions,
  core: EngineCore,
  workerId: string,
  onEventWaitsParked?: (executionId: string) => void,
): StateBase {
  const { clock, hub, logger, instrument } = core;
  const maxConcurrency = options.maxConcurrency ?? 8;
  const checkpointIntervalMs = options.checkpointIntervalMs ?? 100;
  const maxInlineSleepMs = options.maxInlineSleepMs ?? 5_000;
  if (typeof maxInlineSleepMs !== 'number' || Number.isNaN(maxInlineSleepMs) || maxInlineSleepMs < 0)
    throw new RangeError(`maxInlineSleepMs must be a number >= 0 (got ${String(maxInlineSleepMs)})`);
  return {
    maxInlineSleepMs,
    store: options.store,
    interruptClaims: options.interruptClaims,
    eventWaits: options.eventWaits,
    onEventWaitsParked,
    clock,
    hub,
    logger,
    maxConcurrency,
    checkpointIntervalMs,
    maxTraceEntries: core.maxTraceEntries,
    queue: options.queue,
    instrument,
    worker: `${options.workerName ?? 'local'}/${workerId.slice(-8)}`, // how attempt records name this engine (decision 098)
    published: core.publisher,
  };
}

/** What admissions need: the coordinator, the named rate limits compiled, the wake-on-release hook. */
export function coordinationDeps(
  options: EngineOptions,
  onReleased: NonNullable<CoordinationDeps['onReleased']>,
): CoordinationDeps {
  const rateLimits = new Map(
    Object.entries(options.rateLimits ?? {}).map(([name, windows]) => [
      name,
      compileWindows({ reactor: `(rate limit ${name})` }, windows),
    ]),
  );
  return {
    coordinator: options.coordinator,
    rateLimits,
    onReleased,
    workerWaitMs: options.background?.workerWaitMs ?? 250,
  };
}

/** The given job leases, or ones composed from the store and the coordinator (none without a coordinator). */
export function jobLeasesOf(options: EngineOptions): JobLeases | undefined {
  return options.jobLeases ?? (options.coordinator ? composeJobLeases(options.store, options.coordinator) : undefined);
}

/** The background path's deps, with the tunables' defaults; undefined without a queue. */
export function backgroundDeps(
  options: EngineOptions,
  core: EngineCore,
  parts: WorkerParts & {
    readonly coordination: CoordinationDeps;
    readonly cancels: CancelTargets;
    readonly states: StateFactory;
  },
): BackgroundDeps | undefined {
  if (!options.queue) return undefined;
  const livenessTtlMs = options.background?.livenessTtlMs ?? 30_000;
  return {
    store: options.store,
    queue: options.queue,
    waitList: options.waitList,
    clock: core.clock,
    coordination: parts.coordination,
    cancels: parts.cancels,
    workerId: parts.workerId,
    fanOut: options.fanOut,
    eventWaits: options.eventWaits,
    jobLeases: parts.jobLeases,
    newState: parts.states.newState,
    liveJobs: parts.states.liveJobs,
    instrument: core.instrument,
    versions: core.registry.byFingerprint,
    hub: core.hub,
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
  };
}

/** The recovery sweep (decision 066): only an engine that can enqueue and take liveness leases sweeps. */
export function sweeperOf(
  options: EngineOptions,
  core: EngineCore,
  parts: WorkerParts & { readonly background: BackgroundDeps | undefined },
): Sweeper | undefined {
  const { background, jobLeases } = parts;
  if (!background || !options.coordinator || !jobLeases) return undefined;
  return createSweeper({
    store: options.store,
    queue: background.queue,
    coordinator: options.coordinator,
    jobLeases,
    clock: core.clock,
    hub: core.hub,
    logger: core.logger,
    workerId: parts.workerId,
    registry: core.registry.byName,
    livenessTtlMs: background.options.livenessTtlMs,
    intervalMs: background.options.sweepIntervalMs,
    alive: (executionId) => core.inflight.has(executionId),
    maxTraceEntries: core.maxTraceEntries,
  });
}

/** Inline runs hold a liveness lease when store and coordinator are shared with other processes (decision 066). */
export function inlineLeasesOf(
  options: EngineOptions,
  core: EngineCore,
  parts: WorkerParts,
): InlineLeaseDeps | undefined {
  const { coordinator, store } = options;
  const leases = parts.jobLeases;
  if (!coordinator || coordinator.processLocal === true || store.processLocal === true || !leases) return undefined;
  const ttlMs = options.background?.livenessTtlMs ?? 30_000;
  return { coordinator, leases, clock: core.clock, ttlMs, engineId: parts.workerId, logger: core.logger };
}

/** What cancel, undo and retry need. */
export function operationsDeps(
  options: EngineOptions,
  core: EngineCore,
  parts: { readonly coordination: CoordinationDeps; readonly states: StateFactory },
): OperationsDeps {
  return {
    store: options.store,
    coordination: parts.coordination,
    waitList: options.waitList,
    queue: options.queue,
    registry: core.registry.byName,
    versions: core.registry.byFingerprint,
    live: core.inflight,
    newState: parts.states.newState,
    fanOut: options.fanOut,
    instrument: core.instrument,
  };
}

/** What resuming an interrupt needs: the operations' deps, and the interrupt claims the engine was given. */
export function resumeDeps(options: EngineOptions, core: EngineCore, operations: OperationsDeps): ResumeDeps {
  return {
    ...operations,
    clock: core.clock,
    hub: core.hub,
    live: core.inflight,
    claims: options.interruptClaims,
  };
}

/** What delivering sent events to waiting executions needs: the resume path, the index, the log, work that outlives a call. */
export function deliverDeps(options: EngineOptions, core: EngineCore, resume: ResumeDeps): DeliverDeps {
  return {
    ...resume,
    index: options.eventWaits,
    log: options.events,
    logger: core.logger,
    detach: (work) =>
      core.detached.detach(
        work.then(() => undefined),
        (error) => core.logger.warn({ error: String(error) }, 'an execution resumed by an event failed to continue'),
      ),
  };
}

/** What a direct step invocation (`StepDefinition.invoke`) needs. */
export function invokeDeps(coordination: CoordinationDeps, core: EngineCore): InvokeDeps {
  const { coordinator, rateLimits, onReleased } = coordination;
  const { clock, ids, hub, logger } = core;
  return { coordinator, rateLimits, onReleased, clock, ids, hub, logger };
}
